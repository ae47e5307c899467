package sse

import (
	"bytes"
	"errors"
	"io"
	"reflect"
	"strings"
	"testing"
	"testing/iotest"
)

type got struct {
	Type, Data, ID string
	HasData        bool
	Comments       int
}

func readAll(t *testing.T, r io.Reader) ([]got, string, error) {
	t.Helper()
	rd := NewReader(r)
	var out []got
	var raw strings.Builder
	for rd.Next() {
		ev := rd.Event()
		out = append(out, got{Type: ev.Type, Data: string(ev.Data), ID: ev.ID, HasData: ev.Data != nil, Comments: ev.Comments})
		raw.Write(ev.Raw)
	}
	return out, raw.String(), rd.Err()
}

func TestReader(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want []got
	}{
		{"data only", "data: {\"a\":1}\n\ndata: [DONE]\n\n", []got{{Data: `{"a":1}`, HasData: true}, {Data: "[DONE]", HasData: true}}},
		{"named events", "event: ping\ndata: {\"type\":\"ping\"}\n\n", []got{{Type: "ping", Data: `{"type":"ping"}`, HasData: true}}},
		{"crlf", "data: a\r\n\r\ndata: b\r\n\r\n", []got{{Data: "a", HasData: true}, {Data: "b", HasData: true}}},
		{"lone cr", "data: a\r\rdata: b\r\r", []got{{Data: "a", HasData: true}, {Data: "b", HasData: true}}},
		{"no space after colon", "data:x\n\n", []got{{Data: "x", HasData: true}}},
		{"multi-line data", "data: a\ndata: b\n\n", []got{{Data: "a\nb", HasData: true}}},
		{"comment block", ": keep-alive\n\ndata: x\n\n", []got{{Comments: 1}, {Data: "x", HasData: true}}},
		{"blank lines before body", "\n\n{\"a\":1}", []got{{}, {}, {}}},
		{"eof without blank line", "data: last", []got{{Data: "last", HasData: true}}},
		{"empty data field", "data:\n\n", []got{{Data: "", HasData: true}}},
		{"id and retry", "id: 7\nretry: 100\ndata: x\n\n", []got{{ID: "7", Data: "x", HasData: true}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, split := range []bool{false, true} {
				var r io.Reader = strings.NewReader(tt.in)
				if split {
					r = iotest.OneByteReader(r)
				}
				evs, raw, err := readAll(t, r)
				if err != nil {
					t.Fatalf("split=%v: err %v", split, err)
				}
				if tt.name == "blank lines before body" {
					// The JSON body line is not a field; its bytes must
					// still be relayed.
					if raw != tt.in {
						t.Fatalf("raw = %q, want %q", raw, tt.in)
					}
					continue
				}
				if len(evs) != len(tt.want) {
					t.Fatalf("split=%v: got %d events %+v, want %d %+v", split, len(evs), evs, len(tt.want), tt.want)
				}
				for i := range evs {
					if evs[i] != tt.want[i] {
						t.Errorf("split=%v: event %d = %+v, want %+v", split, i, evs[i], tt.want[i])
					}
				}
				if raw != tt.in {
					t.Errorf("split=%v: raw = %q, want %q", split, raw, tt.in)
				}
			}
		})
	}
}

func TestReaderBigEvent(t *testing.T) {
	big := strings.Repeat("x", 100<<10)
	evs, _, err := readAll(t, strings.NewReader("data: "+big+"\n\n"))
	if err != nil || len(evs) != 1 || evs[0].Data != big {
		t.Fatalf("big event: err %v, %d events", err, len(evs))
	}
	rd := NewReader(strings.NewReader("data: " + big + "\n\n"))
	rd.SetMaxEventSize(1 << 10)
	if rd.Next() {
		t.Fatal("Next = true past the limit")
	}
	if !errors.Is(rd.Err(), ErrEventTooLarge) {
		t.Fatalf("Err = %v, want ErrEventTooLarge", rd.Err())
	}
}

func TestReaderError(t *testing.T) {
	boom := errors.New("boom")
	rd := NewReader(io.MultiReader(strings.NewReader("data: a\n\n"), iotest.ErrReader(boom)))
	if !rd.Next() || string(rd.Event().Data) != "a" {
		t.Fatal("first event missing")
	}
	if rd.Next() {
		t.Fatal("Next after error")
	}
	if !errors.Is(rd.Err(), boom) {
		t.Fatalf("Err = %v", rd.Err())
	}
}

