package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"regexp"
	"strings"
	"testing"

	gw "github.com/gwlabs/gateway"
	"github.com/gwlabs/gateway/billing"
	"github.com/gwlabs/gateway/internal/app"
	"github.com/gwlabs/gateway/internal/rawjson"
	"github.com/gwlabs/gateway/optimize"
	"github.com/gwlabs/gateway/ratecard"
	"github.com/gwlabs/gateway/route"
)

// withOptimizer turns the optimization layer on (newEnv turns it off).
func withOptimizer(c *app.Config) { c.Optimize = true }

// vendorShape is the wire shape a vendor receives.
func vendorShape(vendor string) gw.Shape {
	switch vendor {
	case "anthropic":
		return gw.ShapeM
	case "google":
		return gw.ShapeG
	}
	return gw.ShapeC
}

var streamOptionRE = regexp.MustCompile(`,"stream_options":\{"include_usage":true\}`)

// withoutDirective is the usage the customer pays for: the directive's
// tokens taken out of the most expensive input bucket they could have
// landed in (with no cache activity, plain input).
func withoutDirective(u gw.Usage) gw.Usage {
	u.InputTokens -= u.OptimizerTokens
	u.OptimizerTokens = 0
	return u
}

// TestOptimizerEveryRoute: on both endpoints, all nine vendors, stream
// and not, on both stores: with the layer on, the vendor receives exactly
// the body it receives with the layer off plus the directive segment in
// its place (after the caller's system content, nothing else moved); with
// x-gateway-optimize: off, the native routes get the caller's body (model
// rewritten, and the vendor's usage option and cache key, as always); the
// response says which ran; the record carries the directive's tokens and
// version; and the charge is that of the usage without them.
func TestOptimizerEveryRoute(t *testing.T) {
	card, err := ratecard.Default()
	if err != nil {
		t.Fatal(err)
	}
	biller := billing.New(card, billing.Options{})
	const sys = "You are terse and exact."
	for store, dbURL := range storesUnderTest(t) {
		t.Run(store, func(t *testing.T) {
			e := newEnv(t, withOptimizer, func(c *app.Config) { c.DatabaseURL = dbURL })
			ctx := context.Background()
			for _, path := range []string{"/v1/messages", "/v1/chat/completions"} {
				for _, vendor := range route.Vendors() {
					for _, stream := range []bool{false, true} {
						name := path[4:] + "->" + vendor
						if stream {
							name += "/stream"
						}
						t.Run(name, func(t *testing.T) {
							model := nativeModels[vendor]
							var body []byte
							if path == "/v1/messages" {
								body = messagesBody(vendor+"/"+model, "Say hello.", stream, `,"system":[{"type":"text","text":`+quote(sys)+`}]`)
							} else {
								body = []byte(strings.Replace(string(chatBody(vendor+"/"+model, "Say hello.", stream, "")), `"messages":[`, `"messages":[{"role":"system","content":`+quote(sys)+`},`, 1))
							}
							send := func(hdr ...string) (*http.Response, []byte, *gw.Record) {
								t.Helper()
								resp := e.post(path, e.key, body, append([]string{"Anthropic-Version", "2023-06-01"}, hdr...)...)
								got := readAll(t, resp.Body)
								if resp.StatusCode != http.StatusOK {
									t.Fatalf("status %d: %s", resp.StatusCode, got)
								}
								var rec []byte
								for _, r := range e.fake.Requests() {
									// The optimizer's calibration requests (no
									// caller text) are not this request.
									if r.Vendor == vendor && !strings.Contains(r.Path, "count") && bytes.Contains(r.Body, []byte("Say hello.")) {
										rec = r.Body
									}
								}
								r, err := e.m.Store().Record(ctx, resp.Header.Get("X-Gateway-Request-Id"))
								if err != nil {
									t.Fatal(err)
								}
								return resp, rec, r
							}
							offResp, off, offRec := send("X-Gateway-Optimize", "off")
							onResp, on, onRec := send()

							if h := onResp.Header.Get("X-Gateway-Optimize"); h != "applied; v=1" {
								t.Errorf("on: x-gateway-optimize = %q", h)
							}
							if h := offResp.Header.Get("X-Gateway-Optimize"); h != "off" {
								t.Errorf("off: x-gateway-optimize = %q", h)
							}
							// The only difference upstream is the directive segment.
							shape := vendorShape(vendor)
							want, err := optimize.Apply(shape, off)
							if err != nil {
								t.Fatal(err)
							}
							if !bytes.Equal(on, want) {
								t.Errorf("with the layer on the vendor received\n%s\nwant the body without it plus the directive:\n%s", on, want)
							}
							if n := bytes.Count(on, []byte(optimize.Text)); n != 1 {
								t.Errorf("directive appears %d times upstream", n)
							}
							if bytes.Contains(off, []byte(optimize.Text)) {
								t.Errorf("x-gateway-optimize: off still sent the directive")
							}
							if vendorShape(vendor) == map[string]gw.Shape{"/v1/messages": gw.ShapeM, "/v1/chat/completions": gw.ShapeC}[path] {
								// Native: off is the caller's body with model rewritten.
								caller, _ := rawjson.Set(body, "model", []byte(quote(model)))
								sent := streamOptionRE.ReplaceAll(cacheKeyRE.ReplaceAll(off, nil), nil)
								if !bytes.Equal(sent, caller) {
									t.Errorf("off: vendor received\n%s\nwant the caller's body\n%s", off, caller)
								}
								if len(on)-len(off) != len(optimize.Segment(shape))+1 {
									t.Errorf("on adds %d bytes, want the segment and its comma (%d)", len(on)-len(off), len(optimize.Segment(shape))+1)
								}
							}
							checkPlacement(t, shape, on, sys)

							if offRec.Usage.OptimizerTokens != 0 || strings.Contains(offRec.Note, "optimizer") {
								t.Errorf("off record: %+v %q", offRec.Usage, offRec.Note)
							}
							if !strings.Contains(onRec.Note, optimize.Note()) {
								t.Errorf("on record note %q lacks %q", onRec.Note, optimize.Note())
							}
							opt := onRec.Usage.OptimizerTokens
							// Every vendor's share is its own count (a count
							// endpoint, or two minimal requests on the others),
							// less one token for rounding: within a few tokens
							// of the prompt's growth and never above it (issue
							// 38 item 5; before, openai took the o200k count
							// and the C vendors the one-token-a-byte bound).
							// Issue 46 D9: now rounded in the customer's
							// favour, never below the growth, at most 2 above.
							if grown := onRec.Usage.PromptTokens() - offRec.Usage.PromptTokens(); grown <= 0 || opt < grown || opt > grown+2 {
								t.Errorf("%s optimizer tokens %d, prompt grew by %d", vendor, opt, grown)
							}
							if vendor == "openrouter" {
								return // billed from the aggregator's reported cost
							}
							q, err := biller.Price(vendor, model, withoutDirective(onRec.Usage))
							if err != nil {
								t.Fatal(err)
							}
							if onRec.Charge != q.Charge || onRec.Charge <= 0 {
								t.Errorf("charge %d, want %d: the usage without the directive's tokens", onRec.Charge, q.Charge)
							}
							// The customer pays at least what the same answer
							// costs without the directive (its own tokens, x1.09),
							// and at most the few tokens the count stays below the
							// directive's real size (before issue 38 item 5 it was
							// the other way round: the C vendors' bound took up to
							// 195 tokens of the customer's own prompt off the bill).
							u := onRec.Usage
							u.InputTokens, u.OptimizerTokens = offRec.Usage.InputTokens, 0
							q2, _ := biller.Price(vendor, model, u)
							// Issue 46 D9: never above it, below it by at most
							// the rounding (two prompt tokens).
							u.InputTokens = max(u.InputTokens-2, 0)
							q3, _ := biller.Price(vendor, model, u)
							if onRec.Charge > q2.Charge || onRec.Charge < q3.Charge {
								t.Errorf("charge %d, the same answer without the directive %d (at least %d)", onRec.Charge, q2.Charge, q3.Charge)
							}
						})
					}
				}
			}
		})
	}
}

