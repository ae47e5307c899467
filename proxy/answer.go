package proxy

import (
	"context"
	"net/http"
	"strconv"
	"strings"

	gw "github.com/gwlabs/gateway"
	"github.com/gwlabs/gateway/guard/leak"
)

// IncidentExtractionAnswer is the incident kind recorded when an answer
// carried the caller's protected text (its system content or the
// optimizer's directive): the guard's answer side.
const IncidentExtractionAnswer = "extraction_answer"

// AnswerConfig is the answer-side check's configuration (Config.Answer).
type AnswerConfig struct {
	// Off turns the check off (for measuring its cost; never in
	// production).
	Off bool
	// WaiveCharge: an answer stopped for a leak is not charged (the
	// vendor's cost is recorded as the operator's). Default: charged at
	// cost x 1.09 like any answer the vendor produced.
	WaiveCharge bool
	// Cache keeps compiled protected texts by content hash; nil: each
	// request compiles its own.
	Cache *leak.Cache
}

// Directiver is implemented by an Optimizer that can say the directive
// it adds: the answer-side check protects it like the caller's system
// content.
type Directiver interface {
	DirectiveText() string
}

// keepProtected keeps, before the guard's text goes, the system texts
// the answer must not carry.
func (x *Exchange) keepProtected() {
	if x.g.cfg.Answer.Off || x.protect != nil {
		return
	}
	var sys []string
	for _, t := range x.in.Text {
		if t.Source == gw.TextSystem && t.Text != "" {
			sys = append(sys, t.Text)
		}
	}
	if len(sys) == 0 {
		x.protect = []string{}
		return
	}
	x.protect = []string{strings.Join(sys, "\n")}
}

// AnswerMatcher returns a matcher for the answer the caller is about to
// receive, nil when nothing in it can leak (no protected text of more
// than leak.MaxWords words, or the check is off): then the answer needs
// no work at all.
func (x *Exchange) AnswerMatcher() *leak.Matcher {
	if x.g.cfg.Answer.Off {
		return nil
	}
	texts := x.protect
	if d, ok := x.g.cfg.Optimizer.(Directiver); ok && x.Optimized {
		texts = append(texts[:len(texts):len(texts)], d.DirectiveText())
	}
	if len(texts) == 0 {
		return nil
	}
	p := leak.Protected{Texts: texts}
	var s *leak.Set
	if c := x.g.cfg.Answer.Cache; c != nil {
		s = c.Set(p)
	} else {
		s = leak.New(p)
	}
	if s == nil {
		return nil
	}
	return s.NewMatcher()
}

// BlockAnswer records the leak's incident, with the vendor's usage u so
// far, and returns the error the caller gets instead of the answer (403
// request_blocked, or the stream's error event).
func (x *Exchange) BlockAnswer(ctx context.Context, l *leak.Leak, u gw.Usage) *gw.Error {
	x.Guard = "flagged:" + IncidentExtractionAnswer
	id := x.recordIncident(ctx, Verdict{
		Flagged: true, Kind: IncidentExtractionAnswer, Score: 1,
		Reason: "the answer carried the protected text (" + l.Form + "); vendor usage " +
			strconv.FormatInt(u.PromptTokens(), 10) + " input and " + strconv.FormatInt(u.OutputTokens, 10) + " output tokens",
		Excerpt: l.Excerpt(),
	})
	return &gw.Error{
		Code:       gw.CodeRequestBlocked,
		Message:    "the answer was withheld by the prompt-extraction guard: it carried the system prompt; if you think this is wrong, contact support with the incident_id",
		IncidentID: id,
		NoRetry:    true,
	}
}

// LeakOutcome is how a request stopped on its answer ends: the vendor's
// usage recorded, charged like any answer unless the operator waives it
// (then the cost is the operator's).
func (x *Exchange) LeakOutcome(e *gw.Error, u gw.Usage) Outcome {
	return Outcome{Status: http.StatusForbidden, Err: e, Usage: u, Success: !x.g.cfg.Answer.WaiveCharge, Note: IncidentExtractionAnswer}
}
