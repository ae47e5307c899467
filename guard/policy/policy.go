// Package policy fits the guard to the proxy: the caller's guard policy
// (per key over per account over the default), the account's allow list
// of reviewed false positives, and the second stage for the grey band.
package policy

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	gw "github.com/gwlabs/gateway"
	"github.com/gwlabs/gateway/guard"
	"github.com/gwlabs/gateway/internal/reqbody"
	"github.com/gwlabs/gateway/proxy"
	"github.com/gwlabs/gateway/secondstage"
)

// Guard fits guard.Guard to proxy.Guard with the caller's policy
// (per key over per account over the default), the account's allow list
// of reviewed false positives, and the second stage for the grey band.
type Guard struct {
	g      *guard.Guard
	store  gw.GuardStore // nil: default policy, no allow list
	second *SecondStage  // nil: the grey band is allowed and logged
	logger *slog.Logger

	mu    sync.Mutex
	cache map[string]cachedPolicy // by key id
	ttl   time.Duration
	now   func() time.Time
}

type cachedPolicy struct {
	p   gw.GuardPolicy
	exp time.Time
}

// SecondStage is a grey-band classifier with its threshold and budget.
type SecondStage struct {
	Classifier secondstage.Classifier
	Threshold  float64       // a score at or above it blocks
	Budget     time.Duration // past it, the guard's fail mode applies
}

// incidentTextBytes bounds the flagged text kept with an incident.
const incidentTextBytes = 16 << 10

// New returns the policy guard of g on the store st (no store, nil: the
// default policy and no allow list); second may be nil.
func New(g *guard.Guard, st gw.Store, second *SecondStage, logger *slog.Logger) *Guard {
	pg := &Guard{g: g, second: second, logger: logger, cache: map[string]cachedPolicy{}, ttl: 5 * time.Second, now: time.Now}
	if st != nil {
		pg.store = st
	}
	if pg.logger == nil {
		pg.logger = slog.New(slog.DiscardHandler)
	}
	return pg
}

// Check applies the default policy (no caller known).
func (a *Guard) Check(ctx context.Context, shape gw.Shape, body []byte) (proxy.Verdict, error) {
	return a.CheckFor(ctx, nil, shape, body)
}

// CheckFor implements proxy.PrincipalGuard: it reads the body's text as
// the server does, then checks it.
func (a *Guard) CheckFor(ctx context.Context, p *gw.Principal, shape gw.Shape, body []byte) (proxy.Verdict, error) {
	b, err := reqbody.Parse(shape, body)
	if err != nil {
		return proxy.Verdict{}, fmt.Errorf("guard segments: %w", err)
	}
	return a.CheckText(ctx, p, b.Text)
}

// CheckText implements proxy.TextGuard: the text the server read from the
// body, under the caller's policy, both stages.
func (a *Guard) CheckText(ctx context.Context, p *gw.Principal, segs []gw.Text) (proxy.Verdict, error) {
	v, second, err := a.CheckFirst(ctx, p, segs)
	if err != nil || second == nil {
		return v, err
	}
	return second(ctx)
}

// CheckFirst implements proxy.StagedGuard: the first stage's verdict, and
// for a grey score with a second stage configured, that stage to run
// (concurrently with the vendor call).
func (a *Guard) CheckFirst(ctx context.Context, p *gw.Principal, segs []gw.Text) (proxy.Verdict, func(context.Context) (proxy.Verdict, error), error) {
	pol, err := a.policy(ctx, p)
	if err != nil {
		return proxy.Verdict{}, nil, err
	}
	if pol.Mode == gw.GuardOff {
		return proxy.Verdict{Note: "off"}, nil, nil
	}
	scope, _ := guard.ParseScope(pol.Scope)
	tenant := ""
	if p != nil {
		tenant = p.AccountID // the score cache is shared within an account only
	}
	v := a.g.CheckPolicy(segs, guard.Policy{Tenant: tenant, Scope: scope, UserThreshold: pol.UserThreshold, ToolThreshold: pol.ToolThreshold, AssistantThreshold: pol.AssistantThreshold})
	out := proxy.Verdict{Flagged: v.Flagged, Kind: string(v.Kind), Score: v.Score, Reason: v.Reason}
	text, src := v.Text, ""
	if v.Segment >= 0 && v.Segment < len(segs) {
		src = segs[v.Segment].Source.String()
		out.ThirdParty = v.ThirdParty || !callerText(segs[v.Segment].Source)
		if text == "" {
			text = segs[v.Segment].Text
		}
	}
	if v.Grey {
		if a.second == nil {
			out.Note = "grey"
			return out, nil, nil
		}
		second := func(ctx context.Context) (proxy.Verdict, error) {
			score, err := a.judge(ctx, text)
			if err != nil {
				return proxy.Verdict{}, err
			}
			if score < a.second.Threshold {
				out.Note = "grey:pass"
				return out, nil
			}
			out.Flagged = true
			out.Reason = fmt.Sprintf("%s in %s text (first stage %.2f, second stage %.2f)", v.Kind, src, v.Score, score)
			return a.flagged(ctx, p, pol, out, text)
		}
		return out, second, nil
	}
	if !out.Flagged {
		return out, nil, nil
	}
	out, err = a.flagged(ctx, p, pol, out, text)
	return out, nil, err
}

