package gemini_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"strings"
	"testing"
	"testing/iotest"

	gw "github.com/gwlabs/gateway"
	"github.com/gwlabs/gateway/internal/golden"
	"github.com/gwlabs/gateway/provider/google"
	"github.com/gwlabs/gateway/shape/anthropic"
	"github.com/gwlabs/gateway/shape/gemini"
	"github.com/gwlabs/gateway/shape/openai"
	"github.com/gwlabs/gateway/shape/responses"
)

var update = flag.Bool("update", false, "rewrite the generated files of the goldens in testdata")

const (
	requestID = "req_01JGEMINITEST000000000000000"
	created   = 1763784000
)

// Golden sections. "model" (the prefixed model), the caller's request and
// the vendor's answers are written by hand; the rest is generated
// (-update) and reviewed.
const (
	fileModel          = "model"
	fileClient         = "client.json"
	fileUpstreamReq    = "upstream_request.json"
	fileDropped        = "dropped"
	fileUpstreamResp   = "upstream_response.json"
	fileUpstreamStream = "upstream.sse"
	fileClientResp     = "client_response.json"
	fileClientStream   = "client.sse"
	fileClientArray    = "client_array.json"
	fileError          = "error"
	fileRespError      = "response_error"
)

// pair is one caller shape with one vendor shape, composed as the server
// composes them.
type pair struct {
	decodeRequest  func([]byte) (*gw.Request, error)
	encodeRequest  func(*gw.Request) ([]byte, error)
	decodeResponse func([]byte) (*gw.Response, error)
	decodeStream   func(io.ReadCloser) gw.EventStream
	encodeResponse func(*gw.Response, *gw.Request) ([]byte, error)
	newEncoder     func(w io.Writer, r *gw.Request, sse bool) interface{ Encode(gw.Event) error }
	gCaller        bool
}

func gMeta(r *gw.Request, include bool) gemini.Meta {
	return gemini.Meta{ModelVersion: r.Model, ResponseID: "resp-golden", IncludeThoughts: include}
}

// pairFor reads the direction from the case name: g2c (G caller, an
// OpenAI-compatible vendor), g2m (G caller, Anthropic), c2g, m2g, r2g (a
// C, M or R caller, Gemini).
func pairFor(t *testing.T, name, vendor string, client []byte) pair {
	t.Helper()
	include := bytes.Contains(client, []byte(`"includeThoughts":true`))
	gEnc := func(resp *gw.Response, r *gw.Request) ([]byte, error) {
		return gemini.EncodeResponse(resp, gMeta(r, include))
	}
	gStream := func(w io.Writer, r *gw.Request, sse bool) interface{ Encode(gw.Event) error } {
		return gemini.NewStreamEncoder(w, gMeta(r, include), sse, requestID)
	}
	gVendor := pair{encodeRequest: google.EncodeRequest, decodeResponse: google.DecodeResponse,
		decodeStream: func(b io.ReadCloser) gw.EventStream { return google.NewStreamDecoder(b) }}
	switch {
	case strings.HasPrefix(name, "g2m_"):
		opts := anthropic.EncodeOptions{DefaultMaxTokens: func(string) int { return 16384 }}
		return pair{decodeRequest: gemini.DecodeRequest, encodeRequest: func(r *gw.Request) ([]byte, error) { return anthropic.EncodeRequest(r, opts) },
			decodeResponse: anthropic.DecodeResponse, decodeStream: anthropic.NewStreamDecoder, encodeResponse: gEnc, newEncoder: gStream, gCaller: true}
	case strings.HasPrefix(name, "g2c_"):
		d, ok := openai.DialectFor(vendor)
		if !ok {
			t.Fatalf("no dialect for %q", vendor)
		}
		return pair{decodeRequest: gemini.DecodeRequest, encodeRequest: func(r *gw.Request) ([]byte, error) { return openai.EncodeRequest(r, d) },
			decodeResponse: func(b []byte) (*gw.Response, error) { return openai.DecodeResponse(b, d) },
			decodeStream:   func(b io.ReadCloser) gw.EventStream { return openai.NewStreamDecoder(b, d) },
			encodeResponse: gEnc, newEncoder: gStream, gCaller: true}
	case strings.HasPrefix(name, "c2g_"):
		p := gVendor
		meta := openai.ResponseMeta{ID: "chatcmpl_golden", Created: created}
		p.decodeRequest = openai.DecodeRequest
		p.encodeResponse = func(resp *gw.Response, r *gw.Request) ([]byte, error) {
			m := meta
			m.Model = r.Model
			return openai.EncodeResponse(resp, m)
		}
		p.newEncoder = func(w io.Writer, r *gw.Request, _ bool) interface{ Encode(gw.Event) error } {
			m := meta
			m.Model = r.Model
			return openai.NewStreamEncoder(w, m, r.IncludeUsage)
		}
		return p
	case strings.HasPrefix(name, "m2g_"):
		p := gVendor
		meta := anthropic.ResponseMeta{ID: requestID, Created: created}
		p.decodeRequest = anthropic.DecodeRequest
		p.encodeResponse = func(resp *gw.Response, r *gw.Request) ([]byte, error) {
			m := meta
			m.Model = r.Model
			return anthropic.EncodeResponse(resp, m)
		}
		p.newEncoder = func(w io.Writer, r *gw.Request, _ bool) interface{ Encode(gw.Event) error } {
			m := meta
			m.Model = r.Model
			return anthropic.NewStreamEncoder(w, m)
		}
		return p
	case strings.HasPrefix(name, "r2g_"):
		p := gVendor
		var req *responses.Request
		p.decodeRequest = func(b []byte) (*gw.Request, error) {
			var err error
			if req, err = responses.Parse(b); err != nil {
				return nil, err
			}
			msgs, err := req.Messages(nil, nil)
			if err != nil {
				return nil, err
			}
			return req.Canonical(msgs)
		}
		meta := func(r *gw.Request) responses.Meta {
			return responses.Meta{ID: "resp_golden", Model: r.Model, CreatedAt: created, Req: req}
		}
		p.encodeResponse = func(resp *gw.Response, r *gw.Request) ([]byte, error) { return responses.EncodeResponse(resp, meta(r)) }
		p.newEncoder = func(w io.Writer, r *gw.Request, _ bool) interface{ Encode(gw.Event) error } {
			return responses.NewStreamEncoder(w, meta(r))
		}
		return p
	}
	t.Fatalf("case %s: the name must start with g2c_, g2m_, c2g_, m2g_ or r2g_", name)
	return pair{}
}

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

