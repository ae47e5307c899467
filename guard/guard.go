package guard

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"

	gw "github.com/gwlabs/gateway"
)

// Kind names the type of attack a verdict found.
type Kind string

// Kinds of attack.
const (
	KindExtraction Kind = "extraction" // asks for the system prompt, hidden instructions or a secret
	KindJailbreak  Kind = "jailbreak"  // redefines the assistant's rules or persona
	KindInjection  Kind = "injection"  // hijacks the task, often from inside a document or tool result
)

// Source says where a segment of text came from (gw.TextSource).
// System segments are the operator's own instructions and are never
// scored; tool results and documents are scored like user text (an
// injection there is the classic indirect attack).
type Source = gw.TextSource

// Sources.
const (
	SourceSystem    = gw.TextSystem
	SourceUser      = gw.TextUser
	SourceAssistant = gw.TextAssistant
	SourceTool      = gw.TextTool     // tool results and documents
	SourceToolSpec  = gw.TextToolSpec // tool and schema descriptions: scored like tool results
)

// Segment is one piece of a request's text and its source (gw.Text).
type Segment = gw.Text

// Verdict is the guard's decision on a whole request. Score is the
// highest attack score among the scanned segments (0..1). Kind is the
// likeliest kind of attack in the segment that scored it (set whenever
// a segment was scored); Reason says why, set only when flagged.
//
// Grey is set, when the request is not flagged, if a scored segment's
// score fell in the grey band (at or above the band's lower end, below
// its blocking threshold): a second stage may judge it. Segment is the
// index in the checked segments of the segment that set Score (the
// flagged one when Flagged, else the highest grey one when Grey), -1 when
// none was scored.
//
// Text is set when the text that set Score is not a whole segment: the
// texts of a run of consecutive turns read together, joined by newlines,
// or the window of a long segment that scored highest; for review and
// for a second stage. Otherwise the text is the segment's.
type Verdict struct {
	Flagged bool
	Grey    bool
	Kind    Kind
	Score   float64
	Reason  string // short, human readable
	Segment int
	Text    string
	// ThirdParty says the flagged (or grey) text holds text the caller
	// did not write: the segment is a tool result, a document or a tool
	// description, or the pack of consecutive segments that scored it
	// holds one. Such a block is refused but never held against the
	// caller (a cool-down counts only the caller's own text).
	ThirdParty bool
}

// Scope says which segments a policy scores. System segments are never
// scored.
type Scope string

// Scopes.
const (
	ScopeUser  Scope = "user"  // user text only
	ScopeTools Scope = "tools" // user text and tool results (documents)
	ScopeAll   Scope = "all"   // user text, tool results and assistant turns (the default)
)

// ParseScope reads a scope name; "" is ScopeAll.
func ParseScope(s string) (Scope, error) {
	switch Scope(s) {
	case "":
		return ScopeAll, nil
	case ScopeUser, ScopeTools, ScopeAll:
		return Scope(s), nil
	}
	return "", fmt.Errorf("guard scope %q: want user, tools or all", s)
}

// Policy adjusts a check to one key or account: which segments are
// scored and the blocking threshold per role (0: the guard's; for
// assistant turns the guard's is stricter, see Check). The zero Policy
// is the guard's default.
type Policy struct {
	// Tenant scopes the score cache: texts are looked up among the
	// scores of the same tenant's requests only (an account; "" is a
	// tenant of its own). See cache.go.
	Tenant             string
	Scope              Scope
	UserThreshold      float64
	ToolThreshold      float64
	AssistantThreshold float64
}

// Validate reports whether the policy is usable.
func (p Policy) Validate() error {
	if _, err := ParseScope(string(p.Scope)); err != nil {
		return err
	}
	for _, t := range []float64{p.UserThreshold, p.ToolThreshold, p.AssistantThreshold} {
		if t < 0 || t >= 1 {
			return fmt.Errorf("guard threshold %v outside [0, 1)", t)
		}
	}
	return nil
}

