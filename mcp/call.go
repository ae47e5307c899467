package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"regexp"
	"strconv"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	gw "github.com/gwlabs/gateway"
	"github.com/gwlabs/gateway/proxy"
)

// HeaderCharge carries a tool call's charge in cents (six decimals).
const HeaderCharge = "X-Gateway-Customer-Charge-Cents"

// Span attribute names of a tool call (OpenTelemetry's MCP
// conventions, and the gateway's server name).
const (
	AttrMethod    = "mcp.method.name"
	AttrSessionID = "mcp.session.id"
	AttrToolName  = "gen_ai.tool.name"
	AttrServer    = "gateway.mcp.server"
)

// callTool is one tools/call, its whole journey, answered as JSON (the
// transport lets a POST answer with one JSON message), in this order:
//
//	params -> the caller's allow lists (a refusal recorded) -> its run
//	-> proxy BeginTool: cool-down, the key's tool-call rate limit (429
//	with Retry-After), a hold of the call's price -> the server's
//	breakers (its own and the account's) -> the call within the
//	server's time-out (a session the server forgot is re-initialised
//	once) -> the result's size -> the guard on the result (third-party
//	text; flagged: a tool error naming the incident) -> Finish: settle at
//	the price or release, the record -> the answer.
//
// Failures of the server come back as tool errors (isError), so the
// model sees them; refusals of the caller as JSON-RPC errors.
func (e *Endpoint) callTool(w http.ResponseWriter, r *http.Request, rid string, s *session, req *jsonrpc.Request) {
	gwy := e.cfg.Gateway
	start := e.cfg.Now()
	p := s.principal.Load()
	var params sdk.CallToolParamsRaw
	if err := json.Unmarshal(req.Params, &params); err != nil || params.Name == "" {
		writeRPCError(w, http.StatusOK, req, jsonrpc.CodeInvalidParams, "tools/call needs params with a tool name (and arguments, an object)", nil)
		return
	}
	if len(params.Arguments) > 0 && params.Arguments[0] != '{' && string(params.Arguments) != "null" {
		writeRPCError(w, http.StatusOK, req, jsonrpc.CodeInvalidParams, "tools/call arguments must be an object", nil)
		return
	}
	ctx, span := gwy.StartRequest(r.Context(), "mcp tools/call", r.Header)
	defer span.End()
	span.SetAttributes(proxy.Attr{Key: AttrMethod, Value: "tools/call"}, proxy.Attr{Key: AttrToolName, Value: clip(params.Name, 200)},
		proxy.Attr{Key: AttrSessionID, Value: s.id}, proxy.Attr{Key: proxy.AttrRequestID, Value: rid})
	in := proxy.Inbound{RequestID: rid, Endpoint: proxy.EndpointMCP, Principal: p, Header: r.Header, Received: start, Span: span}
	lg := callLog{e: e, rid: rid, p: p, name: params.Name, args: params.Arguments, start: start}
	defer lg.write(ctx)

	// The allow lists: the same ones tools/list applies.
	acc, err := e.access(ctx, p)
	if err != nil {
		lg.status = http.StatusServiceUnavailable
		writeRPCError(w, http.StatusOK, req, CodeGateway, gw.AsError(err).Message, map[string]any{"type": gw.AsError(err).Code})
		return
	}
	srv, item, terr := e.target(acc, params.Name, "tool")
	if terr != nil {
		in.Vendor, in.Model = e.known(params.Name)
		jerr := terr.(*jsonrpc.Error)
		refusal := &gw.Error{Code: gw.CodeInvalidRequest, ErrorCode: "tool_not_allowed", Message: jerr.Message, NoRetry: true}
		if jerr.Code == CodeUnavailable {
			refusal.ErrorCode = "mcp_server_removed"
		}
		gwy.RefuseTool(ctx, in, refusal)
		lg.status, lg.err = refusal.Code.Status(), refusal.ErrorCode
		span.Fail(refusal)
		writeRPCError(w, http.StatusOK, req, jerr.Code, jerr.Message, nil)
		return
	}
	in.Vendor, in.Model = srv.name, item
	lg.server, lg.tool = srv.name, item
	span.SetAttributes(proxy.Attr{Key: AttrServer, Value: srv.name})
	run := r.Header.Get(HeaderRun)
	if run != "" && e.cfg.Runs != nil {
		if err := e.cfg.Runs.Admit(ctx, run, p); err != nil {
			span.Fail(err)
			gwy.RefuseTool(ctx, in, err)
			lg.status, lg.err = gw.AsError(err).Code.Status(), string(gw.AsError(err).Code)
			e.refuse(w, req, err)
			return
		}
	}

	// Admit: cool-down, rate limit, hold (proxy).
	x, err := gwy.BeginTool(ctx, in, max(acc.rpm, 0), srv.cfg.price(item))
	if err != nil {
		if run != "" && e.cfg.Runs != nil && x != nil && x.Record() != nil {
			// The step Admit reserved ends with the refusal's record.
			e.cfg.Runs.Count(context.WithoutCancel(ctx), run, x.Record())
		}
		lg.status, lg.err = gw.AsError(err).Code.Status(), string(gw.AsError(err).Code)
		span.Fail(err)
		e.refuse(w, req, err)
		return
	}
	finish := func(o proxy.Outcome) gw.Money {
		charge, ferr := x.Finish(ctx, o)
		if ferr != nil {
			e.cfg.Logger.Error("finish tool call", "request_id", rid, "err", ferr)
		}
		if run != "" && e.cfg.Runs != nil && x.Record() != nil {
			e.cfg.Runs.Count(context.WithoutCancel(ctx), run, x.Record())
		}
		lg.status, lg.charge, lg.guard = o.Status, charge, x.Guard
		if o.Err != nil {
			lg.err = string(gw.AsError(o.Err).Code)
		}
		return charge
	}

	// The server's breakers, then the call.
	ticket, ok, wait, _ := srv.br.Allow(p.AccountID, e.cfg.Now())
	if !ok {
		ferr := &gw.Error{Code: gw.CodeOverloaded, Message: fmt.Sprintf("MCP server %s keeps failing; retry in %ds", srv.name, int(max(wait/time.Second, 1))), RetryAfter: wait}
		finish(proxy.Outcome{Status: ferr.Code.Status(), Err: ferr})
		writeToolError(w, req, ferr.Message)
		return
	}
	uctx, uspan := gwy.StartSpan(ctx, "mcp "+srv.name)
	var args any
	if len(params.Arguments) > 0 && string(params.Arguments) != "null" {
		args = params.Arguments
	}
	res, err := do(uctx, srv, func(ctx context.Context, cs *sdk.ClientSession) (*sdk.CallToolResult, error) {
		return cs.CallTool(ctx, &sdk.CallToolParams{Meta: params.Meta, Name: item, Arguments: args})
	})
	now := e.cfg.Now()
	lg.bytesIn = len(params.Arguments)
	switch {
	case err != nil && ctx.Err() != nil:
		ticket.Done(now, false, false)
		uspan.Fail(ctx.Err())
		uspan.End()
		finish(proxy.Outcome{Status: 499, Err: &gw.Error{Code: gw.CodeUpstream, Message: "the caller went away", Err: ctx.Err()}})
		return
	case err != nil && answered(err):
		// The server answered with a JSON-RPC error: it is up.
		ticket.Done(now, true, false)
		uspan.End()
		var jerr *jsonrpc.Error
		errors.As(err, &jerr)
		ferr := &gw.Error{Code: gw.CodeUpstream, Message: "the MCP server refused the call: " + clip(jerr.Message, 300), Err: err}
		finish(proxy.Outcome{Status: http.StatusBadGateway, Err: ferr, Note: "mcp_rpc_error " + strconv.FormatInt(jerr.Code, 10)})
		writeRPCError(w, http.StatusOK, req, jerr.Code, jerr.Message, nil)
		return
	case err != nil:
		ticket.Done(now, false, true)
		uspan.Fail(err)
		uspan.End()
		ferr := &gw.Error{Code: gw.CodeUpstream, Message: fmt.Sprintf("MCP server %s is unavailable; retry later", srv.name), Err: err}
		if errors.Is(err, errRemoved) {
			ferr.Message = fmt.Sprintf("MCP server %s was removed from this gateway by its operator; list the tools again", srv.name)
		}
		if errors.Is(err, context.DeadlineExceeded) {
			ferr = &gw.Error{Code: gw.CodeUpstreamTimeout, Message: fmt.Sprintf("MCP server %s did not answer within %s", srv.name, srv.cfg.Timeout), Err: err}
		}
		finish(proxy.Outcome{Status: ferr.Code.Status(), Err: ferr})
		writeToolError(w, req, ferr.Message)
		return
	}
	ticket.Done(now, true, false)
	uspan.End()

	// The result: bounded, then the guard (third-party text).
	body, err := json.Marshal(res)
	if err != nil {
		ferr := &gw.Error{Code: gw.CodeUpstream, Message: "the MCP server's result could not be encoded", Err: err}
		finish(proxy.Outcome{Status: http.StatusBadGateway, Err: ferr})
		writeToolError(w, req, ferr.Message)
		return
	}
	lg.bytesOut = len(body)
	note := fmt.Sprintf("mcp bytes in=%d out=%d", len(params.Arguments), len(body))
	if len(body) > e.cfg.MaxResultBytes {
		ferr := &gw.Error{Code: gw.CodeUpstream, Message: fmt.Sprintf("the tool's result is %d bytes, over this gateway's limit of %d; ask for less", len(body), e.cfg.MaxResultBytes)}
		finish(proxy.Outcome{Status: http.StatusBadGateway, Err: ferr, Note: gw.JoinNote(note, "result_too_large")})
		writeToolError(w, req, ferr.Message)
		return
	}
	if err := x.ScreenResult(ctx, resultText(res)); err != nil {
		ge := gw.AsError(err)
		finish(proxy.Outcome{Status: ge.Code.Status(), Err: ge, Note: note})
		writeToolError(w, req, fmt.Sprintf("The gateway withheld this tool's result: its prompt-injection guard flagged it (incident %s). Do not retry the same call; tell the user.", ge.IncidentID))
		return
	}
	if res.IsError {
		note = gw.JoinNote(note, "tool_error")
	}
	charge := finish(proxy.Outcome{Status: http.StatusOK, Success: true, Note: note})
	w.Header().Set(HeaderCharge, charge.CentsString())
	writeResult(w, req, body)
	e.touch(ctx, s)
}

