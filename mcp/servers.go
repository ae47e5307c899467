package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"sort"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	gw "github.com/gwlabs/gateway"
)

// serverSet is what an Endpoint serves at one moment: the configuration
// file's servers, then the store's, by name. A published set is never
// changed: Refresh publishes a new one.
type serverSet struct {
	list   []*server
	byName map[string]*server
	stored map[string]bool // names of servers from the store
	// removed names the servers served before and removed since, so
	// that a call of one of their tools says so.
	removed map[string]bool
	// skipped are the store's servers that cannot be served, with why.
	skipped []gw.VendorHealth
}

// maxRemoved bounds serverSet.removed.
const maxRemoved = 1000

func (ss *serverSet) add(s *server, stored bool) {
	ss.list = append(ss.list, s)
	ss.byName[s.name] = s
	if stored {
		ss.stored[s.name] = true
	}
}

func newServerSet() *serverSet {
	return &serverSet{byName: map[string]*server{}, stored: map[string]bool{}, removed: map[string]bool{}}
}

// servers is the set being served.
func (e *Endpoint) servers() *serverSet { return e.set.Load() }

// ServerConfigOf is a stored server's settings as the endpoint serves
// them.
func ServerConfigOf(s gw.MCPServer) ServerConfig {
	sc := ServerConfig{Name: s.Name, URL: s.URL, Headers: s.Headers, Command: s.Command, Dir: s.Dir, Timeout: s.Timeout, Price: s.Price, ToolPrices: s.ToolPrices}
	for k, v := range s.Env {
		sc.Env = append(sc.Env, k+"="+v)
	}
	slices.Sort(sc.Env)
	return sc
}

// defaulted is c with its defaults filled in, as a server keeps it.
func (c ServerConfig) defaulted() ServerConfig {
	if c.Timeout <= 0 {
		c.Timeout = 60 * time.Second
	}
	return c
}

// Refresh reads the stored servers and serves them beside the
// configuration file's: a server added is started (in the background),
// one removed is closed (its stdio process ends; its tools leave the
// lists and calls of them are refused saying so), one changed is closed
// and started again with its new settings; unchanged ones keep their
// sessions. The gateway calls it when the store's key generation moves
// (every change of a stored server moves it), so every instance picks a
// change up within its key watch interval.
func (e *Endpoint) Refresh(ctx context.Context) error {
	if e.cfg.Stored == nil {
		return nil
	}
	// Read under the lock: a read older than another's is never
	// applied after it.
	e.refreshMu.Lock()
	defer e.refreshMu.Unlock()
	stored, err := e.cfg.Stored.MCPServers(ctx)
	if err != nil {
		return fmt.Errorf("mcp: read the stored servers: %w", err)
	}
	select {
	case <-e.stop:
		return nil // closed: start nothing
	default:
	}
	old := e.servers()
	next := newServerSet()
	for _, s := range old.list {
		if !old.stored[s.name] {
			next.add(s, false)
		}
	}
	var started []*server
	for _, st := range stored {
		sc := ServerConfigOf(st).defaulted()
		var why string
		switch err := sc.Validate(); {
		case next.byName[sc.Name] != nil && !next.stored[sc.Name]:
			why = "not served: the configuration file has a server of this name"
		case err != nil:
			why = "not served: " + err.Error()
		case len(sc.Command) > 0 && !e.cfg.StoredStdio:
			why = "not started: a stdio server added through the admin API runs only when the operator allows it (mcp.admin_stdio = true)"
		}
		if why != "" {
			next.skipped = append(next.skipped, gw.VendorHealth{Vendor: "mcp:" + sc.Name, Breaker: gw.BreakerClosed, Keys: []gw.KeyHealth{{Name: "config", Out: true, Reason: why}}})
			continue
		}
		s := old.byName[sc.Name]
		if s == nil || !old.stored[sc.Name] || !reflect.DeepEqual(s.cfg, sc) {
			s = newServer(e, sc)
			started = append(started, s)
		}
		next.add(s, true)
	}
	var closing []*server
	for _, s := range old.list {
		if next.byName[s.name] != s {
			closing = append(closing, s)
			if next.byName[s.name] == nil {
				next.removed[s.name] = true
			}
		}
	}
	for n := range old.removed {
		if next.byName[n] == nil && len(next.removed) < maxRemoved {
			next.removed[n] = true
		}
	}
	e.set.Store(next)
	for _, s := range closing {
		s.close()
	}
	if len(started) > 0 || len(closing) > 0 {
		names := func(ss []*server) []string {
			var out []string
			for _, s := range ss {
				out = append(out, s.name)
			}
			sort.Strings(out)
			return out
		}
		e.cfg.Logger.Info("mcp servers changed", "started", names(started), "closed", names(closing))
	}
	for _, s := range started {
		go e.warmOne(s)
	}
	if len(started) > 0 || len(closing) > 0 {
		e.notifyListsChanged()
	}
	return nil
}

// notifyListsChanged tells the sessions this instance serves that the
// tools, prompts and resources changed (notifications/.../list_changed,
// on their GET streams), so that clients list them again. The SDK sends
// these only when its own lists change, and has no call to send them
// otherwise, so a placeholder is added and removed at once (one
// notification each, debounced by the SDK); the SDK never lists nor
// serves it: the gateway answers every list, call, get and read itself.
func (e *Endpoint) notifyListsChanged() {
	const name = "gateway-lists-changed"
	e.srv.AddTool(&sdk.Tool{Name: name, InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) { return nil, errPlaceholder })
	e.srv.RemoveTools(name)
	e.srv.AddPrompt(&sdk.Prompt{Name: name}, func(context.Context, *sdk.GetPromptRequest) (*sdk.GetPromptResult, error) { return nil, errPlaceholder })
	e.srv.RemovePrompts(name)
	const uri = "gateway:lists-changed"
	e.srv.AddResource(&sdk.Resource{Name: name, URI: uri}, func(context.Context, *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
		return nil, errPlaceholder
	})
	e.srv.RemoveResources(uri)
}

var errPlaceholder = errors.New("not served")

// poll reads the stored servers every ServerPoll, in case a change
// reached the store without the gateway hearing of it.
func (e *Endpoint) poll() {
	t := time.NewTicker(e.cfg.ServerPoll)
	defer t.Stop()
	for {
		select {
		case <-e.stop:
			return
		case <-t.C:
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		if err := e.Refresh(ctx); err != nil {
			e.cfg.Logger.Warn("mcp: stored servers not read", "err", err)
		}
		cancel()
	}
}

// warmOne opens a server's session and reads its tools, so that the
// first caller does not wait for it to start.
func (e *Endpoint) warmOne(s *server) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		select {
		case <-e.stop:
			cancel()
		case <-ctx.Done():
		}
	}()
	if _, err := s.tools(ctx); err != nil {
		e.cfg.Logger.Warn("mcp server not reachable at start", "server", s.name, "err", err)
	}
}

// Servers names the servers being served: the configuration file's and
// the store's (source "config" or "store").
func (e *Endpoint) Servers() map[string]string {
	set := e.servers()
	out := make(map[string]string, len(set.list))
	for _, s := range set.list {
		out[s.name] = "config"
		if set.stored[s.name] {
			out[s.name] = "store"
		}
	}
	return out
}
