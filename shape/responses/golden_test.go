package responses_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"io"
	"strings"
	"testing"

	gw "github.com/gwlabs/gateway"
	"github.com/gwlabs/gateway/internal/golden"
	"github.com/gwlabs/gateway/provider/anthropic"
	"github.com/gwlabs/gateway/provider/google"
	"github.com/gwlabs/gateway/provider/openai"
	"github.com/gwlabs/gateway/shape/responses"
)

// The golden files are txtar archives a reader can open side by side:
//
//	testdata/request/*.txtar   request.json (a Responses body) -> chat.json
//	                           (what a Chat Completions vendor, Groq, gets),
//	                           messages.json (Anthropic), gemini.json
//	                           (Google), dropped (one field a line), or error
//	testdata/response/*.txtar  request.json and one vendor answer (chat.json,
//	                           messages.json or gemini.json) -> response.json
//	testdata/stream/*.txtar    request.json and one vendor stream (chat.sse,
//	                           messages.sse or gemini.sse) -> events.sse
//
// Reasoning blobs are sealed by a stand-in ("sealed:" and the parts'
// JSON) so that the files are stable; seal_test.go tests the real seal.
//
// go test ./shape/responses -run Golden -update rewrites the outputs.
var update = flag.Bool("update", false, "rewrite the golden outputs in testdata")

// codecs are the three vendor shapes R is mapped to.
func codecs(t testing.TB) map[string]gw.Codec {
	t.Helper()
	c, err := openai.New(openai.Config{Vendor: "groq", BaseURL: "http://groq.invalid/v1"})
	if err != nil {
		t.Fatal(err)
	}
	m, err := anthropic.New(anthropic.Config{BaseURL: "http://anthropic.invalid"})
	if err != nil {
		t.Fatal(err)
	}
	g, err := google.New(google.Config{BaseURL: "http://google.invalid"})
	if err != nil {
		t.Fatal(err)
	}
	return map[string]gw.Codec{"chat": c, "messages": m, "gemini": g}
}

// stand is the stand-in seal's readable form of a part.
type stand struct {
	Type      gw.PartType `json:"type"`
	Text      string      `json:"text,omitempty"`
	Signature string      `json:"signature,omitempty"`
}

func fakeSeal(parts []gw.Part) (string, error) {
	s := make([]stand, len(parts))
	for i, p := range parts {
		s[i] = stand{p.Type, p.Text, p.Signature}
	}
	b, err := json.Marshal(s)
	return "sealed:" + string(b), err
}

func fakeOpen(blob string) ([]gw.Part, bool, error) {
	rest, ok := strings.CutPrefix(blob, "sealed:")
	if !ok {
		return nil, false, nil
	}
	var s []stand
	if err := json.Unmarshal([]byte(rest), &s); err != nil {
		return nil, true, err
	}
	p := make([]gw.Part, len(s))
	for i, x := range s {
		p[i] = gw.Part{Type: x.Type, Text: x.Text, Signature: x.Signature}
	}
	return p, true, nil
}

func pretty(t testing.TB, b []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := json.Indent(&buf, b, "", "  "); err != nil {
		t.Fatalf("%v: %s", err, b)
	}
	return buf.Bytes()
}

func parse(t testing.TB, body []byte) *responses.Request {
	t.Helper()
	r, err := responses.Parse(body)
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	return r
}

func canonical(r *responses.Request) (*gw.Request, error) {
	msgs, err := r.Messages(fakeOpen, nil)
	if err != nil {
		return nil, err
	}
	return r.Canonical(msgs)
}

func TestGoldenRequest(t *testing.T) {
	cs := codecs(t)
	for _, c := range golden.Load(t, "request", *update) {
		t.Run(c.Name(), func(t *testing.T) {
			defer c.Save(t)
			r, err := responses.Parse(c.Input(t, "request.json"))
			var cr *gw.Request
			if err == nil {
				cr, err = canonical(r)
			}
			if err != nil {
				c.Check(t, "error", []byte(err.Error()))
				for _, n := range []string{"chat.json", "messages.json", "gemini.json", "dropped"} {
					c.Drop(t, n)
				}
				return
			}
			c.Drop(t, "error")
			c.Check(t, "dropped", []byte(strings.Join(cr.Dropped, "\n")))
			for _, name := range []string{"chat", "messages", "gemini"} {
				cp := *cr
				cp.Model = "model-x"
				body, err := cs[name].EncodeRequest(&cp)
				if err != nil {
					c.Check(t, name+".json", []byte("error: "+err.Error()))
					continue
				}
				c.Check(t, name+".json", pretty(t, body))
			}
		})
	}
}

func meta(r *responses.Request) responses.Meta {
	return responses.Meta{ID: "resp_golden", Model: "model-x", CreatedAt: 1700000000, Req: r, Seal: fakeSeal}
}

func TestGoldenResponse(t *testing.T) {
	cs := codecs(t)
	for _, c := range golden.Load(t, "response", *update) {
		t.Run(c.Name(), func(t *testing.T) {
			defer c.Save(t)
			r := parse(t, c.Input(t, "request.json"))
			if _, err := canonical(r); err != nil {
				t.Fatal(err)
			}
			for _, name := range []string{"chat", "messages", "gemini"} {
				body, ok := c.File(name + ".json")
				if !ok {
					continue
				}
				resp, err := cs[name].DecodeResponse(body)
				if err != nil {
					t.Fatal(err)
				}
				out, err := responses.EncodeResponse(resp, meta(r))
				if err != nil {
					t.Fatal(err)
				}
				c.Check(t, "response.json", pretty(t, out))
			}
		})
	}
}

func TestGoldenStream(t *testing.T) {
	cs := codecs(t)
	for _, c := range golden.Load(t, "stream", *update) {
		t.Run(c.Name(), func(t *testing.T) {
			defer c.Save(t)
			r := parse(t, c.Input(t, "request.json"))
			if _, err := canonical(r); err != nil {
				t.Fatal(err)
			}
			for _, name := range []string{"chat", "messages", "gemini"} {
				body, ok := c.File(name + ".sse")
				if !ok {
					continue
				}
				es := cs[name].DecodeStream(io.NopCloser(bytes.NewReader(body)))
				var out bytes.Buffer
				enc := responses.NewStreamEncoder(&out, meta(r))
				for {
					ev, err := es.Recv()
					if err == io.EOF {
						break
					}
					if err != nil {
						ev = gw.Event{Type: gw.EventError, Err: gw.AsError(err)}
					}
					if err := enc.Encode(ev); err != nil {
						t.Fatal(err)
					}
					if ev.Type == gw.EventError {
						break
					}
				}
				c.Check(t, "events.sse", out.Bytes())
			}
		})
	}
}
