package mcp

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	gw "github.com/gwlabs/gateway"
)

// JSON-RPC error codes of the gateway's own refusals, in the
// server-error range JSON-RPC leaves to implementations, clear of the
// codes the SDK gives meaning (-32001, -32003 to -32005, MCP's -32002,
// -32021, -32022, -32042).
const (
	// CodeNotAllowed: the caller's allow lists admit no such item.
	CodeNotAllowed = -32010
	// CodeRateLimited: the key's tool calls are over its limit (HTTP
	// 429 with Retry-After; data.retry_after in seconds).
	CodeRateLimited = -32029
	// CodeUnavailable: every server the caller may reach is down.
	CodeUnavailable = -32011
	// CodeGateway: any other refusal; data.type is the gateway's
	// error type.
	CodeGateway = -32000
)

// receive is the SDK session's middleware: the lists and reads of the
// operator's servers, filtered by the caller's allow lists. Everything
// else (initialize, ping, logging) is the SDK's.
func (e *Endpoint) receive(next sdk.MethodHandler) sdk.MethodHandler {
	return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
		switch method {
		case "tools/list", "prompts/list", "resources/list", "resources/templates/list", "prompts/get", "resources/read", "completion/complete", "resources/subscribe", "resources/unsubscribe":
		default:
			return next(ctx, method, req)
		}
		s := e.sessionOf(req)
		if s == nil {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: "session not found"}
		}
		p := s.principal.Load()
		acc, err := e.access(ctx, p)
		if err != nil {
			return nil, rpcError(err)
		}
		switch method {
		case "tools/list":
			return e.listTools(ctx, acc)
		case "prompts/list":
			return e.listPrompts(ctx, acc)
		case "resources/list":
			return e.listResources(ctx, acc)
		case "resources/templates/list":
			return e.listTemplates(ctx, acc)
		case "prompts/get":
			return e.getPrompt(ctx, acc, req.GetParams().(*sdk.GetPromptParams))
		case "resources/read":
			return e.readResource(ctx, acc, req.GetParams().(*sdk.ReadResourceParams))
		case "completion/complete":
			return e.complete(ctx, acc, req.GetParams().(*sdk.CompleteParams))
		}
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: method + " is not supported through the gateway"}
	}
}

// rpcError is a gateway error as a JSON-RPC error.
func rpcError(err error) error {
	var jerr *jsonrpc.Error
	if errors.As(err, &jerr) {
		return jerr
	}
	e := gw.AsError(err)
	return &jsonrpc.Error{Code: CodeGateway, Message: e.Message, Data: mustJSON(map[string]any{"type": e.Code})}
}

// fanOut runs f on every server the caller may reach, at once, and
// returns their results in the servers' order, and the names of those that failed.
func fanOut[T any](ctx context.Context, e *Endpoint, acc access, f func(*server, context.Context) ([]T, error)) (out [][]T, names []string, failed []string) {
	var wg sync.WaitGroup
	var mu sync.Mutex
	type res struct {
		i     int
		items []T
	}
	var got []res
	set := e.servers()
	for i, s := range set.list {
		if !acc.allowsServer(s.name) {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			items, err := f(s, ctx)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				// The server's name only: its error may carry its address,
				// which callers never see (the log and health have it).
				failed = append(failed, s.name)
				e.cfg.Logger.Warn("mcp server left out of a list", "server", s.name, "err", err)
				return
			}
			got = append(got, res{i, items})
		}()
	}
	wg.Wait()
	sort.Slice(got, func(a, b int) bool { return got[a].i < got[b].i })
	for _, r := range got {
		out = append(out, r.items)
		names = append(names, set.list[r.i].name)
	}
	sort.Strings(failed)
	return out, names, failed
}

func (e *Endpoint) anyServer(acc access) bool {
	for _, s := range e.servers().list {
		if acc.allowsServer(s.name) {
			return true
		}
	}
	return false
}

