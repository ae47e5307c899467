package anthropic

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/gwlabs/gateway/internal/golden"

	gw "github.com/gwlabs/gateway"
	"github.com/gwlabs/gateway/sse"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// testMeta is the ResponseMeta every golden uses.
var testMeta = ResponseMeta{ID: "req_01JTESTREQUEST0000000000000", Model: "claude-test-1", Created: 1763784000}

// readGoldens loads testdata/dir; see internal/golden.
func readGoldens(t *testing.T, dir string) []*golden.Case { return golden.Load(t, dir, *update) }

// dump renders v as indented JSON without null, "", false, empty
// arrays and empty objects, so that canonical values read easily.
func dump(v any) []byte {
	raw, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	var x any
	if err := json.Unmarshal(raw, &x); err != nil {
		panic(err)
	}
	x, _ = prune(x)
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(x); err != nil {
		panic(err)
	}
	return buf.Bytes()
}

// prune reports whether x is worth showing: not null, "", false (bar
// the pointer booleans, where false is news) or an empty array.
func prune(x any) (any, bool) {
	switch v := x.(type) {
	case nil:
		return nil, false
	case string:
		return v, v != ""
	case bool:
		return v, v
	case []any:
		for i, e := range v {
			v[i], _ = prune(e)
		}
		return v, len(v) > 0
	case map[string]any:
		for k, e := range v {
			e2, ok := prune(e)
			switch {
			case ok:
				v[k] = e2
			case k == "ParallelToolCalls" || k == "Strict":
				if e != nil {
					v[k] = e
				} else {
					delete(v, k)
				}
			default:
				delete(v, k)
			}
		}
		return v, true
	}
	return x, true
}

// dumpEvents renders canonical events one JSON line each.
func dumpEvents(evs []gw.Event) []byte {
	var buf bytes.Buffer
	for _, ev := range evs {
		d := dump(eventView(ev))
		var c bytes.Buffer
		_ = json.Compact(&c, d)
		buf.Write(c.Bytes())
		buf.WriteByte('\n')
	}
	return buf.Bytes()
}

// eventView names an event's type for dumping.
func eventView(ev gw.Event) any {
	names := map[gw.EventType]string{
		gw.EventStart: "start", gw.EventBlockStart: "block_start", gw.EventDelta: "delta",
		gw.EventBlockStop: "block_stop", gw.EventFinish: "finish", gw.EventError: "error",
	}
	type errView struct{ Code, Message string }
	v := struct {
		Event        string
		Index        *int `json:",omitempty"`
		Model, ID    string
		Part         *gw.Part
		Text         string
		Signature    string
		StopReason   gw.StopReason
		StopSequence string
		Usage        *gw.Usage
		Err          *errView
	}{
		Event: names[ev.Type], Model: ev.Model, ID: ev.ID, Part: ev.Part, Text: ev.Text,
		Signature: ev.Signature, StopReason: ev.StopReason, StopSequence: ev.StopSequence, Usage: ev.Usage,
	}
	switch ev.Type {
	case gw.EventBlockStart, gw.EventDelta, gw.EventBlockStop:
		i := ev.Index
		v.Index = &i
	}
	if ev.Err != nil {
		v.Err = &errView{Code: string(ev.Err.Code), Message: ev.Err.Message}
	}
	return v
}

func errText(err error) []byte {
	if err == nil {
		return nil
	}
	e := gw.AsError(err)
	return fmt.Appendf(nil, "%s: %s\n", e.Code, e.Message)
}

func prettyJSON(b []byte) []byte {
	var buf bytes.Buffer
	if err := json.Indent(&buf, b, "", "  "); err != nil {
		return b
	}
	buf.WriteByte('\n')
	return buf.Bytes()
}

// TestDecodeRequestGolden: client.json (an M request) -> canonical.json,
// or error.
func TestDecodeRequestGolden(t *testing.T) {
	for _, g := range readGoldens(t, "decode_request") {
		t.Run(g.Name(), func(t *testing.T) {
			defer g.Save(t)
			in, ok := g.File("client.json")
			if !ok {
				t.Fatal("no client.json")
			}
			r, err := DecodeRequest(in)
			if err != nil {
				if gw.ErrorCode(err) != gw.CodeInvalidRequest {
					t.Errorf("error code %s, want invalid_request", gw.ErrorCode(err))
				}
				g.Check(t, "error", errText(err))
				g.Check(t, "canonical.json", nil)
				return
			}
			g.Check(t, "error", nil)
			g.Check(t, "canonical.json", dump(r))
		})
	}
}