// scores reports whether the policy scores segments of src.
func (p Policy) scores(src Source) bool {
	switch src {
	case SourceSystem:
		return false
	case SourceTool, SourceToolSpec:
		return p.Scope != ScopeUser
	case SourceAssistant:
		return p.Scope == "" || p.Scope == ScopeAll
	}
	return true
}

// Config configures a Guard. The zero value uses the model's defaults.
type Config struct {
	// Threshold is the attack score at or above which a request is
	// flagged, in (0, 1); 0 means the model's default.
	Threshold float64
	// Grey is the lower end of the grey band, below the threshold; 0
	// means the model's, negative means no band.
	Grey float64
	// CacheEntries bounds the score cache (cache.go): 0 means
	// DefaultCacheEntries, negative no cache.
	CacheEntries int
}

// Validate reports whether the configuration is usable.
func (c Config) Validate() error {
	if c.Threshold < 0 || c.Threshold >= 1 {
		return fmt.Errorf("guard threshold %v outside [0, 1)", c.Threshold)
	}
	if c.Grey >= 1 || c.Grey > 0 && c.Threshold > 0 && c.Grey >= c.Threshold {
		return fmt.Errorf("guard grey band from %v: must be below the threshold", c.Grey)
	}
	return nil
}

// Scanning. A segment is scored in windows of windowSize bytes
// overlapping by windowOverlap, the verdict being the highest window.
const (
	windowSize    = 8192
	windowOverlap = 512
)

// Guard detects prompt-extraction, jailbreak and injection attempts. It
// is safe for concurrent use.
type Guard struct {
	model     *Model
	lex       *lexicon
	threshold float64
	grey      float64     // 0: no grey band
	pool      sync.Pool   // *scratch
	cache     *scoreCache // nil: none
}

// New loads the embedded model.
func New(cfg Config) (*Guard, error) {
	var m Model
	if err := json.Unmarshal([]byte(embeddedModel), &m); err != nil {
		return nil, fmt.Errorf("load guard model: %w", err)
	}
	return NewWithModel(&m, cfg)
}

// NewWithModel builds a Guard on a given model (the training command
// uses it to evaluate models it has just trained).
func NewWithModel(m *Model, cfg Config) (*Guard, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if m == nil || m.local == nil || len(m.sparse) != numBuckets*numCols || len(m.dense) != numDense*numCols {
		return nil, errors.New("guard model is empty or malformed")
	}
	g := &Guard{model: m, lex: newLexicon(), threshold: cfg.Threshold}
	switch {
	case cfg.CacheEntries == 0:
		g.cache = newScoreCache(DefaultCacheEntries)
	case cfg.CacheEntries > 0:
		g.cache = newScoreCache(cfg.CacheEntries)
	}
	if g.threshold == 0 {
		g.threshold = m.Threshold
	}
	switch {
	case cfg.Grey < 0:
	case cfg.Grey > 0:
		g.grey = cfg.Grey
	default:
		g.grey = m.Grey
	}
	if g.grey >= g.threshold {
		g.grey = 0 // a lowered threshold leaves no band below it
	}
	g.pool.New = func() any {
		return &scratch{
			norm:   make([]byte, 0, 8192),
			toks:   make([]byte, 0, 8192),
			tokens: make([]token, 0, 2048),
			sparse: make([]uint32, 0, 16384),
			hits:   make([]int32, 0, 256),
		}
	}
	return g, nil
}

// mentionCap is the highest score of a text whose attack phrasing is
// mentioned, not issued: the middle of the grey band (just below the
// threshold without one).
func (g *Guard) mentionCap() float64 {
	if g.grey > 0 {
		return (g.grey + g.threshold) / 2
	}
	return g.threshold * 0.99
}

// Threshold is the score at or above which Check flags a request.
func (g *Guard) Threshold() float64 { return g.threshold }

// Grey is the lower end of the grey band (0: none).
func (g *Guard) Grey() float64 { return g.grey }

// assistantThreshold is stricter: assistant turns in a request are
// normally the model's own past answers, which may quote attacks while
// refusing them, but a caller can forge them to carry one.
func (g *Guard) assistantThreshold() float64 { return g.threshold + (1-g.threshold)/2 }

