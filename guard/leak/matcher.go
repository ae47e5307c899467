package leak

import (
	"strconv"
	"unicode/utf8"
)

// Leak is what a Matcher found. It never holds protected text.
type Leak struct {
	// Form is how the answer carried it: "verbatim", "base64",
	// "reversed_characters", "rot13", "spaced_letters"... joined with
	// "+" when several apply.
	Form string
	// Words is the number of consecutive protected words seen.
	Words int
	// Canary: the canary leaked, not the text.
	Canary bool
	// At is the answer byte offset where the leaked run began.
	At int64
}

// Excerpt describes the leak for an incident, without the protected
// text.
func (l *Leak) Excerpt() string {
	what := strconv.Itoa(l.Words) + " consecutive words of the protected text"
	if l.Canary {
		what = "the directive's canary"
	}
	return "the answer carried " + what + " (form: " + l.Form + ") from byte " + strconv.FormatInt(l.At, 10)
}

// Matcher reads one answer. It is not safe for concurrent use.
type Matcher struct {
	text  textView
	b64   radixView
	b32   radixView
	hex   hexView
	codes [3]codeView // decimal and A1Z26, binary, Morse
	n     int64       // bytes written
	short bool        // the set leaks in one word (a canary): hold what is unread
	idle  bool        // no set: nothing to find
	rel   int64       // bytes released so far: never taken back
	found *Leak
	// bufs back the seven tracks' candidates and held words: one
	// allocation a matcher instead of two a track (none when idle).
	bufs *[7]trackBuf
}

// trackBuf is the starting room of one track: its open candidates and
// the letters its normalizer holds back (either grows past it by
// append, into its own array).
type trackBuf struct {
	cands [4]cand
	out   [maxTok]letterOut
}

// NewMatcher returns a Matcher for one answer. On a nil Set (nothing
// can leak) it returns one that releases everything and finds nothing.
func (s *Set) NewMatcher() *Matcher {
	if s == nil {
		return &Matcher{idle: true}
	}
	m := &Matcher{short: s.short, bufs: getBufs()}
	m.text.t.init(s, "", &m.bufs[0])
	m.b64.t.init(s, "base64", &m.bufs[1])
	m.b64.bits, m.b64.table, m.b64.quantum, m.b64.minRun = 6, &b64Values, 4, 16
	m.b32.t.init(s, "base32", &m.bufs[2])
	m.b32.bits, m.b32.table, m.b32.quantum, m.b32.minRun = 5, &b32Values, 8, 16
	m.hex.t.init(s, "hex", &m.bufs[3])
	for i, name := range [...]string{"character_codes", "binary", "morse"} {
		m.codes[i].t.init(s, name, &m.bufs[4+i])
		m.codes[i].kind = uint8(i)
	}
	return m
}

// Write reads the next piece of the answer. It returns how many bytes
// of the answer so far (from its first byte) can be released, and the
// leak once found (after which nothing more is released or read).
func (m *Matcher) Write(p []byte) (release int64, leak *Leak) {
	if m.idle {
		m.n += int64(len(p))
		m.rel = m.n
		return m.n, nil
	}
	if m.found != nil {
		return m.release(), m.found
	}
	base := m.n
	m.n += int64(len(p))
	if l := m.text.write(p, base); l != nil {
		m.found = l
	} else if l := m.b64.write(p, base); l != nil {
		m.found = l
	} else if l := m.b32.write(p, base); l != nil {
		m.found = l
	} else if l := m.hex.write(p, base); l != nil {
		m.found = l
	} else {
		for i := range m.codes {
			if l := m.codes[i].write(p, base); l != nil {
				m.found = l
				break
			}
		}
	}
	return m.release(), m.found
}

// WriteString is Write for a string.
func (m *Matcher) WriteString(s string) (int64, *Leak) {
	// The views read bytes one at a time: no copy is kept.
	return m.Write(unsafeBytes(s))
}