// TestEncodeRequestGolden: canonical.json (a gw.Request) -> upstream.json
// (the Anthropic request) and dropped, or error.
func TestEncodeRequestGolden(t *testing.T) {
	for _, g := range readGoldens(t, "encode_request") {
		t.Run(g.Name(), func(t *testing.T) {
			defer g.Save(t)
			in, ok := g.File("canonical.json")
			if !ok {
				t.Fatal("no canonical.json")
			}
			var r gw.Request
			if err := json.Unmarshal(in, &r); err != nil {
				t.Fatal(err)
			}
			opts := EncodeOptions{
				DefaultMaxTokens:            func(string) int { return 8192 },
				ForcedToolChoiceUnsupported: func(m string) bool { return m == "claude-opus-5-5" },
				AdaptiveThinkingOnly:        func(m string) bool { return m == "claude-opus-5-5" || m == "claude-sonnet-5" },
				SamplingUnsupported:         func(m string) bool { return m == "claude-sonnet-5" },
			}
			body, err := EncodeRequest(&r, opts)
			if err != nil {
				if gw.ErrorCode(err) != gw.CodeInvalidRequest {
					t.Errorf("error code %s, want invalid_request", gw.ErrorCode(err))
				}
				g.Check(t, "error", errText(err))
				g.Check(t, "upstream.json", nil)
				return
			}
			if !json.Valid(body) {
				t.Fatalf("invalid JSON: %s", body)
			}
			g.Check(t, "error", nil)
			g.Check(t, "upstream.json", prettyJSON(body))
			var dropped []byte
			if len(r.Dropped) > 0 {
				dropped = []byte(strings.Join(r.Dropped, "\n"))
			}
			g.Check(t, "dropped", dropped)
		})
	}
}

// TestResponseGolden: upstream.json (Anthropic's message) ->
// canonical.json -> client.json (EncodeResponse), or errors.
func TestResponseGolden(t *testing.T) {
	for _, g := range readGoldens(t, "response") {
		t.Run(g.Name(), func(t *testing.T) {
			defer g.Save(t)
			in, ok := g.File("upstream.json")
			if !ok {
				t.Fatal("no upstream.json")
			}
			r, err := DecodeResponse(in)
			if err != nil {
				g.Check(t, "error", errText(err))
				return
			}
			g.Check(t, "canonical.json", dump(r))
			out, err := EncodeResponse(r, testMeta)
			if err != nil {
				g.Check(t, "error", errText(err))
				return
			}
			g.Check(t, "error", nil)
			g.Check(t, "client.json", prettyJSON(out))
			// The message re-encoded from Anthropic's own is Anthropic's,
			// bar the gateway's id and model.
			r2, err := DecodeResponse(out)
			if err != nil {
				t.Fatal(err)
			}
			r.ID, r.Model = r2.ID, r2.Model
			if string(dump(r)) != string(dump(r2)) {
				t.Errorf("decode(encode(x)) != x:\n%s\n%s", dump(r2), dump(r))
			}
		})
	}
}

// TestStreamGolden: upstream.sse (Anthropic's stream) -> events (the
// canonical events) -> client.sse (StreamEncoder). The upstream stream is
// replayed whole, one byte at a time, and split at every byte, with
// identical events.
func TestStreamGolden(t *testing.T) {
	for _, g := range readGoldens(t, "stream") {
		t.Run(g.Name(), func(t *testing.T) {
			defer g.Save(t)
			in, ok := g.File("upstream.sse")
			if !ok {
				t.Fatal("no upstream.sse")
			}
			evs := decodeAll(t, io.NopCloser(bytes.NewReader(in)))
			g.Check(t, "events", dumpEvents(evs))
			var out bytes.Buffer
			enc := NewStreamEncoder(&out, testMeta)
			for _, ev := range evs {
				if err := enc.Encode(ev); err != nil {
					t.Fatal(err)
				}
			}
			g.Check(t, "client.sse", out.Bytes())
			checkWellFormedSSE(t, out.Bytes())

			want := dumpEvents(evs)
			if got := dumpEvents(decodeAll(t, io.NopCloser(iotest.OneByteReader(bytes.NewReader(in))))); !bytes.Equal(got, want) {
				t.Errorf("one byte at a time:\n%s\nwant\n%s", got, want)
			}
			for i := 1; i < len(in); i++ {
				r := io.MultiReader(bytes.NewReader(in[:i]), bytes.NewReader(in[i:]))
				if got := dumpEvents(decodeAll(t, io.NopCloser(r))); !bytes.Equal(got, want) {
					t.Fatalf("split at %d:\n%s\nwant\n%s", i, got, want)
				}
			}
		})
	}
}

func decodeAll(t testing.TB, body io.ReadCloser) []gw.Event {
	t.Helper()
	s := NewStreamDecoder(body)
	defer s.Close()
	var evs []gw.Event
	for {
		ev, err := s.Recv()
		if err == io.EOF {
			return evs
		}
		if err != nil {
			t.Fatal(err)
		}
		evs = append(evs, ev)
		if len(evs) > 100000 {
			t.Fatal("runaway stream")
		}
	}
}

// checkWellFormedSSE asserts that b is a sequence of named M events with
// JSON data whose type matches the event name.
func checkWellFormedSSE(t testing.TB, b []byte) {
	t.Helper()
	r := sse.NewReader(bytes.NewReader(b))
	n := 0
	for r.Next() {
		ev := r.Event()
		if ev.Data == nil || ev.Type == "" {
			t.Fatalf("event %d without type or data: %q", n, ev.Raw)
		}
		var v struct{ Type string }
		if err := json.Unmarshal(ev.Data, &v); err != nil {
			t.Fatalf("event %d data is not JSON: %q", n, ev.Data)
		}
		if v.Type != ev.Type {
			t.Fatalf("event %d: name %q, data type %q", n, ev.Type, v.Type)
		}
		n++
	}
	if r.Err() != nil {
		t.Fatal(r.Err())
	}
}

func nopCloser(r io.Reader) io.ReadCloser { return io.NopCloser(r) }
