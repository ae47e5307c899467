package mcp_test

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"

	gw "github.com/gwlabs/gateway"
	"github.com/gwlabs/gateway/auth"
	"github.com/gwlabs/gateway/mcp"
	"github.com/gwlabs/gateway/proxy"
)

// spans records the spans a gateway starts.
type spans struct {
	mu  sync.Mutex
	all []*span
}

type span struct {
	name   string
	attrs  map[string]any
	failed bool
	ended  bool
}

func (s *spans) StartRequest(ctx context.Context, name string, h http.Header) (context.Context, proxy.Span) {
	return s.Start(ctx, name, false)
}

func (s *spans) Start(ctx context.Context, name string, client bool) (context.Context, proxy.Span) {
	s.mu.Lock()
	defer s.mu.Unlock()
	sp := &span{name: name, attrs: map[string]any{}}
	s.all = append(s.all, sp)
	return ctx, &spanRef{s, sp}
}

type spanRef struct {
	s  *spans
	sp *span
}

func (r *spanRef) SetName(n string) { r.s.mu.Lock(); r.sp.name = n; r.s.mu.Unlock() }
func (r *spanRef) SetAttributes(a ...proxy.Attr) {
	r.s.mu.Lock()
	defer r.s.mu.Unlock()
	for _, x := range a {
		r.sp.attrs[x.Key] = x.Value
	}
}
func (r *spanRef) Fail(error) { r.s.mu.Lock(); r.sp.failed = true; r.s.mu.Unlock() }
func (r *spanRef) End()       { r.s.mu.Lock(); r.sp.ended = true; r.s.mu.Unlock() }

// runs counts the tool calls of each run.
type runs struct {
	mu      sync.Mutex
	counted map[string][]*gw.Record
	refuse  string
}

func (r *runs) Admit(ctx context.Context, run string, p *gw.Principal) error {
	if run == r.refuse {
		return &gw.Error{Code: gw.CodeInsufficientBalance, Message: "the run's budget is spent"}
	}
	return nil
}

func (r *runs) Count(ctx context.Context, run string, rec *gw.Record) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.counted[run] = append(r.counted[run], rec)
}

// TestToolCallSpansAndRuns: a tool call is an "mcp tools/call" span
// with the tool, server and session, the upstream call a child span;
// its settle is traced; a call naming a run is counted toward it, and a
// run that refuses stops the call before the server.
func TestToolCallSpansAndRuns(t *testing.T) {
	tr := &spans{}
	rn := &runs{counted: map[string][]*gw.Record{}, refuse: "run-spent"}
	e := newEnv(t, options{config: func(c *mcp.Config) {
		gwy, err := proxy.New(proxy.Config{Store: c.Gateway.Store(), Auth: &auth.Authenticator{Keys: c.Gateway.Store()}, Providers: map[string]gw.Provider{}, Tracer: tr})
		if err != nil {
			t.Fatal(err)
		}
		c.Gateway, c.Runs = gwy, rn
	}})
	sid := e.rawSession(e.key)
	call := `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"alpha__echo","arguments":{"text":"traced"}}}`
	if resp, body := e.raw("POST", e.key, sid, call, "X-Gateway-Run", "run-1"); resp.StatusCode != 200 || !strings.Contains(string(body), "alpha: traced") {
		t.Fatalf("call: %d %s", resp.StatusCode, body)
	}
	if resp, body := e.raw("POST", e.key, sid, call, "X-Gateway-Run", "run-spent"); resp.StatusCode != 200 || !strings.Contains(string(body), "run's budget is spent") {
		t.Fatalf("call of a spent run: %d %s", resp.StatusCode, body)
	}
	if n := e.up["alpha"].srv.Echoes.Load(); n != 1 {
		t.Errorf("alpha took %d echoes, want 1 (the spent run's call must not reach it)", n)
	}
	if got := rn.counted["run-1"]; len(got) != 1 || got[0].Vendor != "alpha" || got[0].Model != "echo" || got[0].Status != 200 {
		t.Errorf("run-1 counted %+v", got)
	}
	tr.mu.Lock()
	defer tr.mu.Unlock()
	var root, up, settle bool
	for _, s := range tr.all {
		switch {
		case s.name == "mcp tools/call" && s.attrs[mcp.AttrToolName] == "alpha__echo" && s.attrs[mcp.AttrServer] == "alpha" && s.attrs[mcp.AttrSessionID] == sid &&
			s.ended && s.attrs[proxy.AttrStatus] == int64(200) && s.attrs[proxy.AttrKeyID] == e.keyID && !s.failed:
			root = true
		case s.name == "mcp alpha" && s.ended:
			up = true
		case s.name == "settle":
			settle = true
		}
	}
	if !root || !up || !settle {
		t.Errorf("spans: root %v, upstream %v, settle %v: %+v", root, up, settle, tr.all)
	}
}
