package pairtest

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

	sdk "github.com/anthropics/anthropic-sdk-go"

	gw "github.com/gwlabs/gateway"
	"github.com/gwlabs/gateway/shape/anthropic"
	"github.com/gwlabs/gateway/shape/openai"
	"github.com/gwlabs/gateway/sse"
)

var update = flag.Bool("update", false, "rewrite the generated files of the goldens in testdata")

// The ids the server would pass in for request req_01JPAIRTEST0000000000000000.
const (
	requestID = "req_01JPAIRTEST0000000000000000"
	created   = 1763784000
)

// Golden files. The caller's request and the vendor's answers are
// written by hand; the rest is generated (-update) and reviewed.
const (
	fileClient         = "client.json"            // the caller's request
	fileUpstreamReq    = "upstream_request.json"  // generated: what the gateway sends the vendor
	fileDropped        = "dropped"                // generated: fields left out by a documented rule
	fileUpstreamResp   = "upstream_response.json" // the vendor's non-streaming answer
	fileUpstreamStream = "upstream.sse"           // the vendor's stream
	fileClientResp     = "client_response.json"   // generated: what the caller gets
	fileClientStream   = "client.sse"             // generated: the caller's stream
	fileError          = "error"                  // generated: request-side error
	fileRespError      = "response_error"         // generated: response-side error
)

func pretty(b []byte) []byte {
	var buf bytes.Buffer
	if err := json.Indent(&buf, b, "", "  "); err != nil {
		return b
	}
	return buf.Bytes()
}

func errText(err error) []byte {
	if err == nil {
		return nil
	}
	e := gw.AsError(err)
	return fmt.Appendf(nil, "%s: %s", e.Code, e.Message)
}

// splitModel splits "prefix/model" at the first slash, as routing does.
func splitModel(t *testing.T, body []byte) (vendor, model string) {
	t.Helper()
	var v struct{ Model string }
	if err := json.Unmarshal(body, &v); err != nil {
		t.Fatal(err)
	}
	vendor, model, ok := strings.Cut(v.Model, "/")
	if !ok {
		t.Fatalf("model %q has no vendor prefix", v.Model)
	}
	return vendor, model
}

// anthropicOptions are the vendor options the Anthropic provider would
// pass for the models the goldens use.
var anthropicOptions = anthropic.EncodeOptions{
	DefaultMaxTokens:            func(string) int { return 16384 },
	ForcedToolChoiceUnsupported: func(m string) bool { return m == "claude-opus-5-5" },
	AdaptiveThinkingOnly:        func(m string) bool { return m == "claude-opus-5-5" },
}

// direction is one pairing of caller shape and vendor shape.
type direction struct {
	decodeRequest  func([]byte) (*gw.Request, error)
	encodeRequest  func(*gw.Request) ([]byte, error)
	decodeResponse func([]byte) (*gw.Response, error)
	decodeStream   func(io.ReadCloser) gw.EventStream
	// encodeResponse and newEncoder get the routed request: its Model is
	// the vendor model id the caller sees.
	encodeResponse func(*gw.Response, *gw.Request) ([]byte, error)
	newEncoder     func(w io.Writer, r *gw.Request) interface{ Encode(gw.Event) error }
	// mCaller: the caller speaks M. The server then passes an input
	// estimate in Start when the vendor reports usage only at the end,
	// and the caller's stream can be checked with Anthropic's SDK.
	mCaller  bool
	estimate *int64
}