// thresholdFor is the blocking threshold of a segment of src under p.
func (g *Guard) thresholdFor(p *Policy, src Source) float64 {
	switch {
	case src == SourceUser && p.UserThreshold > 0:
		return p.UserThreshold
	case (src == SourceTool || src == SourceToolSpec) && p.ToolThreshold > 0:
		return p.ToolThreshold
	case src == SourceAssistant && p.AssistantThreshold > 0:
		return p.AssistantThreshold
	case src == SourceAssistant:
		return g.assistantThreshold()
	}
	return g.threshold
}

// Check scores every non-system segment and returns the request's
// verdict, under the default policy.
func (g *Guard) Check(segs []Segment) Verdict {
	return g.CheckPolicy(segs, Policy{})
}

// CheckPolicy scores the segments the policy's scope takes, each against
// its role's threshold, and returns the request's verdict. Every byte of
// every scored segment is read (see segments.go): each segment in all
// its windows, and, when there are several, the consecutive short
// segments together (a payload split over turns is seen whole), so the
// cost is linear in the text's size with no cap that padding exhausts.
func (g *Guard) CheckPolicy(segs []Segment, p Policy) Verdict {
	sc := g.pool.Get().(*scratch)
	defer g.pool.Put(sc)
	return g.check(sc, segs, p)
}

// check is CheckPolicy with the scratch given.
func (g *Guard) check(sc *scratch, segs []Segment, p Policy) Verdict {
	best := Verdict{Segment: -1}
	var bestRes result
	var bestSrc Source
	bestForeign, greyForeign := false, false
	greyAt, greyScore, greyText := -1, 0.0, ""
	// consider weighs the result r of segment i's text (or of a pack of
	// segments ending with i, whose joined text is joined when grey or
	// flagged; thr then is the pack's threshold, and foreign says the
	// pack holds text the caller did not write).
	consider := func(i int, r result, thr float64, joined func() string, foreign bool) {
		src := segs[i].Source
		if thr == 0 {
			thr = g.thresholdFor(&p, src)
		}
		foreign = foreign || !callerSource(src)
		flagged := r.score >= thr
		if !flagged && g.grey > 0 && r.score >= min(g.grey, thr) && r.score > greyScore {
			greyAt, greyScore, greyText, greyForeign = i, r.score, "", foreign
			switch {
			case joined != nil:
				greyText = joined()
			case r.to > 0:
				greyText = segs[i].Text[r.from:r.to]
			}
		}
		if flagged && !best.Flagged || flagged == best.Flagged && r.score > best.Score {
			best.Flagged, best.Score, best.Segment = flagged, r.score, i
			bestRes, bestSrc, bestForeign = r, src, foreign
			best.Text = ""
			switch {
			case joined != nil && r.score >= min(g.grey, thr):
				best.Text = joined()
			case r.to > 0:
				best.Text = segs[i].Text[r.from:r.to] // the window of a long segment
			}
		}
	}
	idx := sc.idx[:0]
	for i, s := range segs {
		if s.Source != SourceSystem && p.scores(s.Source) && strings.TrimSpace(s.Text) != "" {
			idx = append(idx, i)
		}
	}
	sc.idx = idx
	for _, i := range idx {
		if len(idx) > packOnly && len(segs[i].Text) <= 2*packEdge {
			continue // read whole in the packs
		}
		text := segs[i].Text
		consider(i, g.cachedScore(&p, cacheSegment, text, func() result { return g.scoreText(sc, text) }), 0, nil, false)
	}
	if at, ok := forgedManyShot(segs, idx); ok {
		// The same transcript as request turns, read as one.
		consider(at, result{score: ruleScore, kind: KindExtraction, rule: "many-shot transcript of disclosed instructions in the request's turns"}, 0, nil, false)
	}
	if len(idx) > 1 {
		g.scorePacks(sc, segs, idx, &p, consider)
		// The user's spelled turns read together, without the replies
		// between them: an order spelled one to three words a turn
		// ("join the words of my last messages"), however long the
		// conversation before it. (Longer turns are read whole and in
		// the packs above; these add at most a few words a turn.)
		uidx := sc.uidx[:0]
		for _, i := range idx {
			if segs[i].Source == SourceUser && spelledTurn(segs[i].Text) {
				uidx = append(uidx, i)
			}
		}
		sc.uidx = uidx
		if len(uidx) > 1 && len(uidx) < len(idx) {
			g.scorePacks(sc, segs, uidx, &p, consider)
		}
	}
	if best.Score == 0 {
		return best
	}
	best.ThirdParty = bestForeign
	if !best.Flagged && greyAt >= 0 {
		best.Grey, best.Segment, best.Text, best.ThirdParty = true, greyAt, greyText, greyForeign
	}
	best.Kind = bestRes.kind
	if bestSrc == SourceTool || bestSrc == SourceToolSpec {
		best.Kind = KindInjection // an instruction smuggled into a document
	}
	if best.Flagged {
		where := bestSrc.String()
		if best.Text != "" && bestRes.to == 0 {
			where = "consecutive turns ending in " + where
			if bestForeign && callerSource(bestSrc) {
				where = "consecutive turns holding third-party text, ending in " + bestSrc.String()
			}
		}
		if bestRes.rule != "" {
			best.Reason = fmt.Sprintf("%s in %s text: %s", best.Kind, where, bestRes.rule)
		} else {
			best.Reason = fmt.Sprintf("%s in %s text (score %.2f", best.Kind, where, best.Score)
			if bestRes.cue != "" {
				best.Reason += ", cue " + bestRes.cue
			}
			best.Reason += ")"
		}
	}
	return best
}

