package proxy_test

import (
	"bytes"
	"net/http"
	"reflect"
	"strconv"
	"strings"
	"testing"

	gw "github.com/gwlabs/gateway"
	"github.com/gwlabs/gateway/internal/agentbody"
	"github.com/gwlabs/gateway/internal/outlimit"
	"github.com/gwlabs/gateway/internal/rawjson"
	"github.com/gwlabs/gateway/internal/reqbody"
	"github.com/gwlabs/gateway/optimize"
	"github.com/gwlabs/gateway/provider/anthropic"
	"github.com/gwlabs/gateway/provider/openai"
	"github.com/gwlabs/gateway/proxy"
)

// The pass-through providers and the optimizer edit the caller's body in
// place of copying it (see proxy.PassThroughEditor).
var (
	_ proxy.PassThroughEditor          = (*openai.Provider)(nil)
	_ proxy.ResponsesPassThroughEditor = (*openai.Provider)(nil)
	_ proxy.CacheKeyEditor             = (*openai.Provider)(nil)
	_ proxy.PassThroughEditor          = (*anthropic.Provider)(nil)
	_ proxy.PrepareEditor              = (*optimize.Optimizer)(nil)
	_ proxy.ObjectPlacedCounter        = (*optimize.Optimizer)(nil)
)

// One edit of the caller's body gives, byte for byte, what the stages
// gave one after the other on bytes (pass-through with the cache
// breakpoints or usage option, cache key, directive, an imposed output
// limit), with the members Members finds in it: bodies of both shapes,
// agent-sized ones, and a long system string the breakpoints and the
// directive both rewrite.
func TestOneEditMatchesStagesInTurn(t *testing.T) {
	ocfg, _ := openai.Defaults("openai")
	op, err := openai.New(ocfg)
	if err != nil {
		t.Fatal(err)
	}
	ap, err := anthropic.New(anthropic.Config{BaseURL: "http://127.0.0.1:1"})
	if err != nil {
		t.Fatal(err)
	}
	opt := optimize.New(optimize.Config{})
	long := strings.Repeat("You are careful. ", 400)
	bodies := map[gw.Shape][][]byte{
		gw.ShapeC: {
			[]byte(`{"model":"x","messages":[{"role":"user","content":"hi"}],"stream":true}`),
			[]byte(`{"model":"x","messages":[{"role":"system","content":"s"},{"role":"user","content":"hi"}],"stream_options":{"include_usage":false},"max_tokens":9}`),
			[]byte(` { "messages" : [ ] , "prompt_cache_key":"mine" }` + "\n"),
		},
		gw.ShapeM: {
			[]byte(`{"model":"x","max_tokens":5,"messages":[{"role":"user","content":"hi"}]}`),
			[]byte(`{"model":"x","system":"` + long + `","messages":[{"role":"user","content":"` + long + `"},{"role":"assistant","content":"ok"},{"role":"user","content":[{"type":"text","text":"` + long + `"}]}],"tools":[{"name":"t","input_schema":{}}]}`),
			[]byte(`{"model":"x","system":[{"type":"text","text":"` + long + `"}],"messages":[{"role":"user","content":"hi"}],"thread":{"type":"continue"}}`),
		},
	}
	for name, shape := range map[string]gw.Shape{"C": gw.ShapeC, "M": gw.ShapeM} {
		c := agentbody.New(name, "m", 40<<10, "edit", 2)
		for k := range c.Turns() {
			bodies[shape] = append(bodies[shape], c.Body(k))
		}
	}
	h := http.Header{}
	for shape, bs := range bodies {
		for i, body := range bs {
			var pass proxy.PassThroughEditor = ap
			var passBytes func([]byte) ([]byte, bool, error) = func(b []byte) ([]byte, bool, error) { return ap.PassThrough(b, "claude-x", true) }
			if shape == gw.ShapeC {
				pass = op
				passBytes = func(b []byte) ([]byte, bool, error) { return op.PassThrough(b, "gpt-x", true) }
			}
			model := "claude-x"
			if shape == gw.ShapeC {
				model = "gpt-x"
			}
			// In turn, on bytes.
			want, wantHide, err := passBytes(body)
			if err != nil {
				t.Fatal(err)
			}
			if shape == gw.ShapeC {
				if want, err = op.SetCacheKey(want, "gw-key"); err != nil {
					t.Fatal(err)
				}
			}
			want, wantApplied, err := opt.Prepare(shape, want, false, h)
			if err != nil {
				t.Fatal(err)
			}
			if want, err = outlimit.Set(shape, "openai", want, 77); err != nil {
				t.Fatal(err)
			}
			// One edit: of the scanned body, and of the body with the
			// messages' elements known (from the parse, as callerObject
			// has them).
			for _, known := range []bool{false, true} {
				obj, err := rawjson.NewObject(body)
				if err != nil {
					t.Fatal(err)
				}
				if known {
					els, err := rawjson.Elements(obj.Get("messages"))
					if err != nil {
						t.Fatal(err)
					}
					if env, err := reqbody.Parse(shape, body); err == nil {
						els = env.Messages
					}
					if els == nil {
						els = []rawjson.Span{}
					}
					obj.KnowElements("messages", els)
				}
				e := obj.Edit()
				hide, err := pass.PassThroughEdit(e, model, true)
				if err != nil {
					t.Fatal(err)
				}
				if shape == gw.ShapeC {
					if err := op.SetCacheKeyEdit(e, "gw-key"); err != nil {
						t.Fatal(err)
					}
				}
				applied, err := opt.PrepareEdit(shape, e, false, h)
				if err != nil {
					t.Fatal(err)
				}
				if err := outlimit.SetEdit(shape, "openai", e, 77); err != nil {
					t.Fatal(err)
				}
				got := e.Object()
				if !bytes.Equal(got.Bytes(), want) || hide != wantHide || applied != wantApplied {
					t.Fatalf("%s body %d (elements known %v): one edit differs (hide %v/%v, applied %v/%v):\n got %.300q\nwant %.300q", shape, i, known, hide, wantHide, applied, wantApplied, got.Bytes(), want)
				}
				if shape == gw.ShapeM && i == 1 && (bytes.Count(want, []byte(`"cache_control"`)) != 4 || !bytes.Contains(want, optimize.Segment(gw.ShapeM))) {
					t.Fatalf("the long system string got no breakpoints or no directive: %.300q", want)
				}
				ms, err := rawjson.Members(want)
				if err != nil || !reflect.DeepEqual(got.Members(), ms) {
					t.Fatalf("%s body %d: members %+v, want %+v (%v)", shape, i, got.Members(), ms, err)
				}
			}
		}
	}
}

