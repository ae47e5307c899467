package proxy_test

import (
	"bytes"
	"context"
	"strings"
	"testing"

	gw "github.com/gwlabs/gateway"
	"github.com/gwlabs/gateway/proxy"
)

// TestLetGoKeepsTheBill: a stream that lets go of its request once the
// vendor answered (LetGo, LetGoBody) is settled exactly as one that kept
// it, the dispute's prompt bound included; what it let go is gone.
func TestLetGoKeepsTheBill(t *testing.T) {
	p := &provider{send: func(ctx context.Context, c *gw.Call) (*gw.Upstream, error) { return okUpstream(), nil }}
	f := newFixture(t, p, nil, nil, gw.USD)
	ctx := context.Background()
	body := []byte(`{"model":"openai/m","stream":true,"messages":[{"role":"user","content":"` + strings.Repeat("a", 40<<10) + `"}]}`)
	// More prompt than the bound allows (one token a byte plus a margin):
	// disputed, charged at the bound.
	u := gw.Usage{InputTokens: int64(len(body)) * 3, OutputTokens: 10, Reported: true}
	var recs []*gw.Record
	for i, letGo := range []bool{false, true} {
		in := f.inbound([]string{"req_kept", "req_letgo"}[i])
		in.Body, in.Stream = body, true
		in.Text = []gw.Text{{Text: "hello"}}
		x, err := f.gw.Begin(ctx, in)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := x.Call(ctx); err != nil {
			t.Fatal(err)
		}
		if letGo {
			x.LetGoBody()
			x.LetGo()
			if x.Inbound().Body != nil || x.Inbound().Text != nil || x.Body != nil {
				t.Errorf("after LetGo: body %d bytes, text %v, vendor body %d bytes", len(x.Inbound().Body), x.Inbound().Text, len(x.Body))
			}
		}
		if _, err := x.Finish(ctx, proxy.Outcome{Status: 200, Usage: u, Success: true}); err != nil {
			t.Fatal(err)
		}
		recs = append(recs, x.Record())
	}
	kept, let := recs[0], recs[1]
	if !strings.Contains(kept.Note, proxy.NoteUsageDisputed) {
		t.Fatalf("the kept request is not disputed: %q", kept.Note)
	}
	if kept.Usage != let.Usage || kept.Charge != let.Charge || kept.DisputedCost != let.DisputedCost || kept.Note != let.Note {
		t.Errorf("kept: %+v %d %d %q; let go: %+v %d %d %q", kept.Usage, kept.Charge, kept.DisputedCost, kept.Note, let.Usage, let.Charge, let.DisputedCost, let.Note)
	}
}

// TestLetGoBodyKeptForABodyGuard: a guard that reads the body itself (no
// Inbound.Text) still gets it when the body is let go before Call.
func TestLetGoBodyKeptForABodyGuard(t *testing.T) {
	p := &provider{send: func(ctx context.Context, c *gw.Call) (*gw.Upstream, error) { return okUpstream(), nil }}
	var seen []byte
	g := guardFunc(func(ctx context.Context, shape gw.Shape, body []byte) (proxy.Verdict, error) {
		seen = body
		return proxy.Verdict{}, nil
	})
	f := newFixture(t, p, g, nil, gw.USD)
	ctx := context.Background()
	in := f.inbound("req_guard")
	x, err := f.gw.Begin(ctx, in)
	if err != nil {
		t.Fatal(err)
	}
	x.LetGoBody()
	if x.Inbound().Body == nil {
		t.Fatal("the body went before the guard read it")
	}
	if _, err := x.Call(ctx); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(seen, in.Body) {
		t.Errorf("the guard read %q, want %q", seen, in.Body)
	}
	x.LetGoBody()
	if x.Inbound().Body != nil {
		t.Error("the body stayed once the guard had read it")
	}
	if _, err := x.Finish(ctx, proxy.Outcome{Status: 200, Usage: gw.Usage{InputTokens: 1, Reported: true}, Success: true}); err != nil {
		t.Fatal(err)
	}
}
