package proxy_test

import (
	"bytes"
	"context"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	gw "github.com/gwlabs/gateway"
	"github.com/gwlabs/gateway/auth"
	"github.com/gwlabs/gateway/optimize"
	"github.com/gwlabs/gateway/proxy"
	"github.com/gwlabs/gateway/sqlite"
)

// keyedProvider is provider with a prompt-cache key.
type keyedProvider struct{ provider }

func (p *keyedProvider) SetCacheKey(body []byte, key string) ([]byte, error) {
	return append(bytes.TrimSuffix(body, []byte("}")), []byte(`,"k":"`+key+`"}`)...), nil
}

// TestOptimizerInBeginAndFinish: the directive goes into the vendor body
// after the cache key unless switched off (per request, per key); the
// record carries its tokens, never more than the prompt, and its version.
func TestOptimizerInBeginAndFinish(t *testing.T) {
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "p.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	acct, err := st.EnsureAccount(ctx, "acme")
	if err != nil {
		t.Fatal(err)
	}
	var sent []byte
	p := &keyedProvider{provider{send: func(ctx context.Context, c *gw.Call) (*gw.Upstream, error) {
		sent = c.Body
		return okUpstream(), nil
	}}}
	gwy, err := proxy.New(proxy.Config{Store: st, Auth: &auth.Authenticator{Keys: st}, Providers: map[string]gw.Provider{"openai": p}, Optimizer: optimize.New(optimize.Config{})})
	if err != nil {
		t.Fatal(err)
	}
	body := []byte(`{"model":"openai/m","messages":[{"role":"user","content":"hi"}]}`)
	for _, tc := range []struct {
		name     string
		keyOff   bool
		header   string
		prompt   int64
		applied  bool
		wantToks int64
	}{
		{"on", false, "", 500, true, optimize.OpenAITokens() + 1}, // the o200k count rounded in the customer's favour (issue 46 D9)
		{"never more than the prompt", false, "", 7, true, 7},
		{"off by header", false, "off", 500, false, 0},
		{"off for the key", true, "", 500, false, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			id := "req_" + strings.ReplaceAll(tc.name, " ", "_")
			in := proxy.Inbound{RequestID: id, Endpoint: gw.ShapeC, Vendor: "openai", Model: "m", Body: body, Received: time.Now(),
				Principal: &gw.Principal{KeyID: "key_1", AccountID: acct.ID, OptimizeOff: tc.keyOff}, Header: http.Header{}}
			if tc.header != "" {
				in.Header.Set(optimize.Header, tc.header)
			}
			x, err := gwy.Begin(ctx, in)
			if err != nil {
				t.Fatal(err)
			}
			up, err := x.Call(ctx)
			if err != nil {
				t.Fatal(err)
			}
			up.Body.Close()
			// The scripted PassThrough returns the body as is.
			keyed, _ := (&keyedProvider{}).SetCacheKey(body, proxy.CacheKey(acct.ID))
			want := keyed
			if tc.applied {
				want, _ = optimize.Apply(gw.ShapeC, keyed)
			}
			if !bytes.Equal(sent, want) {
				t.Errorf("vendor body\n%s\nwant\n%s", sent, want)
			}
			if got := x.OptimizeHeader(); got != optimize.HeaderValue(tc.applied) {
				t.Errorf("header %q", got)
			}
			if _, err := x.Finish(ctx, proxy.Outcome{Status: 200, Success: true, Usage: gw.Usage{InputTokens: tc.prompt, OutputTokens: 5, Reported: true}}); err != nil {
				t.Fatal(err)
			}
			r, err := st.Record(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			if r.Usage.OptimizerTokens != tc.wantToks || strings.Contains(r.Note, optimize.Note()) != tc.applied {
				t.Errorf("record: optimizer tokens %d (want %d), note %q", r.Usage.OptimizerTokens, tc.wantToks, r.Note)
			}
		})
	}
	if k := proxy.CacheKey(acct.ID); strings.Contains(k, acct.ID) || k != proxy.CacheKey(acct.ID) || k == proxy.CacheKey("other") {
		t.Errorf("cache key %q must be a stable hash of the account", k)
	}
}

// TestOptimizerRefusedRequest: a request refused after its body was
// prepared (here by the rate limit) reports the directive off.
func TestOptimizerRefusedRequest(t *testing.T) {
	p := &provider{send: func(ctx context.Context, c *gw.Call) (*gw.Upstream, error) { return okUpstream(), nil }}
	f := newFixture(t, p, nil, limiter{allowed: false}, gw.USD)
	gwy, err := proxy.New(proxy.Config{Store: f.store, Auth: &auth.Authenticator{Keys: f.store}, Providers: map[string]gw.Provider{"openai": p},
		Limiter: limiter{allowed: false}, Optimizer: optimize.New(optimize.Config{})})
	if err != nil {
		t.Fatal(err)
	}
	in := f.inbound("req_refused")
	in.Body = []byte(`{"model":"openai/m","messages":[{"role":"user","content":"hi"}]}`)
	x, err := gwy.Begin(context.Background(), in)
	if gw.ErrorCode(err) != gw.CodeRateLimited || x.Optimized || x.OptimizeHeader() != "off" {
		t.Fatalf("err %v, optimized %v, header %q", err, x.Optimized, x.OptimizeHeader())
	}
	r, err := f.store.Record(context.Background(), "req_refused")
	if err != nil || strings.Contains(r.Note, "optimizer") {
		t.Errorf("record %+v, %v", r, err)
	}
}
