package proxy_test

import (
	"context"
	"testing"

	gw "github.com/gwlabs/gateway"
	"github.com/gwlabs/gateway/auth"
	"github.com/gwlabs/gateway/proxy"
)

// sizeBiller holds one micro-cent per input byte it is told of.
type sizeBiller struct{ biller }

func (sizeBiller) Hold(r proxy.HoldRequest) (proxy.HoldPlan, error) {
	return proxy.HoldPlan{Amount: gw.Money(r.BodyBytes)}, nil
}

// TestHoldCountsExtraInput: input the vendor gets beyond the caller's
// body (a kept thread's earlier turns) is held for like the body.
func TestHoldCountsExtraInput(t *testing.T) {
	p := &provider{send: func(ctx context.Context, c *gw.Call) (*gw.Upstream, error) { return okUpstream(), nil }}
	f := newFixture(t, p, nil, nil, gw.USD)
	gwy, err := proxy.New(proxy.Config{
		Store: f.store, Auth: &auth.Authenticator{Keys: f.store},
		Providers: map[string]gw.Provider{"openai": p}, Biller: sizeBiller{},
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	in := f.inbound("req_thread")
	in.ExtraInputBytes = 5000
	x, err := gwy.Begin(ctx, in)
	if err != nil {
		t.Fatal(err)
	}
	// Issue 46 D10: the hold covers what the prompt bound lets the
	// vendor bill (three bytes a token), the extra input included.
	if got, want := f.balance(t).Held, gw.Money(proxy.PromptBound(in.Body, 5000, gw.Hosted{})*3); got != want || want < gw.Money(len(in.Body)+5000) {
		t.Errorf("held %d, want %d (the bound of body + extra input)", got, want)
	}
	if _, err := x.Finish(ctx, proxy.Outcome{Status: 502, Err: &gw.Error{Code: gw.CodeUpstream}}); err != nil {
		t.Fatal(err)
	}
}