// listTools lists the tools the caller may call, as SERVER__name. A
// caller allowed no tool gets an error saying so, not an empty list.
func (e *Endpoint) listTools(ctx context.Context, acc access) (sdk.Result, error) {
	if len(e.servers().list) == 0 {
		return nil, &jsonrpc.Error{Code: CodeUnavailable, Message: "no MCP server is configured on this gateway"}
	}
	if !e.anyServer(acc) {
		return nil, notAllowedNothing()
	}
	lists, names, failed := fanOut(ctx, e, acc, (*server).tools)
	res := &sdk.ListToolsResult{Tools: []*sdk.Tool{}}
	for i, tools := range lists {
		for _, t := range tools {
			if !acc.allows(names[i], t.Name) {
				continue
			}
			c := *t
			c.Name = names[i] + gw.MCPSeparator + t.Name
			res.Tools = append(res.Tools, &c)
		}
	}
	if len(res.Tools) == 0 {
		if len(failed) > 0 {
			return nil, &jsonrpc.Error{Code: CodeUnavailable, Message: "no MCP server this key may use is reachable (down: " + strings.Join(failed, ", ") + "); retry later"}
		}
		if acc.key != nil || acc.account != nil {
			return nil, notAllowedNothing()
		}
	}
	return res, nil
}

func notAllowedNothing() error {
	return &jsonrpc.Error{Code: CodeNotAllowed, Message: "this API key is allowed no MCP tools on this gateway; ask the operator to grant servers or tools to the key or its account (gateway mcp allow)"}
}

func (e *Endpoint) listPrompts(ctx context.Context, acc access) (sdk.Result, error) {
	lists, names, _ := fanOut(ctx, e, acc, (*server).prompts)
	res := &sdk.ListPromptsResult{Prompts: []*sdk.Prompt{}}
	for i, ps := range lists {
		for _, p := range ps {
			if acc.allows(names[i], p.Name) {
				c := *p
				c.Name = names[i] + gw.MCPSeparator + p.Name
				res.Prompts = append(res.Prompts, &c)
			}
		}
	}
	return res, nil
}

func (e *Endpoint) listResources(ctx context.Context, acc access) (sdk.Result, error) {
	lists, names, _ := fanOut(ctx, e, acc, (*server).resources)
	res := &sdk.ListResourcesResult{Resources: []*sdk.Resource{}}
	for i, rs := range lists {
		for _, r := range rs {
			if acc.allows(names[i], r.Name) {
				c := *r
				c.Name = names[i] + gw.MCPSeparator + r.Name
				res.Resources = append(res.Resources, &c)
			}
		}
	}
	return res, nil
}

func (e *Endpoint) listTemplates(ctx context.Context, acc access) (sdk.Result, error) {
	lists, names, _ := fanOut(ctx, e, acc, (*server).templates)
	res := &sdk.ListResourceTemplatesResult{ResourceTemplates: []*sdk.ResourceTemplate{}}
	for i, ts := range lists {
		for _, t := range ts {
			if acc.allows(names[i], t.Name) {
				c := *t
				c.Name = names[i] + gw.MCPSeparator + t.Name
				res.ResourceTemplates = append(res.ResourceTemplates, &c)
			}
		}
	}
	return res, nil
}

// target finds the server and own name of a listed name the caller may
// reach; a name the lists do not admit is refused alike whether or not
// it exists.
func (e *Endpoint) target(acc access, name, kind string) (*server, string, error) {
	sn, item, ok := split(name)
	set := e.servers()
	s := set.byName[sn]
	if ok && s == nil && set.removed[sn] && acc.allowsServer(sn) {
		return nil, "", &jsonrpc.Error{Code: CodeUnavailable, Message: fmt.Sprintf("MCP server %s was removed from this gateway by its operator; list the tools again", sn)}
	}
	if !ok || s == nil || !acc.allows(sn, item) {
		return nil, "", &jsonrpc.Error{Code: CodeNotAllowed, Message: fmt.Sprintf("%s %q is not one this API key may use (names are SERVER%sname, as listed)", kind, clip(name, 200), gw.MCPSeparator)}
	}
	return s, item, nil
}

