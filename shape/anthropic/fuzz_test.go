package anthropic

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"path/filepath"
	"testing"

	"golang.org/x/tools/txtar"

	"github.com/gwlabs/gateway"
)

// seedFrom adds every golden file of that name in testdata/dir to f.
func seedFrom(f *testing.F, dir, name string) {
	f.Helper()
	paths, err := filepath.Glob(filepath.Join("testdata", dir, "*.txtar"))
	if err != nil {
		f.Fatal(err)
	}
	for _, p := range paths {
		a, err := txtar.ParseFile(p)
		if err != nil {
			f.Fatal(err)
		}
		for _, file := range a.Files {
			if file.Name == name {
				f.Add(file.Data)
			}
		}
	}
}

func wantGWError(t *testing.T, err error, codes ...gw.Code) {
	t.Helper()
	var e *gw.Error
	if !errors.As(err, &e) {
		t.Fatalf("error %v (%T) is not a *gw.Error", err, err)
	}
	for _, c := range codes {
		if e.Code == c {
			return
		}
	}
	t.Fatalf("error code %s, want one of %v", e.Code, codes)
}

var fuzzOpts = EncodeOptions{
	ForcedToolChoiceUnsupported: func(m string) bool { return m == "claude-opus-5-5" },
	AdaptiveThinkingOnly:        func(m string) bool { return m == "claude-opus-5-5" },
}

// FuzzDecodeRequest: decoding never panics and fails only with
// invalid_request; a decoded request encodes to valid JSON (or
// invalid_request), and that encoding is a fixed point of
// decode+encode.
func FuzzDecodeRequest(f *testing.F) {
	seedFrom(f, "decode_request", "client.json")
	f.Fuzz(func(t *testing.T, body []byte) {
		r, err := DecodeRequest(body)
		if err != nil {
			wantGWError(t, err, gw.CodeInvalidRequest)
			return
		}
		m1, err := EncodeRequest(r, fuzzOpts)
		if err != nil {
			wantGWError(t, err, gw.CodeInvalidRequest)
			return
		}
		if !json.Valid(m1) {
			t.Fatalf("invalid JSON: %s", m1)
		}
		r2, err := DecodeRequest(m1)
		if err != nil {
			// Encoding may leave nothing to send (all content empty).
			wantGWError(t, err, gw.CodeInvalidRequest)
			return
		}
		m2, err := EncodeRequest(r2, fuzzOpts)
		if err != nil {
			t.Fatalf("re-encode of %s: %v", m1, err)
		}
		if !bytes.Equal(m1, m2) {
			t.Fatalf("not stable:\n%s\n%s", m1, m2)
		}
	})
}

// FuzzDecodeResponse: decoding never panics, fails only with a *gw.Error,
// and what it decodes survives EncodeResponse + DecodeResponse.
func FuzzDecodeResponse(f *testing.F) {
	seedFrom(f, "response", "upstream.json")
	f.Fuzz(func(t *testing.T, body []byte) {
		r, err := DecodeResponse(body)
		if err != nil {
			wantGWError(t, err, gw.CodeUpstream, gw.CodeOverloaded)
			return
		}
		out, err := EncodeResponse(r, testMeta)
		if err != nil {
			wantGWError(t, err, gw.CodeUpstream)
			return
		}
		if !json.Valid(out) {
			t.Fatalf("invalid JSON: %s", out)
		}
		r2, err := DecodeResponse(out)
		if err != nil {
			t.Fatalf("re-decode of %s: %v", out, err)
		}
		if len(r2.Content) != len(r.Content) || r2.StopSequence != r.StopSequence || r2.Usage.TotalTokens() != r.Usage.TotalTokens() {
			t.Fatalf("round trip changed the response:\n%+v\n%+v", r, r2)
		}
	})
}

// FuzzStreamDecoder: any byte stream decodes, never panicking, into a
// well-formed canonical stream (Start, sequential blocks, then exactly
// one Finish or Error, the last event) that the StreamEncoder turns into
// well-formed SSE.
func FuzzStreamDecoder(f *testing.F) {
	seedFrom(f, "stream", "upstream.sse")
	f.Fuzz(func(t *testing.T, body []byte) {
		evs := decodeAll(t, io.NopCloser(bytes.NewReader(body)))
		checkContract(t, evs)
		var out bytes.Buffer
		enc := NewStreamEncoder(&out, testMeta)
		for _, ev := range evs {
			if err := enc.Encode(ev); err != nil {
				wantGWError(t, err, gw.CodeUpstream)
				return
			}
		}
		checkWellFormedSSE(t, out.Bytes())
	})
}

// FuzzDecodeUsage: no panic, no negative bucket.
func FuzzDecodeUsage(f *testing.F) {
	f.Add([]byte(`{"input_tokens":3,"cache_creation_input_tokens":12304,"output_tokens":550}`))
	f.Add([]byte(`{"cache_creation_input_tokens":9,"cache_creation":{"ephemeral_5m_input_tokens":1,"ephemeral_1h_input_tokens":20}}`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		u, err := DecodeUsage(raw)
		if err != nil {
			wantGWError(t, err, gw.CodeUpstream)
			return
		}
		if u.InputTokens < 0 || u.CacheReadTokens < 0 || u.CacheWrite5mTokens < 0 || u.CacheWrite1hTokens < 0 || u.OutputTokens < 0 || u.ReasoningTokens < 0 {
			t.Fatalf("negative bucket: %+v", u)
		}
	})
}

// checkContract asserts the canonical stream contract of package gw.
func checkContract(t testing.TB, evs []gw.Event) {
	t.Helper()
	if len(evs) == 0 {
		t.Fatal("no events")
	}
	next, open := 0, -1
	for i, ev := range evs {
		last := i == len(evs)-1
		switch ev.Type {
		case gw.EventStart:
			if i != 0 {
				t.Fatalf("event %d: Start not first", i)
			}
		case gw.EventBlockStart:
			if i == 0 || open >= 0 || ev.Index != next || ev.Part == nil {
				t.Fatalf("event %d: BlockStart %d (open %d, next %d)", i, ev.Index, open, next)
			}
			open = ev.Index
			next++
		case gw.EventDelta:
			if ev.Index != open {
				t.Fatalf("event %d: Delta for %d, open %d", i, ev.Index, open)
			}
		case gw.EventBlockStop:
			if ev.Index != open {
				t.Fatalf("event %d: BlockStop for %d, open %d", i, ev.Index, open)
			}
			open = -1
		case gw.EventFinish:
			if !last || open >= 0 || i == 0 {
				t.Fatalf("event %d: Finish not last or with a block open", i)
			}
		case gw.EventError:
			if !last || ev.Err == nil {
				t.Fatalf("event %d: Error not last or without Err", i)
			}
		default:
			t.Fatalf("event %d: unknown type %d", i, ev.Type)
		}
		if last && ev.Type != gw.EventFinish && ev.Type != gw.EventError {
			t.Fatalf("stream ends with event type %d", ev.Type)
		}
	}
}