// TestPairs runs every golden in testdata/pairs: the caller's request
// mapped to the vendor's, the vendor's answer and stream mapped back (a G
// caller's stream both as SSE and as Google's JSON array), the stream
// replayed one byte at a time with identical output, and the stream's
// usage and finish equal to the body's.
func TestPairs(t *testing.T) {
	for _, c := range golden.Load(t, "pairs", *update) {
		t.Run(c.Name(), func(t *testing.T) {
			runPair(t, c)
			c.Save(t)
		})
	}
}

func runPair(t *testing.T, c *golden.Case) {
	model := strings.TrimSpace(string(c.Input(t, fileModel)))
	vendor, vmodel, ok := strings.Cut(model, "/")
	if !ok {
		t.Fatalf("model %q has no prefix", model)
	}
	client := c.Input(t, fileClient)
	p := pairFor(t, c.Name(), vendor, client)
	r, err := p.decodeRequest(client)
	if err == nil {
		r.Model = vmodel
		var body []byte
		if body, err = p.encodeRequest(r); err == nil {
			c.Check(t, fileUpstreamReq, pretty(body))
			c.Check(t, fileDropped, []byte(strings.Join(r.Dropped, "\n")))
		}
	}
	if err != nil {
		if gw.ErrorCode(err) != gw.CodeInvalidRequest {
			t.Errorf("request error code %s, want invalid_request", gw.ErrorCode(err))
		}
		c.Check(t, fileError, errText(err))
		return
	}
	c.Check(t, fileError, nil)
	if p.gCaller {
		r.Model = model // modelVersion is the model as the caller named it
	}

	var nonStream *gw.Response
	var respErr []byte
	if up, ok := c.File(fileUpstreamResp); ok {
		resp, err := p.decodeResponse(up)
		var out []byte
		if err == nil {
			nonStream = resp
			out, err = p.encodeResponse(resp, r)
		}
		if err != nil {
			respErr = errText(err)
		} else {
			if !json.Valid(out) {
				t.Fatalf("client response is not JSON: %s", out)
			}
			c.Check(t, fileClientResp, pretty(out))
		}
	}
	c.Check(t, fileRespError, respErr)

	if up, ok := c.File(fileUpstreamStream); ok {
		whole, fin := replay(t, p, r, bytes.NewReader(up), true)
		c.Check(t, fileClientStream, whole)
		if got, _ := replay(t, p, r, iotest.OneByteReader(bytes.NewReader(up)), true); !bytes.Equal(got, whole) {
			t.Errorf("one byte at a time differs:\n%s", got)
		}
		if p.gCaller {
			arr, _ := replay(t, p, r, bytes.NewReader(up), false)
			var recs []json.RawMessage
			if err := json.Unmarshal(arr, &recs); err != nil {
				t.Fatalf("the JSON-array stream is not a JSON array: %v\n%s", err, arr)
			}
			c.Check(t, fileClientArray, arr)
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

func replay(t *testing.T, p pair, r *gw.Request, rd io.Reader, sse bool) ([]byte, *gw.Event) {
	t.Helper()
	s := p.decodeStream(io.NopCloser(rd))
	defer s.Close()
	var out bytes.Buffer
	enc := p.newEncoder(&out, r, sse)
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
		if ev.Type == gw.EventFinish {
			e := ev
			fin = &e
		}
		if err := enc.Encode(ev); err != nil {
			t.Fatalf("encode %+v: %v", ev, err)
		}
	}
	return out.Bytes(), fin
}
