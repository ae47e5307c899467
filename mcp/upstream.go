package mcp

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	gw "github.com/gwlabs/gateway"
	"github.com/gwlabs/gateway/internal/upstream"
)

// server is one upstream MCP server: one client session per gateway
// instance, shared by every caller (a stdio server is one process),
// opened on first use and opened again when it ends (a stdio process
// that exited, an HTTP server that forgot the session): calls then
// re-initialise it once before failing. Its lists are kept for
// ListTTL, dropped when the server says they changed.
type server struct {
	cfg  ServerConfig
	e    *Endpoint
	br   *upstream.Breakers
	name string

	dialMu sync.Mutex // one dial at a time

	mu       sync.Mutex // guards what follows
	sess     *sdk.ClientSession
	lastErr  error     // the last failure to connect or call, for health
	nextDial time.Time // no dial before this after a failed one
	lists    map[string]listEntry
	closed   bool // removed from what the endpoint serves: no more dials
}

type listEntry struct {
	items any // []*sdk.Tool, []*sdk.Prompt, []*sdk.Resource, []*sdk.ResourceTemplate
	at    time.Time
}

// redialAfter spaces the dials of a server that fails to start.
const redialAfter = time.Second

func newServer(e *Endpoint, cfg ServerConfig) *server {
	if cfg.Timeout <= 0 {
		cfg.Timeout = 60 * time.Second
	}
	return &server{cfg: cfg, e: e, name: cfg.Name, br: upstream.NewBreakers(e.cfg.BreakerFailures, e.cfg.BreakerInterval, e.cfg.BreakerAccounts), lists: map[string]listEntry{}}
}

// session returns the open client session, opening one if needed.
func (s *server) session(ctx context.Context) (*sdk.ClientSession, error) {
	s.mu.Lock()
	cs := s.sess
	s.mu.Unlock()
	if cs != nil {
		return cs, nil
	}
	// One dial at a time, outside mu: health reports and the list cache
	// never wait for a server that is slow to start.
	s.dialMu.Lock()
	defer s.dialMu.Unlock()
	s.mu.Lock()
	cs, last, next, closed := s.sess, s.lastErr, s.nextDial, s.closed
	s.mu.Unlock()
	if cs != nil {
		return cs, nil
	}
	if closed {
		return nil, fmt.Errorf("%s: %w", s.name, errRemoved)
	}
	now := s.e.cfg.Now()
	if now.Before(next) {
		return nil, fmt.Errorf("%s: not started (%v); next try in %s", s.name, last, next.Sub(now).Round(time.Millisecond))
	}
	client := sdk.NewClient(&sdk.Implementation{Name: "gateway", Version: "1"}, &sdk.ClientOptions{
		ToolListChangedHandler:     func(context.Context, *sdk.ToolListChangedRequest) { s.forget("tools") },
		PromptListChangedHandler:   func(context.Context, *sdk.PromptListChangedRequest) { s.forget("prompts") },
		ResourceListChangedHandler: func(context.Context, *sdk.ResourceListChangedRequest) { s.forget("resources") },
	})
	var t sdk.Transport
	if s.cfg.URL != "" {
		t = &sdk.StreamableClientTransport{Endpoint: s.cfg.URL, HTTPClient: s.httpClient(), MaxRetries: 1, DisableStandaloneSSE: true}
	} else {
		cmd := exec.Command(s.cfg.Command[0], s.cfg.Command[1:]...)
		cmd.Env = append(os.Environ(), s.cfg.Env...)
		cmd.Dir = s.cfg.Dir
		t = &sdk.CommandTransport{Command: cmd, TerminateDuration: 2 * time.Second}
	}
	dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), min(s.cfg.Timeout, 30*time.Second))
	defer cancel()
	cs, err := client.Connect(dctx, t, nil)
	if err != nil {
		s.mu.Lock()
		s.lastErr, s.nextDial = err, now.Add(redialAfter)
		s.mu.Unlock()
		return nil, fmt.Errorf("%s: connect: %w", s.name, err)
	}
	s.mu.Lock()
	if s.closed {
		// Removed while it started.
		s.mu.Unlock()
		_ = cs.Close()
		return nil, fmt.Errorf("%s: %w", s.name, errRemoved)
	}
	s.sess, s.lastErr = cs, nil
	clear(s.lists)
	s.mu.Unlock()
	go func() {
		// A stdio process that exits (or an HTTP session that fails for
		// good) ends the session: the next call opens another.
		err := cs.Wait()
		s.mu.Lock()
		if s.sess == cs {
			s.sess = nil
			if err == nil {
				err = errors.New("the server closed the session")
			}
			s.lastErr = err
		}
		s.mu.Unlock()
	}()
	return cs, nil
}