// checkPlacement decodes the vendor body: the caller's system content
// comes first, unchanged, the directive right after it, then the
// conversation.
func checkPlacement(t *testing.T, shape gw.Shape, body []byte, sys string) {
	t.Helper()
	var texts []string
	switch shape {
	case gw.ShapeM:
		var v struct {
			System []struct{ Text string } `json:"system"`
		}
		_ = json.Unmarshal(body, &v)
		for _, b := range v.System {
			texts = append(texts, b.Text)
		}
	case gw.ShapeG:
		var v struct {
			SystemInstruction struct {
				Parts []struct{ Text string } `json:"parts"`
			} `json:"systemInstruction"`
		}
		_ = json.Unmarshal(body, &v)
		for _, p := range v.SystemInstruction.Parts {
			texts = append(texts, p.Text)
		}
	default:
		var v struct {
			Messages []struct {
				Role    string `json:"role"`
				Content any    `json:"content"`
			} `json:"messages"`
		}
		_ = json.Unmarshal(body, &v)
		for _, m := range v.Messages {
			s, _ := m.Content.(string)
			texts = append(texts, m.Role+": "+s)
		}
		if len(texts) != 3 || texts[0] != "system: "+sys || texts[1] != "system: "+optimize.Text || texts[2] != "user: Say hello." {
			t.Errorf("messages upstream: %q", texts)
		}
		return
	}
	if len(texts) != 2 || texts[0] != sys || texts[1] != optimize.Text {
		t.Errorf("system upstream: %q, want the caller's then the directive", texts)
	}
}

