package proxy

import (
	"context"
	"strings"
	"time"

	gw "github.com/gwlabs/gateway"
	"github.com/gwlabs/gateway/internal/id"
)

// Verdict is the guard's answer for one request.
type Verdict struct {
	Flagged bool
	Kind    string
	Score   float64
	Reason  string
	Excerpt string // a bounded excerpt of the flagged text, for review
	// Monitor: the caller's policy records a flagged request as an
	// incident and lets it through.
	Monitor bool
	// Text is the flagged text (bounded) and TextHash the hash of its
	// normalised form, kept with the incident for review: a reviewed
	// false positive puts the hash on the account's allow list.
	Text     string
	TextHash [32]byte
	// Note, when set, is the record's guard summary for a request that
	// goes through ("grey", "allowed", "off", ...), else "pass".
	Note string
	// ThirdParty says the flagged text is not the caller's own: its
	// source is neither user, assistant nor system text (a tool result,
	// a document, a tool description, MCP output). Such a block does not
	// count toward the cool-down.
	ThirdParty bool
}

// PrincipalGuard is a Guard that applies the caller's own policy (per
// key and account); the proxy prefers it when the Guard implements it.
type PrincipalGuard interface {
	CheckFor(ctx context.Context, p *gw.Principal, shape gw.Shape, body []byte) (Verdict, error)
}

// Guard checks a request body of the given shape. It must be safe for
// concurrent use and fast (it runs beside every vendor call).
type Guard interface {
	Check(ctx context.Context, shape gw.Shape, body []byte) (Verdict, error)
}

// TextGuard is a Guard that can score the text the server already read
// from the body (Inbound.Text), so that the body is parsed once per
// request, under the caller's own policy (p may be nil: the default).
// When Inbound.Text is nil the proxy calls CheckFor or Check instead.
type TextGuard interface {
	Guard
	CheckText(ctx context.Context, p *gw.Principal, text []gw.Text) (Verdict, error)
}

// StagedGuard is a TextGuard whose check has two stages. The first
// (CheckFirst: microseconds to milliseconds, linear in the text) runs
// before the vendor is sent anything, so a request it blocks never
// reaches the vendor; when it leaves the request to a second stage (a
// grey score, judged by a slower classifier), it returns that stage as
// second, which the proxy runs concurrently with the vendor call, still
// releasing nothing of the answer before its verdict. second is nil when
// the first verdict is final.
type StagedGuard interface {
	CheckFirst(ctx context.Context, p *gw.Principal, text []gw.Text) (v Verdict, second func(context.Context) (Verdict, error), err error)
}

// Screen runs the guard on a request that has no vendor call of its own
// to guard beside (a token count): the cool-down, both stages, then the
// verdict. It returns rate_limited for a key or account cooled down,
// request_blocked (the incident stored) when the request must not go on.
// A count that leaves an incident (blocked, or flagged in monitor mode)
// is recorded, never billed, noted NoteCountTokens, so that the
// incident's request id names a record as a chat request's does; a
// blocked one counts among the key's refusals (RefusedPerMinute), not in
// its chat requests' rate-limit bucket. Other counts leave no record.
// in.Text is the text the route read; in.Principal the caller.
func (g *Gateway) Screen(ctx context.Context, in Inbound) error {
	if err := g.admitted(in.Principal, g.cfg.Now()); err != nil {
		return err
	}
	x := &Exchange{g: g, in: in, count: true, limited: true}
	v, second, err := x.firstStage(ctx)
	v, blocked := x.judge(ctx, v, err)
	if !blocked && second != nil {
		v, blocked = x.secondStage(ctx, second)
	}
	if blocked {
		err := x.block(ctx, v)
		x.finishErr(ctx, err)
		return err
	}
	if strings.HasPrefix(x.Guard, "monitor:") {
		if _, err := x.Finish(ctx, Outcome{Status: 200}); err != nil {
			g.cfg.Logger.Error("record a flagged count", "request_id", in.RequestID, "err", err)
		}
	}
	return nil
}

// firstStage runs the guard's first stage, or the whole check of a guard
// that has no stages, before anything is sent. second is the second
// stage left to run, nil when the verdict is final.
func (x *Exchange) firstStage(ctx context.Context) (Verdict, func(context.Context) (Verdict, error), error) {
	g := x.g
	if g.cfg.Guard == nil {
		return Verdict{}, nil, nil
	}
	if x.in.Text != nil {
		if sg, ok := g.cfg.Guard.(StagedGuard); ok {
			return sg.CheckFirst(ctx, x.in.Principal, x.in.Text)
		}
		if tg, ok := g.cfg.Guard.(TextGuard); ok {
			v, err := tg.CheckText(ctx, x.in.Principal, x.in.Text)
			return v, nil, err
		}
	}
	if pg, ok := g.cfg.Guard.(PrincipalGuard); ok {
		v, err := pg.CheckFor(ctx, x.in.Principal, x.in.Endpoint, x.in.Body)
		return v, nil, err
	}
	v, err := g.cfg.Guard.Check(ctx, x.in.Endpoint, x.in.Body)
	return v, nil, err
}

