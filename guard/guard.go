package guard

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
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
	SourceTool      = gw.TextTool // tool results and documents
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
type Verdict struct {
	Flagged bool
	Grey    bool
	Kind    Kind
	Score   float64
	Reason  string // short, human readable
	Segment int
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
	case SourceTool:
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

// Scanning bounds. A segment is scored in windows of windowSize bytes
// overlapping by windowOverlap, the verdict being the highest window. Up
// to maxWindows windows are scored per segment; a longer segment is
// scored on its head, its tail, the windows holding attack cue words, and
// evenly spaced windows in between.
const (
	windowSize    = 8192
	windowOverlap = 512
	maxWindows    = 24
	headTail      = 3
)

// Guard detects prompt-extraction, jailbreak and injection attempts. It
// is safe for concurrent use.
type Guard struct {
	model     *Model
	lex       *lexicon
	threshold float64
	grey      float64   // 0: no grey band
	pool      sync.Pool // *scratch
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
	case src == SourceTool && p.ToolThreshold > 0:
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
// its role's threshold, and returns the request's verdict. Its cost is
// bounded whatever the request's size: past maxRequestWindows windows it
// scores a sample (see segments.go).
func (g *Guard) CheckPolicy(segs []Segment, p Policy) Verdict {
	sc := g.pool.Get().(*scratch)
	defer g.pool.Put(sc)
	best := Verdict{Segment: -1}
	var bestRes result
	var bestSrc Source
	greyAt, greyScore := -1, 0.0
	consider := func(i int, r result) {
		src := segs[i].Source
		thr := g.thresholdFor(&p, src)
		flagged := r.score >= thr
		if !flagged && g.grey > 0 && r.score >= min(g.grey, thr) && r.score > greyScore {
			greyAt, greyScore = i, r.score
		}
		if flagged && !best.Flagged || flagged == best.Flagged && r.score > best.Score {
			best.Flagged, best.Score, best.Segment = flagged, r.score, i
			bestRes, bestSrc = r, src
		}
	}
	var idx []int
	for _, i := range scanned(segs) {
		if p.scores(segs[i].Source) {
			idx = append(idx, i)
		}
	}
	if ws := sample(segs, idx, randN); ws != nil {
		for _, w := range ws {
			text := segs[w.seg].Text
			start, end := alignWindow(text, w.start, min(w.start+windowSize, len(text)))
			consider(w.seg, g.scoreWindow(sc, text[start:end]))
		}
	} else {
		for _, i := range idx {
			consider(i, g.scoreText(sc, segs[i].Text))
		}
	}
	if best.Score == 0 {
		return best
	}
	if !best.Flagged && greyAt >= 0 {
		best.Grey, best.Segment = true, greyAt
	}
	best.Kind = bestRes.kind
	if bestSrc == SourceTool {
		best.Kind = KindInjection // an instruction smuggled into a document
	}
	if best.Flagged {
		if bestRes.rule != "" {
			best.Reason = fmt.Sprintf("%s in %s text: %s", best.Kind, bestSrc, bestRes.rule)
		} else {
			best.Reason = fmt.Sprintf("%s in %s text (score %.2f", best.Kind, bestSrc, best.Score)
			if bestRes.cue != "" {
				best.Reason += ", cue " + bestRes.cue
			}
			best.Reason += ")"
		}
	}
	return best
}

// result is the score of one text.
type result struct {
	score float64
	kind  Kind
	rule  string
	cue   string
}

// scoreText scores one segment through its windows.
func (g *Guard) scoreText(sc *scratch, text string) result {
	if len(text) <= windowSize {
		return g.scoreWindow(sc, text)
	}
	var best result
	consider := func(start int) {
		end := start + windowSize
		if end > len(text) {
			end = len(text)
		}
		start, end = alignWindow(text, start, end)
		if r := g.scoreWindow(sc, text[start:end]); r.score > best.score {
			best = r
		}
	}
	step := windowSize - windowOverlap
	n := (len(text) - windowOverlap + step - 1) / step
	if n <= maxWindows {
		for i := 0; i < n; i++ {
			consider(i * step)
		}
		return best
	}
	// Too long to scan whole: head and tail, windows with cue words,
	// then evenly spaced ones, up to maxWindows.
	var chosen [maxWindows]int
	k := 0
	pick := func(i int) {
		if k >= maxWindows || i < 0 || i >= n {
			return
		}
		for _, c := range chosen[:k] {
			if c == i {
				return
			}
		}
		chosen[k] = i
		k++
	}
	for i := 0; i < headTail; i++ {
		pick(i)
		pick(n - 1 - i)
	}
	for _, i := range cueScan(n, randN) {
		if k >= maxWindows-4 {
			break
		}
		end := i*step + windowSize
		if end > len(text) {
			end = len(text)
		}
		if hasCue(text[i*step : end]) {
			pick(i)
		}
	}
	for s := 1; k < maxWindows; s++ {
		pick(s * n / (maxWindows - k + 1))
		if s > maxWindows*2 {
			break
		}
	}
	for _, i := range chosen[:k] {
		consider(i * step)
	}
	return best
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

// cueWords are the attack words hasCue looks for (lower case), and
// cueStart maps each position's first two letters (case folded) to the
// word starting with them, plus one.
var (
	cueWords = [...]string{"gnor", "nstruct", "rompt", "asswor", "ecret", "ailbr", "eveal", "isregard", "retend", "ystem"}
	cueStart = func() *[1 << 16]uint8 {
		var t [1 << 16]uint8
		for i, w := range cueWords {
			t[uint16(w[0])<<8|uint16(w[1])] = uint8(i + 1)
		}
		return &t
	}()
)

// hasCue is a cheap, case-insensitive look for attack words, used to
// choose which windows of a very long text to score: one pass over the
// text, a table look-up per position.
func hasCue(s string) bool {
	t := cueStart
	for i := 0; i+4 <= len(s); i++ {
		k := t[uint16(s[i]|0x20)<<8|uint16(s[i+1]|0x20)]
		if k == 0 {
			continue
		}
		if w := cueWords[k-1]; len(s)-i >= len(w) && foldPrefix(s[i+2:], w[2:]) {
			return true
		}
	}
	return false
}

// foldPrefix reports whether s starts with the lower-case ASCII word w,
// ignoring ASCII case.
func foldPrefix(s, w string) bool {
	for j := 0; j < len(w); j++ {
		if s[j]|0x20 != w[j] {
			return false
		}
	}
	return true
}

// scoreWindow extracts features of text and scores them.
func (g *Guard) scoreWindow(sc *scratch, text string) result {
	extract(sc, g.lex, text)
	// The mean of the window model's logit and the local model's best
	// run's (cross-validation measured the mean above the higher of the
	// two, on held-out recall at the same false-positive rate).
	z, col := g.model.windowLogit(sc)
	if zl := g.model.local.localLogit(sc); !math.IsInf(zl, -1) {
		z = (z + zl) / 2
	}
	r := result{score: sigmoid(z), kind: kindOf(col)}
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