// Close ends the answer: a word still open is read, and, with no leak,
// everything is released.
func (m *Matcher) Close() (release int64, leak *Leak) {
	if m.idle {
		return m.n, nil
	}
	if m.found != nil {
		return m.release(), m.found
	}
	for i := range m.codes {
		if l := m.codes[i].finish(); l != nil {
			m.found = l
			return m.release(), l
		}
	}
	for _, t := range m.tracks() {
		t.n.end()
		if l := t.drain(); l != nil {
			m.found = l
			return m.release(), l
		}
	}
	m.rel = m.n
	m.recycle()
	return m.n, nil
}

// freeBufs are tracks' buffers given back by matchers that closed
// without a leak, for the next matchers: a bounded free list (a
// sync.Pool would keep a burst's buffers live through the collector's
// next cycles).
var freeBufs = make(chan *[7]trackBuf, 64)

func getBufs() *[7]trackBuf {
	select {
	case b := <-freeBufs:
		return b
	default:
		return new([7]trackBuf)
	}
}

// recycle gives the tracks' buffers back once the answer is read
// whole: the tracks let go of them first, so a matcher used after its
// Close grows buffers of its own and never touches another's.
func (m *Matcher) recycle() {
	if m.bufs == nil {
		return
	}
	for _, t := range m.tracks() {
		t.cands, t.n.out = nil, nil
	}
	select {
	case freeBufs <- m.bufs:
	default:
	}
	m.bufs = nil
}

// release is the answer bytes no open candidate reaches back into (a
// candidate opens k letters into its run, which may be out already:
// those few letters are all a leak ever shows).
func (m *Matcher) release() int64 {
	if m.found != nil {
		return m.rel
	}
	r := m.n
	for _, t := range m.tracks() {
		if h := t.held(); h < r {
			r = h
		}
	}
	if m.short {
		// Input a view has not read yet (a word, an escape, a run too
		// short to decode so far) may be a whole canary. (It cannot be
		// MaxWords+1 whole words of text: a word longer than maxTok is
		// read as it comes, and the pending encoded runs are shorter
		// than that once decoded; what would extend an open candidate
		// is held with it.)
		r = min(r, m.text.pending(), m.b64.pending(), m.b32.pending(), m.hex.pending(),
			m.codes[0].pending(), m.codes[1].pending(), m.codes[2].pending())
	}
	m.rel = max(m.rel, r)
	return m.rel
}

func (m *Matcher) tracks() [7]*track {
	return [7]*track{&m.text.t, &m.b64.t, &m.b32.t, &m.hex.t, &m.codes[0].t, &m.codes[1].t, &m.codes[2].t}
}

// Held is how many bytes of the answer so far are held back.
func (m *Matcher) Held() int64 { return m.n - m.release() }

// ring holds the last letters a track saw.
const ringN = 16

// cand is a run of the answer matching a pattern so far.
type cand struct {
	org int64 // answer offset of the run's first letter
	// counts when the candidate began, for naming the form
	words, esc, pct, qp, nl int64
	pat                     int32
	start                   int32 // the pattern's first matched step (letters from start-1)
	next                    int32 // the pattern's next expected step
	shift                   rune
}

// track matches one decoded view of the answer against the set.
type track struct {
	s     *Set
	name  string
	n     normalizer
	prev  rune
	seen  int64 // letters seen
	h     uint64
	diffs [ringN]uint32
	orgs  [ringN]int64
	lets  [ringN]rune
	cands []cand
	// what the view decoded, for naming the form
	esc, pct, qp, nl int64
}

func (t *track) init(s *Set, name string, b *trackBuf) {
	t.s, t.name = s, name
	t.cands = b.cands[:0:len(b.cands)]
	t.n.out = b.out[:0:len(b.out)]
}

// maxCands bounds the open candidates of a track.
const maxCands = 16