// known is what a refused call's record names: the server and tool when
// the server lists that tool (as last read), else nothing, so that a
// caller's made-up names never become a metric's labels.
func (e *Endpoint) known(name string) (server, tool string) {
	sn, item, ok := split(name)
	s := e.servers().byName[sn]
	if !ok || s == nil {
		return "", ""
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if le, ok := s.lists["tools"]; ok {
		for _, t := range le.items.([]*sdk.Tool) {
			if t.Name == item {
				return sn, item
			}
		}
	}
	return sn, ""
}

// refuse answers a refused call: 429 with Retry-After for a rate limit,
// else a JSON-RPC error naming the gateway's error type.
func (e *Endpoint) refuse(w http.ResponseWriter, req *jsonrpc.Request, err error) {
	ge := gw.AsError(err)
	data := map[string]any{"type": ge.Code}
	if ge.RetryAfter > 0 {
		secs := int(max((ge.RetryAfter+time.Second-1)/time.Second, 1))
		w.Header().Set("Retry-After", strconv.Itoa(secs))
		data["retry_after"] = secs
	}
	if ge.Code == gw.CodeRateLimited {
		writeRPCError(w, http.StatusTooManyRequests, req, CodeRateLimited, ge.Message, data)
		return
	}
	writeRPCError(w, http.StatusOK, req, CodeGateway, ge.Message, data)
}

// writeResult answers req with a result's JSON.
func writeResult(w http.ResponseWriter, req *jsonrpc.Request, result []byte) {
	b, err := jsonrpc.EncodeMessage(&jsonrpc.Response{ID: req.ID, Result: result})
	if err != nil {
		writeRPCError(w, http.StatusOK, req, jsonrpc.CodeInternalError, "could not encode the result", nil)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(b)
}

// writeToolError answers req with a tool error (isError) the model reads.
func writeToolError(w http.ResponseWriter, req *jsonrpc.Request, text string) {
	b, _ := json.Marshal(&sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: text}}, IsError: true})
	writeResult(w, req, b)
}