// BenchmarkStagesAgentTurn is the vendor body of an agent's follow-up
// turn (110 KB) made as the native paths make it: the parse, then one
// edit of the caller's body by the pass-through (M: the cache
// breakpoints), the cache key (C) and the directive, written once; with
// the messages' elements from the parse (known) or scanned again by the
// stages that read them (go test -run '^$' -bench StagesAgentTurn
// -benchmem ./proxy/).
func BenchmarkStagesAgentTurn(b *testing.B) {
	ocfg, _ := openai.Defaults("openai")
	op, err := openai.New(ocfg)
	if err != nil {
		b.Fatal(err)
	}
	ap, err := anthropic.New(anthropic.Config{BaseURL: "http://127.0.0.1:1"})
	if err != nil {
		b.Fatal(err)
	}
	opt := optimize.New(optimize.Config{})
	h := http.Header{}
	for _, name := range []string{"C", "M"} {
		shape, model := gw.ShapeC, "gpt-x"
		var pass proxy.PassThroughEditor = op
		if name == "M" {
			shape, model, pass = gw.ShapeM, "claude-x", ap
		}
		c := agentbody.New(name, "m", 110<<10, "bench", 2)
		body := c.Body(1)
		for _, known := range []bool{false, true} {
			b.Run(name+"/known="+strconv.FormatBool(known), func(b *testing.B) {
				b.ReportAllocs()
				b.SetBytes(int64(len(body)))
				for b.Loop() {
					env, err := reqbody.Parse(shape, body)
					if err != nil {
						b.Fatal(err)
					}
					obj := rawjson.ObjectFrom(body, env.Top)
					if known {
						obj.KnowElements("messages", env.Messages)
					}
					e := obj.Edit()
					if _, err := pass.PassThroughEdit(e, model, true); err != nil {
						b.Fatal(err)
					}
					if shape == gw.ShapeC {
						if err := op.SetCacheKeyEdit(e, "gw-key"); err != nil {
							b.Fatal(err)
						}
					}
					if _, err := opt.PrepareEdit(shape, e, false, h); err != nil {
						b.Fatal(err)
					}
					_ = e.Bytes()
				}
			})
		}
	}
}

// A body replaced by other bytes loses the spans found in the old one;
// the same bytes keep them.
func TestSetBodyDropsStaleSpans(t *testing.T) {
	body := []byte(`{"model":"m","messages":[{"role":"user","content":"hi"}]}`)
	ms, err := rawjson.Members(body)
	if err != nil {
		t.Fatal(err)
	}
	in := proxy.Inbound{Body: body, Members: ms, Messages: []rawjson.Span{{Start: 0, End: 1}}}
	in.SetBody(body)
	if in.Members == nil || in.Messages == nil {
		t.Fatal("the same bytes lost their spans")
	}
	in.SetBody(append([]byte(nil), body...))
	if in.Members != nil || in.Messages != nil {
		t.Fatalf("a new body kept the old spans: %+v %+v", in.Members, in.Messages)
	}
}
