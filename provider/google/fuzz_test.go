package google

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"testing"
	"testing/iotest"

	gw "github.com/gwlabs/gateway"
)

// The fuzz targets seed from the golden files, so plain go test runs the
// seeds; go test -fuzz=FuzzX explores further.

func seedGolden(f *testing.F, dir string, names ...string) {
	f.Helper()
	for _, file := range goldenFiles(f, dir) {
		a := readArchive(f, file)
		for _, n := range names {
			if b, ok := section(a, n); ok {
				f.Add(b)
			}
		}
	}
}

func isGWError(err error) bool {
	var ge *gw.Error
	return errors.As(err, &ge)
}

func FuzzEncodeRequest(f *testing.F) {
	seedGolden(f, "request", "request.json")
	f.Fuzz(func(t *testing.T, in []byte) {
		var r gw.Request
		if json.Unmarshal(in, &r) != nil {
			return
		}
		body, err := EncodeRequest(&r)
		if err != nil {
			if !isGWError(err) || gw.ErrorCode(err) != gw.CodeInvalidRequest {
				t.Fatalf("error %v is not an invalid_request *gw.Error", err)
			}
			return
		}
		if !json.Valid(body) {
			t.Fatalf("invalid JSON: %s", body)
		}
		var req genRequest
		if err := json.Unmarshal(body, &req); err != nil {
			t.Fatalf("output does not decode: %v", err)
		}
		if len(req.Contents) == 0 {
			t.Fatal("no contents")
		}
		for _, c := range req.Contents {
			for _, p := range c.Parts {
				if p.FunctionCall != nil && !json.Valid(p.FunctionCall.Args) {
					t.Fatalf("args not JSON: %s", p.FunctionCall.Args)
				}
			}
		}
		// Encoding is a function of the request: a second run agrees.
		var r2 gw.Request
		_ = json.Unmarshal(in, &r2)
		body2, err := EncodeRequest(&r2)
		if err != nil || !bytes.Equal(body, body2) {
			t.Fatalf("second encoding differs: %v", err)
		}
	})
}

func FuzzDecodeResponse(f *testing.F) {
	seedGolden(f, "response", "gemini.json")
	f.Fuzz(func(t *testing.T, in []byte) {
		resp, err := DecodeResponse(in)
		if err != nil {
			if !isGWError(err) {
				t.Fatalf("error %v is not a *gw.Error", err)
			}
			return
		}
		for _, p := range resp.Content {
			if p.Type == gw.PartToolCall {
				if !json.Valid(p.Arguments) || p.Arguments[0] != '{' {
					t.Fatalf("arguments %q not a JSON object", p.Arguments)
				}
				if !usableID(p.ToolCallID) && !validEmbeddedID(p.ToolCallID) {
					t.Fatalf("tool call id %q outside [A-Za-z0-9_-]", p.ToolCallID)
				}
			}
		}
		if resp.StopReason == "" {
			t.Fatal("no stop reason")
		}
		if _, err := json.Marshal(viewResponse(resp)); err != nil {
			t.Fatal(err)
		}
	})
}

func validEmbeddedID(id string) bool {
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return id != ""
}

func FuzzStreamDecoder(f *testing.F) {
	seedGolden(f, "stream", "stream.sse", "stream.crlf.sse")
	f.Fuzz(func(t *testing.T, in []byte) {
		whole := fuzzReplay(t, bytes.NewReader(in))
		if got := fuzzReplay(t, iotest.OneByteReader(bytes.NewReader(in))); got != whole {
			t.Fatalf("one byte at a time differs:\n%s\nvs\n%s", got, whole)
		}
	})
}

// fuzzReplay decodes and renders a stream, checking the contract and that
// every error is a *gw.Error and every tool delta is JSON.
func fuzzReplay(t *testing.T, r io.Reader) string {
	d := NewStreamDecoder(io.NopCloser(r))
	defer d.Close()
	var events []gw.Event
	var out bytes.Buffer
	kinds := map[int]gw.PartType{}
	for {
		ev, err := d.Recv()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("Recv: %v", err)
		}
		if ev.Type == gw.EventError && ev.Err == nil {
			t.Fatal("error event without *gw.Error")
		}
		if ev.Type == gw.EventBlockStart {
			kinds[ev.Index] = ev.Part.Type
		}
		if ev.Type == gw.EventDelta && kinds[ev.Index] == gw.PartToolCall && !json.Valid([]byte(ev.Text)) {
			t.Fatalf("tool delta not JSON: %q", ev.Text)
		}
		events = append(events, ev)
		b, _ := json.Marshal(viewEvent(ev))
		out.Write(b)
		out.WriteByte('\n')
	}
	if err := checkContract(events); err != nil {
		t.Fatalf("contract: %v\n%s", err, out.String())
	}
	return out.String()
}

func FuzzToolCallID(f *testing.F) {
	f.Add("call_1", "c2lnLWE=")
	f.Add("abc", "not base64!")
	f.Add("x", "")
	f.Fuzz(func(t *testing.T, core, sig string) {
		if !usableID(core) {
			return
		}
		id := ToolCallID(core, sig)
		if !validEmbeddedID(id) {
			t.Fatalf("id %q outside [A-Za-z0-9_-]", id)
		}
		c, s := SplitToolCallID(id)
		if c != core || s != sig {
			t.Fatalf("round trip (%q, %q) -> %q -> (%q, %q)", core, sig, id, c, s)
		}
	})
}