func (e *Endpoint) getPrompt(ctx context.Context, acc access, p *sdk.GetPromptParams) (sdk.Result, error) {
	s, item, err := e.target(acc, p.Name, "prompt")
	if err != nil {
		return nil, err
	}
	q := *p
	q.Name = item
	res, err := do(ctx, s, func(ctx context.Context, cs *sdk.ClientSession) (*sdk.GetPromptResult, error) {
		return cs.GetPrompt(ctx, &q)
	})
	if err != nil {
		return nil, upstreamRPCError(s, err)
	}
	return res, nil
}

// readResource reads a resource by its URI from the server that lists
// it (or whose template matches it) among those the caller may reach.
func (e *Endpoint) readResource(ctx context.Context, acc access, p *sdk.ReadResourceParams) (sdk.Result, error) {
	s := e.resourceServer(ctx, acc, p.URI)
	if s == nil {
		return nil, &jsonrpc.Error{Code: sdk.CodeResourceNotFound, Message: fmt.Sprintf("resource %q is not one this API key may read", clip(p.URI, 200))}
	}
	res, err := do(ctx, s, func(ctx context.Context, cs *sdk.ClientSession) (*sdk.ReadResourceResult, error) {
		return cs.ReadResource(ctx, p)
	})
	if err != nil {
		return nil, upstreamRPCError(s, err)
	}
	return res, nil
}

func (e *Endpoint) resourceServer(ctx context.Context, acc access, uri string) *server {
	set := e.servers()
	for _, s := range set.list {
		if !acc.allowsServer(s.name) {
			continue
		}
		rs, _ := s.resources(ctx)
		for _, r := range rs {
			if r.URI == uri && acc.allows(s.name, r.Name) {
				return s
			}
		}
	}
	for _, s := range set.list {
		if !acc.allowsServer(s.name) {
			continue
		}
		ts, _ := s.templates(ctx)
		for _, t := range ts {
			prefix, _, _ := strings.Cut(t.URITemplate, "{")
			if prefix != "" && strings.HasPrefix(uri, prefix) && acc.allows(s.name, t.Name) {
				return s
			}
		}
	}
	return nil
}

// complete routes a completion to the prompt's server; other references
// get no completions.
func (e *Endpoint) complete(ctx context.Context, acc access, p *sdk.CompleteParams) (sdk.Result, error) {
	empty := &sdk.CompleteResult{Completion: sdk.CompletionResultDetails{Values: []string{}}}
	if p.Ref == nil || p.Ref.Type != "ref/prompt" {
		return empty, nil
	}
	s, item, err := e.target(acc, p.Ref.Name, "prompt")
	if err != nil {
		// A hint, never a refusal: nothing to offer for a prompt the
		// caller cannot use.
		return empty, nil
	}
	q := *p
	ref := *p.Ref
	ref.Name = item
	q.Ref = &ref
	res, err := do(ctx, s, func(ctx context.Context, cs *sdk.ClientSession) (*sdk.CompleteResult, error) {
		return cs.Complete(ctx, &q)
	})
	if err != nil {
		return nil, upstreamRPCError(s, err)
	}
	return res, nil
}

// upstreamRPCError passes a server's own JSON-RPC error on, and turns a
// failure to reach it into one naming the server (never its address).
func upstreamRPCError(s *server, err error) error {
	var jerr *jsonrpc.Error
	if answered(err) && errors.As(err, &jerr) {
		return jerr
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return &jsonrpc.Error{Code: CodeUnavailable, Message: fmt.Sprintf("MCP server %s did not answer within %s", s.name, s.cfg.Timeout)}
	}
	return &jsonrpc.Error{Code: CodeUnavailable, Message: fmt.Sprintf("MCP server %s is unavailable; retry later", s.name)}
}