// hashOut is hashBase^k: the weight of the step leaving the window.
var hashOut = func() uint64 {
	x := uint64(1)
	for range k {
		x *= hashBase
	}
	return x
}()

// held is the first answer offset an open candidate holds.
func (t *track) held() int64 {
	r := int64(1<<62 - 1)
	if t.s.short && t.n.n > 0 {
		// A word not yet read may be a whole canary.
		r = t.n.tok[0].org
	}
	for i := range t.cands {
		if t.cands[i].org < r {
			r = t.cands[i].org
		}
	}
	return r
}

// rune hands the track one decoded rune.
func (t *track) rune(r rune, org int64) *Leak {
	t.n.feed(r, org)
	if len(t.n.out) == 0 {
		return nil
	}
	return t.drain()
}

// sep ends a word.
func (t *track) sep() *Leak {
	t.n.end()
	if len(t.n.out) == 0 {
		return nil
	}
	return t.drain()
}

func (t *track) drain() *Leak {
	for _, o := range t.n.out {
		if l := t.letter(o.c, o.org); l != nil {
			t.n.out = t.n.out[:0]
			return l
		}
	}
	t.n.out = t.n.out[:0]
	return nil
}

// letter advances the open candidates by one letter and starts new ones
// where the last k steps begin a protected word.
func (t *track) letter(c rune, org int64) *Leak {
	d := noDiff - 1
	if t.seen > 0 {
		d = step(t.prev, c)
	}
	t.prev = c
	slot := t.seen % ringN
	leaving := t.diffs[(t.seen-k+ringN)%ringN]
	t.diffs[slot], t.orgs[slot], t.lets[slot] = d, org, c
	t.seen++
	// Advance.
	live := t.cands[:0]
	for _, cd := range t.cands {
		p := &t.s.pats[cd.pat]
		if int(cd.next) < len(p.diff) && p.diff[cd.next] == d {
			cd.next++
			if l := t.check(&cd, p); l != nil {
				return l
			}
			live = append(live, cd)
		}
	}
	t.cands = live
	// The window of the last k steps.
	t.h = t.h*hashBase + uint64(d)
	if t.seen > k {
		t.h -= uint64(leaving) * hashOut
	}
	if t.seen <= k {
		return nil
	}
	h := t.h | 1
	if f := h >> t.s.fshift; t.s.filter[f/64]&(1<<(f%64)) == 0 {
		return nil
	}
	for j := h & t.s.mask; t.s.keys[j] != 0; j = (j + 1) & t.s.mask {
		if t.s.keys[j] != h {
			continue
		}
		pi, at := int32(t.s.vals[j]>>32), int32(t.s.vals[j])
		if l := t.start(pi, at); l != nil {
			return l
		}
	}
	return nil
}

// start opens a candidate for pattern pi whose steps at..at+k-1 the last
// k steps may equal.
func (t *track) start(pi, at int32) *Leak {
	p := &t.s.pats[pi]
	for i := int64(0); i < k; i++ {
		if p.diff[int64(at)+i] != t.diffs[(t.seen-k+i)%ringN] {
			return nil // a hash collision
		}
	}
	for _, cd := range t.cands {
		if cd.pat == pi && cd.next == at+k {
			return nil // already open
		}
	}
	if len(t.cands) >= maxCands {
		return nil
	}
	first := (t.seen - k - 1) % ringN // the letter before the first step
	cd := cand{pat: pi, start: at, next: at + k, org: t.orgs[first],
		words: t.n.words, esc: t.esc, pct: t.pct, qp: t.qp, nl: t.nl,
		shift: t.lets[first] - p.letters[at-1]}
	if l := t.check(&cd, p); l != nil {
		return l
	}
	t.cands = append(t.cands, cd)
	return nil
}