// httpClient sends the configured headers (the server's credentials)
// on every request to it.
func (s *server) httpClient() *http.Client {
	base := s.e.cfg.HTTPClient
	c := *base
	next := base.Transport
	if next == nil {
		next = http.DefaultTransport
	}
	c.Transport = headerTransport{next: next, headers: s.cfg.Headers}
	c.Timeout = 0 // calls are bounded by their contexts; the stream must outlive one
	return &c
}

type headerTransport struct {
	next    http.RoundTripper
	headers map[string]string
}

func (h headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if len(h.headers) > 0 {
		r = r.Clone(r.Context())
		for k, v := range h.headers {
			r.Header.Set(k, v)
		}
	}
	return h.next.RoundTrip(r)
}

// drop ends the session cs (if still current), so the next use opens a
// new one.
func (s *server) drop(cs *sdk.ClientSession, why error) {
	s.mu.Lock()
	if s.sess == cs {
		s.sess, s.lastErr = nil, why
	}
	s.mu.Unlock()
	_ = cs.Close()
}

func (s *server) forget(kind string) {
	s.mu.Lock()
	delete(s.lists, kind)
	s.mu.Unlock()
}

// gone reports an error after which the session must be opened again:
// the server forgot it (404), or the connection closed.
func gone(err error) bool {
	return errors.Is(err, sdk.ErrSessionMissing) || errors.Is(err, sdk.ErrConnectionClosed)
}

// answered reports an error the server sent (a JSON-RPC error): the
// server is up, the request was wrong.
func answered(err error) bool {
	var jerr *jsonrpc.Error
	if !errors.As(err, &jerr) {
		return false
	}
	switch jerr.Code {
	case -32003, -32004, -32005:
		// The SDK's own: a closing connection, a request its transport
		// refused (the server's 429, 502, 503 or 504).
		return false
	}
	return true
}

// do runs f on the server's session within its time-out, opening a
// session again once when the first is gone (re-initialised).
func do[T any](ctx context.Context, s *server, f func(context.Context, *sdk.ClientSession) (T, error)) (T, error) {
	ctx, cancel := context.WithTimeout(ctx, s.cfg.Timeout)
	defer cancel()
	var zero T
	for attempt := 0; ; attempt++ {
		cs, err := s.session(ctx)
		if err != nil {
			return zero, err
		}
		v, err := f(ctx, cs)
		if err != nil && gone(err) && attempt == 0 && ctx.Err() == nil {
			s.drop(cs, err)
			continue
		}
		if err != nil && errors.Is(ctx.Err(), context.DeadlineExceeded) && !errors.Is(err, context.DeadlineExceeded) {
			// The SDK does not always wrap the context's error.
			err = fmt.Errorf("%w: %w", context.DeadlineExceeded, err)
		}
		switch {
		case err == nil, answered(err):
			s.note(nil)
		case ctx.Err() == nil || errors.Is(ctx.Err(), context.DeadlineExceeded):
			s.note(err)
		}
		return v, err
	}
}

func (s *server) note(err error) {
	s.mu.Lock()
	s.lastErr = err
	s.mu.Unlock()
}

// list returns one of the server's lists (kind: tools, prompts,
// resources, templates), from the cache when fresh.
func list[T any](ctx context.Context, s *server, kind string, fetch func(context.Context, *sdk.ClientSession) ([]T, error)) ([]T, error) {
	now := s.e.cfg.Now()
	s.mu.Lock()
	if le, ok := s.lists[kind]; ok && now.Sub(le.at) < s.e.cfg.ListTTL {
		s.mu.Unlock()
		return le.items.([]T), nil
	}
	s.mu.Unlock()
	items, err := do(ctx, s, fetch)
	if err != nil {
		s.note(err)
		return nil, err
	}
	s.mu.Lock()
	s.lists[kind] = listEntry{items: items, at: now}
	s.mu.Unlock()
	return items, nil
}