// resultText is the text a result brings back, for the guard: text
// blocks, embedded text resources and structured content.
func resultText(res *sdk.CallToolResult) []gw.Text {
	var out []gw.Text
	for _, c := range res.Content {
		switch c := c.(type) {
		case *sdk.TextContent:
			out = append(out, gw.Text{Source: gw.TextTool, Text: c.Text})
		case *sdk.EmbeddedResource:
			if c.Resource != nil && c.Resource.Text != "" {
				out = append(out, gw.Text{Source: gw.TextTool, Text: c.Resource.Text})
			}
		case *sdk.ResourceLink:
			if c.Description != "" {
				out = append(out, gw.Text{Source: gw.TextTool, Text: c.Description})
			}
		}
	}
	if res.StructuredContent != nil {
		if b, err := json.Marshal(res.StructuredContent); err == nil {
			out = append(out, gw.Text{Source: gw.TextTool, Text: string(b)})
		}
	}
	return out
}

func mustJSON(v any) json.RawMessage {
	b, _ := json.Marshal(v)
	return b
}

// callLog is a tool call's access log line: metadata and the arguments,
// bounded and without credentials.
type callLog struct {
	e                 *Endpoint
	rid               string
	p                 *gw.Principal
	name              string
	server, tool      string
	args              json.RawMessage
	start             time.Time
	status            int
	err, guard        string
	bytesIn, bytesOut int
	charge            gw.Money
}

