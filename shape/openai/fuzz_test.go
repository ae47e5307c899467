package openai

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gwlabs/gateway"
	"github.com/gwlabs/gateway/sse"
	"golang.org/x/tools/txtar"
)

// seedFrom adds the named section of every golden in dir to the corpus.
func seedFrom(f *testing.F, dir, section string) {
	paths, _ := filepath.Glob(filepath.Join("testdata", dir, "*.txtar"))
	for _, p := range paths {
		ar, err := txtar.ParseFile(p)
		if err != nil {
			f.Fatal(err)
		}
		for _, file := range ar.Files {
			if file.Name == section {
				f.Add(file.Data)
			}
		}
	}
}

func isGWError(err error) bool {
	var ge *gw.Error
	return errors.As(err, &ge)
}

// FuzzDecodeRequest: no panic; errors are invalid_request; a decoded
// request encodes for every dialect to valid JSON or a *gw.Error.
func FuzzDecodeRequest(f *testing.F) {
	seedFrom(f, "decode_request", "client.json")
	f.Fuzz(func(t *testing.T, body []byte) {
		r, err := DecodeRequest(body)
		if err != nil {
			if gw.ErrorCode(err) != gw.CodeInvalidRequest {
				t.Fatalf("error %v is not invalid_request", err)
			}
			return
		}
		for _, v := range []string{"openai", "mistral", "deepseek", "openrouter"} {
			d, _ := DialectFor(v)
			out, err := EncodeRequest(r, d)
			if err != nil {
				if !isGWError(err) {
					t.Fatalf("%s: EncodeRequest error %v is not a *gw.Error", v, err)
				}
				continue
			}
			if !json.Valid(out) {
				t.Fatalf("%s: invalid JSON %s", v, out)
			}
		}
	})
}

// FuzzEncodeRequest: a canonical request (from JSON) encodes to valid
// JSON or a *gw.Error, for every dialect.
func FuzzEncodeRequest(f *testing.F) {
	seedFrom(f, "encode_request", "canonical.json")
	f.Fuzz(func(t *testing.T, data []byte) {
		var r gw.Request
		if json.Unmarshal(data, &r) != nil {
			return
		}
		for _, v := range []string{"openai", "together", "fireworks", "groq", "mistral", "deepseek", "openrouter"} {
			d, _ := DialectFor(v)
			rr := r
			rr.Dropped = nil
			out, err := EncodeRequest(&rr, d)
			if err != nil {
				if !isGWError(err) {
					t.Fatalf("%s: error %v is not a *gw.Error", v, err)
				}
				continue
			}
			if !json.Valid(out) {
				t.Fatalf("%s: invalid JSON %s", v, out)
			}
		}
	})
}

// FuzzDecodeResponse: no panic; errors are *gw.Error; a decoded response
// has JSON-object tool arguments and encodes to valid JSON.
func FuzzDecodeResponse(f *testing.F) {
	seedFrom(f, "response", "upstream.json")
	f.Fuzz(func(t *testing.T, body []byte) {
		d, _ := DialectFor("mistral")
		r, err := DecodeResponse(body, d)
		if err != nil {
			if !isGWError(err) {
				t.Fatalf("error %v is not a *gw.Error", err)
			}
			return
		}
		for _, p := range r.Content {
			if p.Type == gw.PartToolCall && (!json.Valid(p.Arguments) || p.Arguments[0] != '{') {
				t.Fatalf("tool arguments %q are not a JSON object", p.Arguments)
			}
		}
		out, err := EncodeResponse(r, goldenMeta)
		if err != nil {
			t.Fatalf("EncodeResponse: %v", err)
		}
		if !json.Valid(out) {
			t.Fatalf("invalid JSON %s", out)
		}
	})
}

// FuzzStream: the decoder never panics, produces a well-formed canonical
// stream, and the client encoding of it is well-formed SSE; the Meter
// never panics on the same bytes.
func FuzzStream(f *testing.F) {
	seedFrom(f, "stream", "upstream.sse")
	f.Fuzz(func(t *testing.T, stream []byte) {
		d, _ := DialectFor("openrouter")
		s := NewStreamDecoder(io.NopCloser(bytes.NewReader(stream)), d)
		var evs []gw.Event
		for {
			ev, err := s.Recv()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			if ev.Type == gw.EventError && ev.Err == nil {
				t.Fatal("error event without error")
			}
			evs = append(evs, ev)
			if len(evs) > 1_000_000 {
				t.Fatal("stream does not end")
			}
		}
		s.Close()
		if len(evs) == 0 {
			t.Fatal("no events")
		}
		last := evs[len(evs)-1]
		if last.Type != gw.EventFinish && last.Type != gw.EventError {
			t.Fatalf("last event type %d", last.Type)
		}
		var out writeRecorder
		enc := NewStreamEncoder(&out, goldenMeta, true)
		for _, ev := range evs {
			if err := enc.Encode(ev); err != nil {
				t.Fatal(err)
			}
		}
		checkClientStream(t, out.writes)

		m := NewMeter(true)
		rd := sse.NewReader(bytes.NewReader(stream))
		for rd.Next() {
			ev := rd.Event()
			m.Observe(&ev)
		}
		if u := m.Usage(); u.InputTokens < 0 || u.CacheReadTokens < 0 || u.OutputTokens < 0 {
			t.Fatalf("negative usage %+v", u)
		}
	})
}

// FuzzDecodeUsage: no panic, no negative bucket, errors are *gw.Error.
func FuzzDecodeUsage(f *testing.F) {
	for _, s := range []string{
		`{"prompt_tokens":1816,"completion_tokens":40,"prompt_tokens_details":{"cached_tokens":1792}}`,
		`{"prompt_tokens":100,"prompt_cache_hit_tokens":64,"prompt_cache_miss_tokens":36}`,
		`{"prompt_tokens":1,"completion_tokens":1,"cost":1.5e-05}`,
		`{"prompt_tokens":-5,"completion_tokens":-1}`,
		`null`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		u, err := DecodeUsage(raw)
		if err != nil {
			if !isGWError(err) {
				t.Fatalf("error %v is not a *gw.Error", err)
			}
			return
		}
		if u.InputTokens < 0 || u.CacheReadTokens < 0 || u.CacheWrite5mTokens < 0 || u.OutputTokens < 0 || u.ReasoningTokens < 0 {
			t.Fatalf("negative bucket %+v", u)
		}
		if strings.Contains(string(raw), "x_groq") {
			_, _ = UsageFromBody(raw)
		}
	})
}
