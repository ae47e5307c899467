package proxy

import (
	"context"
	"crypto/rand"
	"net/http"
	"strconv"
	"strings"

	gw "github.com/gwlabs/gateway"
	"github.com/gwlabs/gateway/guard/leak"
	"github.com/gwlabs/gateway/internal/rawjson"
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
	// Canary adds a random marker, new for each request, after the
	// optimizer's directive: the marker in the answer, in any form, is a
	// leak, however short the caller's own system prompt. Its tokens are
	// not billed (counted with the directive's). Off by default: the
	// directive then differs from request to request.
	Canary bool
}

// MarkedPrepareEditor is implemented by an Optimizer that can write a
// marker after its directive (the canary).
type MarkedPrepareEditor interface {
	PrepareEditMarked(shape gw.Shape, e *rawjson.Editor, keyOff bool, h http.Header, marker string) (applied bool, err error)
}

func (x *Exchange) wantsCanary() bool {
	return x.g.cfg.Answer.Canary && !x.g.cfg.Answer.Off
}

// canaryText is what follows the directive: the request's marker, made
// on first use (the same for every candidate).
func (x *Exchange) canaryText() string {
	if x.canary == "" {
		var b [16]byte
		_, _ = rand.Read(b[:])
		for i := range b {
			b[i] = 'a' + b[i]%26
		}
		x.canary = string(b[:])
	}
	return " (ref " + x.canary + ")"
}

// canaryTokens is what the marker adds to the prompt, counted high (a
// token per three bytes): they are the gateway's, never billed.
func (x *Exchange) canaryTokens() int64 {
	if x.canary == "" || !x.Optimized {
		return 0
	}
	return int64(len(x.canaryText())+2) / 3
}

// Directiver is implemented by an Optimizer that can say the directive
// it adds: the answer-side check protects it like the caller's system
// content.
type Directiver interface {
	DirectiveText() string
}

// keepProtected keeps, before the guard's text goes, the system texts
// the answer must not carry, and the request's other text (user,
// assistant, tool): runs of words it carries too are exempted, but only
// once an answer matches (answerlazy.go). Both are references, not
// copies.
func (x *Exchange) keepProtected() {
	if x.g.cfg.Answer.Off || x.protect != nil {
		return
	}
	var sys, open []string
	for _, t := range x.in.Text {
		switch {
		case t.Text == "":
		case t.Source == gw.TextSystem:
			sys = append(sys, t.Text)
		default:
			open = append(open, t.Text)
		}
	}
	if len(sys) == 0 {
		x.protect = []string{}
		return
	}
	x.protect = []string{strings.Join(sys, "\n")}
	x.open = open
}

// AnswerMatcher returns a matcher for the answer the caller is about to
// receive, nil when nothing in it can leak (no protected text of more
// than leak.MaxWords words, or the check is off): then the answer needs
// no work at all. It reads the answer against the whole system text;
// the caller's own runs are taken out only when it finds a leak
// (answerlazy.go).
func (x *Exchange) AnswerMatcher() leak.Checker {
	if x.g.cfg.Answer.Off {
		return nil
	}
	m := x.protectedMatcher(x.protect)
	if m == nil || len(x.open) == 0 {
		return m
	}
	return &exemptingChecker{x: x, m: m}
}

// protectedMatcher is the matcher for the system texts sys with the
// optimizer's directive and the canary (never exempted), nil when
// nothing can leak.
func (x *Exchange) protectedMatcher(sys []string) leak.Checker {
	texts := sys
	if d, ok := x.g.cfg.Optimizer.(Directiver); ok && x.Optimized {
		texts = append(texts[:len(texts):len(texts)], d.DirectiveText())
	}
	var ms []*leak.Matcher
	if len(texts) > 0 {
		p := leak.Protected{Texts: texts}
		var s *leak.Set
		if c := x.g.cfg.Answer.Cache; c != nil {
			s = c.Set(p)
		} else {
			s = leak.New(p)
		}
		if s != nil {
			ms = append(ms, s.NewMatcher())
		}
	}
	if x.canary != "" && x.Optimized {
		// The marker is new for each request: compiled apart from the
		// cached text.
		if s := leak.New(leak.Protected{Canary: x.canary}); s != nil {
			ms = append(ms, s.NewMatcher())
		}
	}
	return leak.All(ms...)
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