func (l *callLog) write(ctx context.Context) {
	attrs := []slog.Attr{
		slog.String("request_id", l.rid), slog.String("endpoint", "mcp"), slog.String("account_id", l.p.AccountID), slog.String("key_id", l.p.KeyID),
		slog.String("tool", clip(l.name, 200)), slog.String("server", l.server), slog.Int("status", l.status),
		slog.Duration("duration", l.e.cfg.Now().Sub(l.start)), slog.Int("bytes_in", l.bytesIn), slog.Int("bytes_out", l.bytesOut),
		slog.String("charge_usd", l.charge.USDString()), slog.String("arguments", redactArguments(l.args, l.e.cfg.MaxArgumentLog)),
	}
	if l.guard != "" {
		attrs = append(attrs, slog.String("guard", l.guard))
	}
	if l.err != "" {
		attrs = append(attrs, slog.String("error", l.err))
	}
	l.e.cfg.Logger.LogAttrs(ctx, slog.LevelInfo, "mcp call", attrs...)
}

// secretName matches argument names whose values are credentials.
var secretName = regexp.MustCompile(`(?i)(pass(word|wd)?|secret|token|api[-_]?key|apikey|auth|credential|cookie|session|private[-_]?key|bearer|signature)`)

// secretValue matches values that look like credentials whatever their
// name: bearer tokens, well-known key prefixes, JWTs, PEM blocks.
var secretValue = regexp.MustCompile(`(?i)(bearer\s+\S+|\b(gwk|sk|pk|rk|ghp|gho|ghs|github_pat|xox[abpr]|AKIA)[-_][A-Za-z0-9_\-]{8,}|\beyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}\.|-----BEGIN [A-Z ]*PRIVATE KEY-----)`)

// redactArguments is the arguments for the log: credentials by name or
// look replaced by "[redacted]", long strings cut, the whole at most
// limit bytes.
func redactArguments(raw json.RawMessage, limit int) string {
	if len(raw) == 0 {
		return ""
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return "[unparsed]"
	}
	var walk func(v any, depth int) any
	walk = func(v any, depth int) any {
		if depth > 16 {
			return "[deep]"
		}
		switch t := v.(type) {
		case map[string]any:
			for k, x := range t {
				if secretName.MatchString(k) {
					t[k] = "[redacted]"
					continue
				}
				t[k] = walk(x, depth+1)
			}
			return t
		case []any:
			for i := range t {
				t[i] = walk(t[i], depth+1)
			}
			return t
		case string:
			if secretValue.MatchString(t) {
				return "[redacted]"
			}
			return clip(t, 200)
		}
		return v
	}
	b, err := json.Marshal(walk(v, 0))
	if err != nil {
		return "[unparsed]"
	}
	return clip(string(b), limit)
}