func (s *server) tools(ctx context.Context) ([]*sdk.Tool, error) {
	return list(ctx, s, "tools", func(ctx context.Context, cs *sdk.ClientSession) ([]*sdk.Tool, error) {
		if cs.InitializeResult() != nil && cs.InitializeResult().Capabilities != nil && cs.InitializeResult().Capabilities.Tools == nil {
			return nil, nil
		}
		var out []*sdk.Tool
		for t, err := range cs.Tools(ctx, nil) {
			if err != nil {
				return nil, err
			}
			out = append(out, t)
			if len(out) > maxItems {
				return nil, fmt.Errorf("%s lists more than %d tools", s.name, maxItems)
			}
		}
		return out, nil
	})
}

func (s *server) prompts(ctx context.Context) ([]*sdk.Prompt, error) {
	return list(ctx, s, "prompts", func(ctx context.Context, cs *sdk.ClientSession) ([]*sdk.Prompt, error) {
		if r := cs.InitializeResult(); r != nil && r.Capabilities != nil && r.Capabilities.Prompts == nil {
			return nil, nil
		}
		var out []*sdk.Prompt
		for p, err := range cs.Prompts(ctx, nil) {
			if err != nil {
				return nil, err
			}
			if out = append(out, p); len(out) > maxItems {
				return nil, fmt.Errorf("%s lists more than %d prompts", s.name, maxItems)
			}
		}
		return out, nil
	})
}

func (s *server) resources(ctx context.Context) ([]*sdk.Resource, error) {
	return list(ctx, s, "resources", func(ctx context.Context, cs *sdk.ClientSession) ([]*sdk.Resource, error) {
		if r := cs.InitializeResult(); r != nil && r.Capabilities != nil && r.Capabilities.Resources == nil {
			return nil, nil
		}
		var out []*sdk.Resource
		for p, err := range cs.Resources(ctx, nil) {
			if err != nil {
				return nil, err
			}
			if out = append(out, p); len(out) > maxItems {
				return nil, fmt.Errorf("%s lists more than %d resources", s.name, maxItems)
			}
		}
		return out, nil
	})
}

func (s *server) templates(ctx context.Context) ([]*sdk.ResourceTemplate, error) {
	return list(ctx, s, "templates", func(ctx context.Context, cs *sdk.ClientSession) ([]*sdk.ResourceTemplate, error) {
		if r := cs.InitializeResult(); r != nil && r.Capabilities != nil && r.Capabilities.Resources == nil {
			return nil, nil
		}
		var out []*sdk.ResourceTemplate
		for p, err := range cs.ResourceTemplates(ctx, nil) {
			if err != nil {
				return nil, err
			}
			if out = append(out, p); len(out) > maxItems {
				return nil, fmt.Errorf("%s lists more than %d resource templates", s.name, maxItems)
			}
		}
		return out, nil
	})
}

// maxItems bounds one server's list of one kind.
const maxItems = 5000

// health is the server's state for /readyz and the dashboard.
func (s *server) health(now time.Time) gw.VendorHealth {
	s.mu.Lock()
	defer s.mu.Unlock()
	h := gw.VendorHealth{Vendor: "mcp:" + s.name, Breaker: s.br.State(now)}
	if s.lastErr != nil {
		h.Keys = []gw.KeyHealth{{Name: "session", Out: true, Reason: s.lastErr.Error()}}
	}
	return h
}

// errRemoved is the error of a server no longer served.
var errRemoved = errors.New("the server was removed from this gateway")

// close ends the server's session (a stdio server's process) for good.
func (s *server) close() {
	s.mu.Lock()
	cs := s.sess
	s.sess, s.closed = nil, true
	s.mu.Unlock()
	if cs != nil {
		_ = cs.Close()
	}
}