func TestWriteEventRoundTrip(t *testing.T) {
	for _, data := range []string{"", "x", "a\nb", "a\r\nb", "{\"t\":\"\\n\"}"} {
		var buf bytes.Buffer
		if err := WriteEvent(&buf, "message_start", []byte(data)); err != nil {
			t.Fatal(err)
		}
		evs, _, err := readAll(t, &buf)
		if err != nil || len(evs) != 1 {
			t.Fatalf("%q: %v %v", data, evs, err)
		}
		want := strings.ReplaceAll(data, "\r\n", "\n")
		if evs[0].Type != "message_start" || evs[0].Data != want {
			t.Errorf("%q: got %+v", data, evs[0])
		}
	}
}

func FuzzReader(f *testing.F) {
	for _, s := range []string{"data: a\n\n", "event: x\ndata: y\r\n\r\n", ": c\n\n", "data: a\r\rdata", "\n\n{}"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		rd := NewReader(bytes.NewReader(in))
		var raw []byte
		for rd.Next() {
			ev := rd.Event()
			raw = append(raw, ev.Raw...)
			// Re-encoding the parsed event must parse back to the same
			// type and data.
			if ev.Data != nil {
				var buf bytes.Buffer
				_ = WriteEvent(&buf, ev.Type, ev.Data)
				r2 := NewReader(&buf)
				if !r2.Next() || string(r2.Event().Data) != string(ev.Data) {
					t.Fatalf("round trip of %q failed", ev.Data)
				}
			}
		}
		if rd.Err() == nil && !bytes.Equal(raw, in) {
			t.Fatalf("raw bytes %q != input %q", raw, in)
		}
	})
}

// TestReaderLoneCRLinear guards against a quadratic slowdown on streams
// that end lines with a lone CR: 20,000 such lines must read in one pass.
func TestReaderLoneCRLinear(t *testing.T) {
	in := strings.Repeat("data: x\r\r", 20000)
	rd := NewReader(iotest.HalfReader(strings.NewReader(in)))
	n := 0
	for rd.Next() {
		n++
	}
	if rd.Err() != nil || n != 20000 {
		t.Fatalf("%d events, err %v", n, rd.Err())
	}
}

func BenchmarkReaderAnthropicEvents(b *testing.B) {
	ev := "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"hi\"}}\n\n"
	in := strings.Repeat(ev, 1000)
	b.ReportAllocs()
	b.SetBytes(int64(len(in)))
	for b.Loop() {
		rd := NewReader(strings.NewReader(in))
		for rd.Next() {
		}
	}
}

// A released Reader's buffers serve the next one: it reads its own
// stream as a new one would, data-less blocks included.
func TestReaderRelease(t *testing.T) {
	long := strings.Repeat("x", 70<<10) // grows past what the pool keeps
	streams := []string{
		"event: a\ndata: one\n\n: ping\n\ndata: " + long + "\n\n",
		"data: two\ndata: lines\n\nevent: b\n\n",
		"data:\n\nid: 7\nretry: 5\n\n",
	}
	type got struct {
		typ, data, id, raw string
		hasData            bool
		retry              int
	}
	read := func(s string) []got {
		r := NewReader(strings.NewReader(s))
		defer r.Release()
		var out []got
		for r.Next() {
			ev := r.Event()
			out = append(out, got{ev.Type, string(ev.Data), ev.ID, string(ev.Raw), ev.Data != nil, ev.Retry})
		}
		if r.Err() != nil {
			t.Fatal(r.Err())
		}
		return out
	}
	var first [][]got
	for _, s := range streams {
		first = append(first, read(s))
	}
	for round := range 3 {
		for i, s := range streams {
			if again := read(s); !reflect.DeepEqual(again, first[i]) {
				t.Fatalf("round %d, stream %d: %+v, first read %+v", round, i, again, first[i])
			}
		}
	}
	if len(first[2]) != 2 || !first[2][0].hasData || first[2][0].data != "" || first[2][1].hasData || first[2][1].retry != 5 {
		t.Fatalf("stream 2: %+v", first[2])
	}
}