// callerSource says whether text of src is the caller's own (user,
// assistant or system text), not a tool result, document or tool
// description.
func callerSource(src Source) bool {
	switch src {
	case SourceUser, SourceAssistant, SourceSystem:
		return true
	}
	return false
}

// result is the score of one text.
type result struct {
	score float64
	kind  Kind
	rule  string
	cue   string
	// from, to: the window of a long segment that scored it (0, 0: the
	// whole text)
	from, to int
	// mentioned: the text's phrasing is framed as talked about
	mentioned bool
	// sentenceCue: a sentence of the text may be an order (sentences.go)
	sentenceCue bool
}

// scoreText scores one segment through all its windows, the score
// being the highest window's.
func (g *Guard) scoreText(sc *scratch, text string) result {
	if manyShot(text) {
		// A made-up transcript of disclosures, read as one (manyshot.go).
		return result{score: ruleScore, kind: KindExtraction, rule: "many-shot transcript of disclosed instructions"}
	}
	if len(text) <= windowSize {
		return g.sentencesToo(sc, g.framedMention(sc, g.scoreWindow(sc, text), text), text, 0)
	}
	var best result
	step := windowSize - windowOverlap
	for start := 0; start < len(text); start += step {
		s, e := alignWindow(text, start, min(start+windowSize, len(text)))
		r := g.framedMention(sc, g.scoreWindow(sc, text[s:e]), text[s:e])
		r.from, r.to = s, e
		if r = g.sentencesToo(sc, r, text[s:e], s); r.score > best.score {
			best = r
		}
		if start+windowSize >= len(text) {
			break
		}
	}
	return best
}

// sentencesToo is r, the score of window text (at offset in its
// segment), or its best sentence's when that is higher (see Padding in
// sentences.go). A window already flagged, or whose phrasing is framed as
// mentioned, is not read again a sentence at a time.
func (g *Guard) sentencesToo(sc *scratch, r result, text string, offset int) result {
	if r.score >= g.threshold || r.mentioned || !r.sentenceCue {
		return r
	}
	if rs := g.scoreSentences(sc, text, offset); rs.score > r.score {
		return rs
	}
	return r
}