func directionFor(t *testing.T, vendor string) direction {
	t.Helper()
	if vendor == "anthropic" {
		// A C caller, Anthropic's M upstream.
		meta := openai.ResponseMeta{ID: "chatcmpl_" + strings.TrimPrefix(requestID, "req_"), Created: created}
		return direction{
			decodeRequest:  openai.DecodeRequest,
			encodeRequest:  func(r *gw.Request) ([]byte, error) { return anthropic.EncodeRequest(r, anthropicOptions) },
			decodeResponse: anthropic.DecodeResponse,
			decodeStream:   anthropic.NewStreamDecoder,
			encodeResponse: func(resp *gw.Response, r *gw.Request) ([]byte, error) {
				m := meta
				m.Model = r.Model
				return openai.EncodeResponse(resp, m)
			},
			newEncoder: func(w io.Writer, r *gw.Request) interface{ Encode(gw.Event) error } {
				m := meta
				m.Model = r.Model
				return openai.NewStreamEncoder(w, m, r.IncludeUsage)
			},
		}
	}
	d, ok := openai.DialectFor(vendor)
	if !ok {
		t.Fatalf("no dialect for %q", vendor)
	}
	meta := anthropic.ResponseMeta{ID: requestID, Created: created}
	return direction{
		decodeRequest:  anthropic.DecodeRequest,
		encodeRequest:  func(r *gw.Request) ([]byte, error) { return openai.EncodeRequest(r, d) },
		decodeResponse: func(b []byte) (*gw.Response, error) { return openai.DecodeResponse(b, d) },
		decodeStream:   func(b io.ReadCloser) gw.EventStream { return openai.NewStreamDecoder(b, d) },
		encodeResponse: func(resp *gw.Response, r *gw.Request) ([]byte, error) {
			m := meta
			m.Model = r.Model
			return anthropic.EncodeResponse(resp, m)
		},
		newEncoder: func(w io.Writer, r *gw.Request) interface{ Encode(gw.Event) error } {
			m := meta
			m.Model = r.Model
			return anthropic.NewStreamEncoder(w, m)
		},
		mCaller: true,
	}
}

// TestPairs runs every golden: request mapping, then the vendor's body
// and stream mapped back, the stream replayed whole, one byte at a time
// and split at every byte with identical output.
func TestPairs(t *testing.T) {
	for _, p := range golden.Load(t, "", *update) {
		t.Run(p.Name(), func(t *testing.T) {
			runPair(t, p)
			p.Save(t)
		})
	}
}

func runPair(t *testing.T, p *golden.Case) {
	client, ok := p.File(fileClient)
	if !ok {
		t.Fatal("no client.json")
	}
	vendor, model := splitModel(t, client)
	dir := directionFor(t, vendor)

	r, err := dir.decodeRequest(client)
	if err == nil {
		r.Model = model
		var body []byte
		body, err = dir.encodeRequest(r)
		if err == nil {
			if !json.Valid(body) {
				t.Fatalf("upstream request is not JSON: %s", body)
			}
			p.Check(t, fileUpstreamReq, pretty(body))
			p.Check(t, fileDropped, []byte(strings.Join(r.Dropped, "\n")))
		}
	}
	if err != nil {
		if gw.ErrorCode(err) != gw.CodeInvalidRequest {
			t.Errorf("request error code %s, want invalid_request", gw.ErrorCode(err))
		}
		p.Check(t, fileError, errText(err))
		return
	}
	p.Check(t, fileError, nil)

	var respErr []byte
	var nonStream *gw.Response
	if up, ok := p.File(fileUpstreamResp); ok {
		resp, err := dir.decodeResponse(up)
		var out []byte
		if err == nil {
			nonStream = resp
			out, err = dir.encodeResponse(resp, r)
		}
		if err != nil {
			respErr = errText(err)
		} else {
			if !json.Valid(out) {
				t.Fatalf("client response is not JSON: %s", out)
			}
			p.Check(t, fileClientResp, pretty(out))
		}
	}
	p.Check(t, fileRespError, respErr)

	if up, ok := p.File(fileUpstreamStream); ok {
		if dir.mCaller {
			// What the server does: a rough input estimate from the body.
			estimate := int64(len(client) / 4)
			dir.estimate = &estimate
		}
		whole, fin := replay(t, dir, r, io.NopCloser(bytes.NewReader(up)))
		p.Check(t, fileClientStream, whole)
		if got, _ := replay(t, dir, r, io.NopCloser(iotest.OneByteReader(bytes.NewReader(up)))); !bytes.Equal(got, whole) {
			t.Errorf("one byte at a time differs:\n%s", got)
		}
		for i := 1; i < len(up); i++ {
			rd := io.MultiReader(bytes.NewReader(up[:i]), bytes.NewReader(up[i:]))
			if got, _ := replay(t, dir, r, io.NopCloser(rd)); !bytes.Equal(got, whole) {
				t.Fatalf("split at byte %d differs:\n%s", i, got)
			}
		}
		// The same answer streamed and not must bill the same (usage) and
		// end the same way, and an M caller's SDK must accumulate the
		// stream into the message it would get without streaming.
		if dir.mCaller && fin != nil {
			if body, ok := p.File(fileClientResp); ok {
				compareAccumulated(t, whole, body)
			}
		}
		if nonStream != nil && fin != nil {
			if fin.Usage == nil || *fin.Usage != nonStream.Usage {
				t.Errorf("stream usage %+v, body usage %+v", fin.Usage, nonStream.Usage)
			}
			if fin.StopReason != nonStream.StopReason {
				t.Errorf("stream stop %q, body stop %q", fin.StopReason, nonStream.StopReason)
			}
		}
	}
}

