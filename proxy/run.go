package proxy

import (
	"context"
	"fmt"
	"time"

	gw "github.com/gwlabs/gateway"
	"github.com/gwlabs/gateway/internal/id"
)

// AttrConversationID is the span attribute naming a request's run (the
// GenAI semantic conventions' conversation id).
const AttrConversationID = "gen_ai.conversation.id"

// runStepTTL bounds how long a step's hold on its run outlives a process
// that died before the settle: a step running longer keeps its hold on
// the balance, but its run hold is swept (the settle still counts it).
const runStepTTL = time.Hour

// runStore is where runs are kept: Config.Runs, else the store when it
// keeps them, else nil (runs are not counted).
func (g *Gateway) runStore() gw.RunStore {
	if g.cfg.Runs != nil {
		return g.cfg.Runs
	}
	rs, _ := g.cfg.Store.(gw.RunStore)
	return rs
}

// BeginRunStep admits a step of p's run ref under requestID, holding
// amount on the run and its ancestors: a refusal is a 402 *gw.Error
// (run_budget_exceeded, run_step_limit, run_expired) the caller sees
// before any vendor call. It returns nil, nil when ref names no run or
// the store keeps no runs. tool marks a tool call.
func (g *Gateway) BeginRunStep(ctx context.Context, p *gw.Principal, ref gw.RunRef, requestID string, amount gw.Money, tool bool) (*gw.Run, error) {
	rs := g.runStore()
	if rs == nil || ref.ID == "" || p == nil {
		return nil, nil
	}
	now := g.cfg.Now()
	r, err := rs.HoldRun(ctx, gw.RunHold{AccountID: p.AccountID, KeyID: p.KeyID, RunID: ref.ID, ParentID: ref.Parent, Caps: ref.Caps,
		RequestID: requestID, Amount: amount, Tool: tool, Now: now, ExpiresAt: now.Add(max(runStepTTL, g.cfg.HoldTTL))})
	if err != nil {
		if e, ok := err.(*gw.Error); ok {
			return nil, e
		}
		return nil, &gw.Error{Code: gw.CodeInternal, Message: "could not reserve the run's step", Err: err}
	}
	return r, nil
}

// EndRunStep counts a finished step of p's run runID, its record rec,
// and returns the run after it. holdless steps (a tool call admitted by
// ToolRuns) end any tool step of the run.
func (g *Gateway) EndRunStep(ctx context.Context, p *gw.Principal, runID string, rec *gw.Record, tool bool) (*gw.Run, error) {
	rs := g.runStore()
	if rs == nil || runID == "" || p == nil || rec == nil {
		return nil, nil
	}
	s := gw.StepOf(runID, rec)
	s.Tool = tool
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 15*time.Second)
	defer cancel()
	r, err := rs.SettleRun(wctx, p.AccountID, runID, s, g.cfg.Now())
	if err != nil {
		return nil, fmt.Errorf("settle run %q: %w", runID, err)
	}
	return r, nil
}

// holdRun reserves the request's step on its run (Inbound.Run) before
// its hold on the balance, amount the balance hold's.
func (x *Exchange) holdRun(ctx context.Context, amount gw.Money) error {
	in := &x.in
	if in.Run.ID == "" || x.runHeld {
		return nil
	}
	r, err := x.g.BeginRunStep(ctx, in.Principal, in.Run, in.RequestID, amount, x.tool)
	if err != nil {
		return err
	}
	if r != nil {
		x.runHeld, x.run = true, r
	}
	return nil
}

// unholdRun drops the run's hold when the balance refused its own.
func (x *Exchange) unholdRun(ctx context.Context) {
	if !x.runHeld {
		return
	}
	x.runHeld = false
	if err := x.g.runStore().ReleaseRun(context.WithoutCancel(ctx), x.in.Principal.AccountID, x.in.Run.ID, x.in.RequestID); err != nil {
		x.g.cfg.Logger.Warn("release run hold", "request_id", x.in.RequestID, "run", x.in.Run.ID, "err", err)
	}
}

// settleRun counts the finished request toward its run (deferred by
// Finish, after the settle set the record's charge).
func (x *Exchange) settleRun(ctx context.Context, r *gw.Record) {
	if !x.runHeld {
		return
	}
	x.runHeld = false
	run, err := x.g.EndRunStep(ctx, x.in.Principal, x.in.Run.ID, r, false)
	if err != nil {
		x.g.cfg.Logger.Error("settle run", "request_id", x.in.RequestID, "run", x.in.Run.ID, "err", err)
		return
	}
	x.run = run
}

// Run is the request's run as its last step left it (after Finish: with
// this request's charge), nil when the request names none.
func (x *Exchange) Run() *gw.Run {
	if x == nil {
		return nil
	}
	return x.run
}

// ToolRuns counts tool calls toward their runs (mcp.Config.Runs): Admit
// reserves a step of the run (refusing an expired or spent run, or one
// at its step cap) before the call's own hold; Count ends it with the
// call's record, adding its charge.
type ToolRuns struct{ G *Gateway }

// Admit reserves a tool step of run for p.
func (t ToolRuns) Admit(ctx context.Context, run string, p *gw.Principal) error {
	if !gw.ValidRunID(run) {
		return &gw.Error{Code: gw.CodeInvalidRequest, ErrorCode: "invalid_run_header", NoRetry: true,
			Message: "X-Gateway-Run must be 1-128 characters of A-Z, a-z, 0-9, '.', '_', ':' and '-'"}
	}
	_, err := t.G.BeginRunStep(ctx, p, gw.RunRef{ID: run}, gw.ToolStepPrefix+id.New("", t.G.cfg.Now()), 0, true)
	return err
}

// Count ends a tool step of run with its record.
func (t ToolRuns) Count(ctx context.Context, run string, r *gw.Record) {
	p := &gw.Principal{AccountID: r.AccountID, KeyID: r.KeyID}
	if _, err := t.G.EndRunStep(ctx, p, run, r, true); err != nil {
		t.G.cfg.Logger.Error("count tool call", "request_id", r.RequestID, "run", run, "err", err)
	}
}
