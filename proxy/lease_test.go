package proxy_test

import (
	"context"
	"testing"
	"time"

	gw "github.com/gwlabs/gateway"
	"github.com/gwlabs/gateway/auth"
	"github.com/gwlabs/gateway/proxy"
)

// Item 7: a killed process's holds stayed for their full 30 minutes, so
// a small-balance account was refused (402) for requests its balance
// covered. Now a hold is a short lease its live process renews: the
// process that placed A's hold dies (it never finishes nor renews it);
// once the lease has passed, a restarted gateway on the same store
// serves A's next request.
func TestCrashedProcessHoldLapsesWithinTheLease(t *testing.T) {
	p := &provider{send: func(ctx context.Context, c *gw.Call) (*gw.Upstream, error) { return okUpstream(), nil }}
	f := newFixture(t, p, nil, nil, 15*gw.Cent) // one 10-cent hold fits, two do not
	ctx := context.Background()
	// The process that crashed placed its hold a little more than two
	// minutes ago.
	crashed, err := proxy.New(proxy.Config{Store: f.store, Auth: &auth.Authenticator{Keys: f.store},
		Providers: map[string]gw.Provider{"openai": p}, Biller: biller{hold: 10 * gw.Cent, cost: 2 * gw.Cent},
		Now: func() time.Time { return time.Now().Add(-2*time.Minute - time.Second) }})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := crashed.Begin(ctx, f.inbound("req_cut")); err != nil {
		t.Fatal(err)
	}
	// Killed here: never finished, never renewed. The restarted
	// gateway serves A.
	x, err := f.gw.Begin(ctx, f.inbound("req_next"))
	if err != nil {
		t.Fatalf("A's request after the crash: %v", err)
	}
	if _, err := x.Call(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := x.Finish(ctx, proxy.Outcome{Status: 200}); err != nil {
		t.Fatal(err)
	}
}

// A live process renews its holds' leases: a request waiting longer
// than the lease keeps its hold.
func TestLiveProcessRenewsItsLeases(t *testing.T) {
	p := &provider{send: func(ctx context.Context, c *gw.Call) (*gw.Upstream, error) { return okUpstream(), nil }}
	f := newFixture(t, p, nil, nil, 15*gw.Cent)
	ctx := context.Background()
	at := time.Now().Add(-proxy.DefaultHoldTTL + 300*time.Millisecond)
	lapse := at.Add(proxy.DefaultHoldTTL) // the lease's end unless renewed
	clock := func() time.Time { return at }
	g, err := proxy.New(proxy.Config{Store: f.store, Auth: &auth.Authenticator{Keys: f.store},
		Providers: map[string]gw.Provider{"openai": p}, Biller: biller{hold: 10 * gw.Cent, cost: 2 * gw.Cent},
		Now: func() time.Time { return clock() }})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := g.Begin(ctx, f.inbound("req_long")); err != nil {
		t.Fatal(err)
	}
	// The lease is about to end; the process renews it.
	at = time.Now()
	proxy.RenewLeasesOnce(g, ctx)
	for time.Now().Before(lapse.Add(10 * time.Millisecond)) {
		time.Sleep(10 * time.Millisecond) // until the unrenewed lease would have ended
	}
	// Another request does not fit beside the live hold.
	if _, err := f.gw.Begin(ctx, f.inbound("req_other")); gw.ErrorCode(err) != gw.CodeInsufficientBalance {
		t.Fatalf("a second request beside the live hold: %v", err)
	}
}