// alignWindow moves window edges to the next whitespace so words are
// not cut, staying within 64 bytes.
func alignWindow(s string, start, end int) (int, int) {
	if start > 0 {
		for i := start; i < len(s) && i < start+64; i++ {
			if s[i] == ' ' || s[i] == '\n' {
				start = i + 1
				break
			}
		}
	}
	if end < len(s) {
		for i := end; i > start && i > end-64; i-- {
			if s[i] == ' ' || s[i] == '\n' {
				end = i
				break
			}
		}
	}
	return start, end
}

// shortTokens and shortLogit are the short-text prior: a text of at most
// shortTokens words carries little evidence either way, and the model's
// intercepts alone put one- and two-word turns ("quick", "Say ok") near
// the threshold, so their logit is lowered by shortLogit. Attacks that
// short are the rules' (which lift the score whatever the model's) or
// encoded payloads, whose decoded views are scored without the prior.
const (
	shortTokens = 2
	shortLogit  = 1.0
)

func shortPrior(tokens int) float64 {
	if tokens <= shortTokens {
		return shortLogit
	}
	return 0
}

// scoreWindow extracts features of text and scores them.
func (g *Guard) scoreWindow(sc *scratch, text string) result {
	sc.scored += len(text)
	extract(sc, g.lex, text)
	sentenceCue := !sc.sentencePass && sc.sentenceCue()
	// The mean of the window model's logit and the local model's best
	// run's (cross-validation measured the mean above the higher of the
	// two, on held-out recall at the same false-positive rate).
	z, col := g.model.windowLogit(sc)
	if zl := g.model.local.localLogit(sc); !math.IsInf(zl, -1) {
		z = (z + zl) / 2
	}
	z -= shortPrior(len(sc.tokens))
	r := result{score: sigmoid(z), kind: kindOf(col), sentenceCue: sentenceCue}
	if r.score < ruleScore && sc.rule.name == "" && !sc.mentioned {
		// The views alone (decoded, reshaped): scored apart so that the
		// text around an encoded order does not dilute it. A phrasing
		// the text itself mentions is not read again without its frame.
		base, baseCol := r, col
		if extractViews(sc, g.lex) {
			zv, cv := g.model.windowLogit(sc)
			if zl := g.model.local.localLogit(sc); !math.IsInf(zl, -1) {
				zv = (zv + zl) / 2
			}
			if sv := sigmoid(zv); sv > base.score || sc.rule.name != "" {
				r, col = result{score: sv, kind: kindOf(cv), sentenceCue: sentenceCue}, cv
			} else {
				// the text's own score stands (its cue is read from the
				// views' features, which hold the decoded words)
				r, col = base, baseCol
				sc.rule, sc.mentioned = ruleHit{}, false
			}
		}
	}
	r.mentioned = sc.mentioned
	if sc.mentioned && sc.rule.name == "" {
		// Mention is not use: a phrasing the rules passed over as talked
		// about is scored apart, at most in the grey band, which a
		// second stage judges when one is configured.
		r.score = min(r.score, g.mentionCap())
	}
	if sc.rule.name != "" && r.score < ruleScore {
		r.score = ruleScore
		if sc.rule.kind != "" {
			r.kind = sc.rule.kind
		}
	}
	if sc.rule.name != "" {
		r.rule = sc.rule.name
	}
	if r.score >= g.threshold && r.rule == "" {
		r.cue = g.model.topCue(sc, col)
	}
	return r
}

func kindOf(col int) Kind {
	switch col {
	case colExtraction:
		return KindExtraction
	case colJailbreak:
		return KindJailbreak
	}
	return KindInjection
}

// spelledTurn reports whether a turn is one to maxSpelledWords words
// (at most 64 bytes): a piece of an order spelled over turns.
func spelledTurn(s string) bool {
	if len(s) > 64 {
		return false
	}
	words, in := 0, false
	for i := 0; i < len(s); i++ {
		sp := s[i] == ' ' || s[i] == '\n' || s[i] == '\t'
		if !sp && !in {
			words++
		}
		in = !sp
	}
	return words >= 1 && words <= maxSpelledWords
}

// maxSpelledWords is the most words of a turn read with the user's other
// spelled turns.
const maxSpelledWords = 3