// TestOptimizerSwitches: GATEWAY_OPTIMIZE=off turns the layer off for
// everyone, a key created with --optimize off for its requests only.
func TestOptimizerSwitches(t *testing.T) {
	c, err := app.ConfigFromEnv(func(k string) string {
		if k == "GATEWAY_OPTIMIZE" {
			return "off"
		}
		return ""
	})
	if err != nil || c.Optimize {
		t.Fatalf("GATEWAY_OPTIMIZE=off: Optimize %v, %v", c.Optimize, err)
	}
	if c, _ := app.ConfigFromEnv(func(string) string { return "" }); !c.Optimize {
		t.Fatal("the layer must be on by default")
	}

	e := newEnv(t, withOptimizer)
	ctx := context.Background()
	secret, _, err := createKeyWith(ctx, e.m.Store(), "no-optimize", 10*gw.USD, gw.Limit{}, true)
	if err != nil {
		t.Fatal(err)
	}
	model := "openai/" + nativeModels["openai"]
	for _, tc := range []struct {
		key, want string
	}{{e.key, "applied; v=1"}, {secret, "off"}} {
		resp := e.post("/v1/chat/completions", tc.key, chatBody(model, "hi", false, ""))
		readAll(t, resp.Body)
		if got := resp.Header.Get("X-Gateway-Optimize"); got != tc.want {
			t.Errorf("x-gateway-optimize = %q, want %q", got, tc.want)
		}
		if sent := bytes.Contains(e.lastRequest().Body, []byte(optimize.Text)); sent != (tc.want != "off") {
			t.Errorf("directive sent: %v, header %q", sent, tc.want)
		}
	}

	off := newEnv(t) // the layer off in configuration
	resp := off.post("/v1/chat/completions", off.key, chatBody(model, "hi", false, ""))
	readAll(t, resp.Body)
	if got := resp.Header.Get("X-Gateway-Optimize"); got != "off" || bytes.Contains(off.lastRequest().Body, []byte(optimize.Text)) {
		t.Errorf("configured off: header %q", got)
	}
}

type keyRow struct {
	KeyID    string `json:"key_id"`
	Account  string `json:"account"`
	Optimize string `json:"optimize"`
}

func rowsWithID(t *testing.T, b []byte) []keyRow {
	t.Helper()
	var rows []keyRow
	if err := json.Unmarshal(b, &rows); err != nil {
		t.Fatal(err)
	}
	return rows
}