// replay decodes a vendor stream and encodes it for the caller; it
// returns the caller's bytes and the canonical Finish event, if any.
func replay(t *testing.T, dir direction, r *gw.Request, body io.ReadCloser) ([]byte, *gw.Event) {
	t.Helper()
	s := dir.decodeStream(body)
	defer s.Close()
	var out bytes.Buffer
	enc := dir.newEncoder(&out, r)
	var fin *gw.Event
	for n := 0; ; n++ {
		ev, err := s.Recv()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if n > 100000 {
			t.Fatal("runaway stream")
		}
		if ev.Type == gw.EventStart && ev.Usage == nil && dir.estimate != nil {
			ev.Usage = &gw.Usage{InputTokens: *dir.estimate}
		}
		if ev.Type == gw.EventFinish {
			e := ev
			fin = &e
		}
		if err := enc.Encode(ev); err != nil {
			t.Fatalf("encode %+v: %v", ev, err)
		}
	}
	checkSSE(t, out.Bytes())
	return out.Bytes(), fin
}

// checkSSE asserts the caller's stream is well-formed SSE whose data is
// JSON (or [DONE]).
func checkSSE(t *testing.T, b []byte) {
	t.Helper()
	rd := sse.NewReader(bytes.NewReader(b))
	for rd.Next() {
		ev := rd.Event()
		if ev.Data == nil {
			t.Fatalf("event without data: %q", ev.Raw)
		}
		if string(ev.Data) != "[DONE]" && !json.Valid(ev.Data) {
			t.Fatalf("event data is not JSON: %q", ev.Data)
		}
	}
	if rd.Err() != nil {
		t.Fatal(rd.Err())
	}
}

// compareAccumulated feeds an M stream through the Anthropic SDK's
// accumulation and compares the result with the non-streaming message.
func compareAccumulated(t *testing.T, stream, body []byte) {
	t.Helper()
	var got, want sdk.Message
	if err := json.Unmarshal(body, &want); err != nil {
		t.Fatal(err)
	}
	rd := sse.NewReader(bytes.NewReader(stream))
	for rd.Next() {
		var ev sdk.MessageStreamEventUnion
		if err := json.Unmarshal(rd.Event().Data, &ev); err != nil {
			t.Fatalf("SDK cannot decode %s: %v", rd.Event().Data, err)
		}
		if err := got.Accumulate(ev); err != nil {
			t.Fatalf("SDK accumulate: %v", err)
		}
	}
	type block struct {
		Type, Text, Thinking, Signature, ID, Name string
		Input                                     string
	}
	view := func(m sdk.Message) []any {
		v := []any{m.ID, m.Model, m.StopReason, m.StopSequence, m.Usage.InputTokens, m.Usage.OutputTokens,
			m.Usage.CacheReadInputTokens, m.Usage.CacheCreationInputTokens}
		for _, b := range m.Content {
			in := ""
			if b.Type == "tool_use" {
				var x any
				if err := json.Unmarshal(b.Input, &x); err != nil {
					t.Fatalf("tool input %q: %v", b.Input, err)
				}
				c, _ := json.Marshal(x)
				in = string(c)
			}
			v = append(v, block{b.Type, b.Text, b.Thinking, b.Signature, b.ID, string(b.Name), in})
		}
		return v
	}
	if g, w := view(got), view(want); fmt.Sprint(g) != fmt.Sprint(w) {
		t.Errorf("SDK-accumulated stream:\n%v\nnon-streaming message:\n%v", g, w)
	}
}