// secondStage waits for the second stage, within GuardTimeout. blocked
// is true when the request must not go on.
func (x *Exchange) secondStage(ctx context.Context, second func(context.Context) (Verdict, error)) (Verdict, bool) {
	gctx, cancel := context.WithTimeout(ctx, x.g.cfg.GuardTimeout)
	defer cancel()
	type res struct {
		v   Verdict
		err error
	}
	ch := make(chan res, 1)
	go func() {
		v, err := second(gctx)
		ch <- res{v, err}
	}()
	var r res
	select {
	case r = <-ch:
	case <-gctx.Done():
		r.err = gctx.Err()
	}
	return x.judge(ctx, r.v, r.err)
}

// judge turns the guard's answer into the request's fate.
func (x *Exchange) judge(ctx context.Context, v Verdict, err error) (Verdict, bool) {
	g := x.g
	if err != nil {
		x.Guard = "error"
		g.cfg.Logger.Error("guard failed", "request_id", x.in.RequestID, "err", err, "fail_closed", g.cfg.GuardFailClosed)
		if g.cfg.GuardFailClosed {
			return Verdict{Flagged: true, Kind: "guard_unavailable", Reason: "the guard could not check the request"}, true
		}
		return Verdict{}, false
	}
	if v.Flagged && v.Monitor {
		// Monitor mode: the incident is recorded, the request goes on.
		x.Guard = "monitor:" + v.Kind
		x.recordIncident(ctx, v)
		return v, false
	}
	if v.Flagged {
		x.Guard = "flagged:" + v.Kind
		return v, true
	}
	x.Guard = "pass"
	if v.Note != "" {
		x.Guard = v.Note
	}
	if g.cfg.Guard == nil {
		x.Guard = "off"
	}
	return v, false
}

// recordIncident stores the verdict's incident, with its flagged text
// when the store keeps texts, and returns its id.
func (x *Exchange) recordIncident(ctx context.Context, v Verdict) string {
	in := &x.in
	inc := &gw.Incident{
		ID: id.New("inc_", x.g.cfg.Now()), RequestID: in.RequestID, AccountID: in.Principal.AccountID, KeyID: in.Principal.KeyID,
		Kind: v.Kind, Score: v.Score, Reason: v.Reason, Excerpt: v.Excerpt, CreatedAt: x.g.cfg.Now(),
	}
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	if err := x.g.cfg.Store.CreateIncident(wctx, inc); err != nil {
		x.g.cfg.Logger.Error("store incident", "request_id", in.RequestID, "err", err)
		return inc.ID
	}
	if gs := x.g.cfg.Store; v.Text != "" && x.g.incidentText(in.Principal.AccountID, x.g.cfg.Now()) {
		text := v.Text
		if len(text) > MaxIncidentText {
			text = truncateUTF8(text, MaxIncidentText)
		}
		t := gw.IncidentText{IncidentID: inc.ID, AccountID: in.Principal.AccountID, Hash: v.TextHash, Text: text}
		if err := gs.SetIncidentText(wctx, t); err != nil {
			x.g.cfg.Logger.Error("store incident text", "request_id", in.RequestID, "err", err)
		}
	}
	return inc.ID
}

func (x *Exchange) block(ctx context.Context, v Verdict) error {
	id := x.recordIncident(ctx, v)
	if v.Kind != "guard_unavailable" {
		x.g.blocks.note(x.in.Principal, x.g.cfg.Now())
	}
	// Only blocks on the caller's own text count toward a cool-down:
	// never a block on third-party text (a tool result, a document) or on
	// a token count, though both are refused and recorded.
	if v.Kind != "guard_unavailable" && !v.ThirdParty && !x.count {
		if why := x.g.cool.blocked(x.in.Principal, x.g.cfg.Now()); why != "" {
			// Repeated blocks: the key (or account) is cooled down, and
			// that is an incident too, saying why.
			x.recordIncident(ctx, Verdict{Kind: IncidentCooldown, Score: v.Score, Reason: why, Excerpt: v.Excerpt})
		}
	}
	return &gw.Error{
		Code:       gw.CodeRequestBlocked,
		Message:    "the request was blocked by the prompt-extraction guard; if you think this is wrong, contact support with the incident_id",
		IncidentID: id,
		NoRetry:    true,
	}
}