// callerText reports whether text of source src is the caller's own
// (user, assistant or system text), whose blocks count toward the
// cool-down; any other source (tool results, documents, tool
// descriptions, MCP output, a source added later) is third-party text.
func callerText(src gw.TextSource) bool {
	switch src {
	case gw.TextUser, gw.TextAssistant, gw.TextSystem:
		return true
	}
	return false
}

// flagged completes a flagged verdict on text: the account's allow list
// of reviewed false positives, the text kept for review, the policy's
// mode.
func (a *Guard) flagged(ctx context.Context, p *gw.Principal, pol gw.GuardPolicy, out proxy.Verdict, text string) (proxy.Verdict, error) {
	out.TextHash = guard.TextHash(text)
	if a.store != nil && p != nil {
		ok, err := a.store.GuardAllowed(ctx, p.AccountID, out.TextHash)
		if err != nil {
			return proxy.Verdict{}, err
		}
		if ok {
			return proxy.Verdict{Kind: out.Kind, Score: out.Score, Note: "allowed"}, nil
		}
	}
	out.Text = clipBytes(text, incidentTextBytes)
	out.Excerpt = excerpt([]guard.Segment{{Source: guard.SourceUser, Text: text}}) // the flagged text's start
	out.Monitor = pol.Mode == gw.GuardMonitor
	return out, nil
}

// judge asks the second stage within its budget.
func (a *Guard) judge(ctx context.Context, text string) (float64, error) {
	ctx, cancel := context.WithTimeout(ctx, a.second.Budget)
	defer cancel()
	type res struct {
		s   float64
		err error
	}
	ch := make(chan res, 1)
	go func() {
		s, err := a.second.Classifier.Score(ctx, text)
		ch <- res{s, err}
	}()
	select {
	case r := <-ch:
		if r.err != nil {
			return 0, fmt.Errorf("guard second stage: %w", r.err)
		}
		return r.s, nil
	case <-ctx.Done():
		return 0, fmt.Errorf("guard second stage: %w", ctx.Err())
	}
}

// policy is the caller's effective policy: the key's fields over the
// account's over the default (block, every scored role, the guard's
// thresholds). Policies are cached per key for a few seconds.
func (a *Guard) policy(ctx context.Context, p *gw.Principal) (gw.GuardPolicy, error) {
	def := gw.EffectiveGuardPolicy(nil, nil)
	if a.store == nil || p == nil {
		return def, nil
	}
	now := a.now()
	a.mu.Lock()
	c, ok := a.cache[p.KeyID]
	a.mu.Unlock()
	if ok && now.Before(c.exp) {
		return c.p, nil
	}
	kp, ap, err := a.store.GuardPolicies(ctx, p.KeyID, p.AccountID)
	if err != nil {
		return def, fmt.Errorf("guard policy: %w", err)
	}
	eff := gw.EffectiveGuardPolicy(kp, ap)
	a.mu.Lock()
	if len(a.cache) > 100_000 {
		clear(a.cache) // bounded: a cache, not a registry
	}
	a.cache[p.KeyID] = cachedPolicy{eff, now.Add(a.ttl)}
	a.mu.Unlock()
	return eff, nil
}

// ForgetAll drops every cached policy (a policy changed in the store).
func (a *Guard) ForgetAll() {
	a.mu.Lock()
	clear(a.cache)
	a.mu.Unlock()
}

// Effective is the policy a key runs under, for the CLI and the
// dashboard.
func Effective(ctx context.Context, st gw.Store, keyID, accountID string) (gw.GuardPolicy, error) {
	if st == nil {
		return gw.EffectiveGuardPolicy(nil, nil), nil
	}
	kp, ap, err := st.GuardPolicies(ctx, keyID, accountID)
	return gw.EffectiveGuardPolicy(kp, ap), err
}

func clipBytes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	s = s[:n]
	for len(s) > 0 && !utf8.ValidString(s) {
		s = s[:len(s)-1]
	}
	return s
}

// ErrNoStore says the store keeps no guard policies.
var ErrNoStore = errors.New("this store keeps no guard policies")

// excerptRunes bounds the text kept with an incident as its excerpt.
const excerptRunes = 500

// excerpt keeps the start of the last non-system text, where an attack
// usually sits.
func excerpt(segs []guard.Segment) string {
	for i := len(segs) - 1; i >= 0; i-- {
		if segs[i].Source == guard.SourceSystem || strings.TrimSpace(segs[i].Text) == "" {
			continue
		}
		t := segs[i].Text
		if utf8.RuneCountInString(t) > excerptRunes {
			r := []rune(t)
			t = string(r[:excerptRunes]) + "…"
		}
		return t
	}
	return ""
}