// check reports a leak once the candidate covers need whole words.
func (t *track) check(cd *cand, p *pattern) *Leak {
	first, last := cd.start-1, cd.next-1 // letters matched: first..last
	fw := p.wordOf[first]
	if p.wstart[fw] < first {
		fw++
	}
	lw := p.wordOf[last]
	if p.wend[lw] > last+1 {
		lw--
	}
	if lw-fw+1 < p.need {
		return nil
	}
	return &Leak{Form: t.form(cd, p), Words: int(lw - fw + 1), Canary: p.canary, At: cd.org}
}

// form names how the run was written.
func (t *track) form(cd *cand, p *pattern) string {
	var f []string
	if t.name != "" {
		f = append(f, t.name)
	}
	switch p.kind {
	case reversedChars:
		f = append(f, "reversed_characters")
	case reversedWords:
		f = append(f, "reversed_words")
	case atbash:
		f = append(f, "atbash")
	}
	if s := (cd.shift%26 + 26) % 26; s != 0 && p.kind != atbash {
		if s == 13 {
			f = append(f, "rot13")
		} else {
			f = append(f, "caesar_shift_"+strconv.Itoa(int(s)))
		}
	}
	letters := int64(cd.next - cd.start + 1)
	words := t.n.words - cd.words
	switch {
	case t.pct-cd.pct > 2:
		f = append(f, "url_encoding")
	case t.qp-cd.qp > 2:
		f = append(f, "quoted_printable")
	}
	switch {
	case words*2 >= letters:
		f = append(f, "spaced_letters")
	case words >= 3 && t.nl-cd.nl >= words-1:
		f = append(f, "one_word_per_line")
	case t.esc-cd.esc > 0:
		f = append(f, "escaped")
	}
	if len(f) == 0 {
		return "verbatim"
	}
	out := f[0]
	for _, s := range f[1:] {
		out += "+" + s
	}
	return out
}

// utf8Buf assembles runes from decoded bytes.
type utf8Buf struct {
	b   [utf8.UTFMax]byte
	n   int
	org int64
}

// byte adds one byte and hands complete runes (or a separator for bytes
// that are no text) to t.
func (u *utf8Buf) byte(t *track, c byte, org int64) *Leak {
	if u.n == 0 {
		if c < 0x80 {
			return t.rune(rune(c), org)
		}
		u.org = org
	}
	u.b[u.n] = c
	u.n++
	if !utf8.FullRune(u.b[:u.n]) {
		return nil
	}
	r, size := utf8.DecodeRune(u.b[:u.n])
	b, n := u.b, u.n
	u.n = 0
	if r == utf8.RuneError && size <= 1 {
		if l := t.sep(); l != nil {
			return l
		}
		// The bytes after the first may start the next rune.
		for i := 1; i < n; i++ {
			if l := u.byte(t, b[i], org); l != nil {
				return l
			}
		}
		return nil
	}
	return t.rune(r, u.org)
}

func (u *utf8Buf) reset() { u.n = 0 }

// none is an offset beyond any answer.
const none = int64(1<<62 - 1)

func (u *utf8Buf) pending() int64 {
	if u.n > 0 {
		return u.org
	}
	return none
}

func (v *textView) pending() int64 {
	if v.st != stText {
		return min(v.escOrg, v.u.pending())
	}
	return v.u.pending()
}

func (v *radixView) pending() int64 {
	r := v.u.pending()
	if v.run > 0 && v.run < v.minRun {
		r = min(r, v.waitOrg[0])
	}
	if v.nacc > 0 && v.run >= v.minRun {
		r = min(r, v.byteOrg)
	}
	return r
}

func (v *hexView) pending() int64 {
	r := v.u.pending()
	if v.pairs > 0 && v.pairs < hexMinPairs {
		r = min(r, v.worg[0])
	}
	if v.odd {
		r = min(r, v.org)
	}
	return r
}

func (v *codeView) pending() int64 {
	r := none
	if v.run > 0 && v.run < codeMinRun {
		r = v.worg[0]
	}
	if v.n > 0 {
		r = min(r, v.tokOrg)
	}
	return r
}
