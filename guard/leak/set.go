// Package leak is the guard's answer side: a streaming matcher that finds
// the caller's protected text (its system content and the optimizer's
// directive) in what the vendor answers, verbatim or nearly so and in
// the forms an extraction asks for: base64, base32, hex, URL and
// quoted-printable escapes, JSON and code escapes, reversed characters,
// reversed word order, letters spread apart, one word a line, numbered
// lists, ROT-N shifts, look-alike letters and leetspeak. More than
// MaxWords consecutive protected words in any of those forms is a leak;
// a canary (a random marker the optimizer's directive may carry) leaks
// whole.
//
// A Set is built once per protected text (Cache keeps them by content
// hash); a Matcher reads one answer as it streams and says how much of
// it can be released: everything but the shortest tail that could still
// grow into a leak. Memory per Matcher is bounded and independent of
// the answer's length. The package knows no wire shape: callers hand it
// the text a caller would read.
package leak

import (
	"unicode"

	"github.com/gwlabs/gateway/guard"
)

// MaxWords is the most consecutive protected words an answer may carry:
// one more is a leak.
const MaxWords = 8

// k is the number of letter steps a candidate match starts from: long
// enough that ordinary prose rarely starts one, shorter than any nine
// words of real text.
const k = 12

// Protected is what an answer must not carry.
type Protected struct {
	// Texts are the caller's system content and the optimizer's
	// directive, each matched on its own.
	Texts []string
	// Canary, when set, leaks whole in any form (letters only: digits
	// read as leetspeak).
	Canary string
}

// kind says how a pattern was derived from its protected text.
type kind uint8

const (
	forward       kind = iota
	reversedChars      // the whole text written backwards
	reversedWords      // the words in reverse order, each kept
	atbash             // a-z mirrored (a<->z, b<->y...), any ROT-N of it too
)

// pattern is one protected letter sequence with its word boundaries.
type pattern struct {
	letters []rune
	// diff[i] is the step from letter i-1 to letter i (see step);
	// diff[0] matches nothing.
	diff   []uint32
	wordOf []int32 // word index of each letter
	wstart []int32 // first letter of each word
	wend   []int32 // one past the last letter of each word
	need   int32   // consecutive whole words that make a leak
	kind   kind
	canary bool
}

// Set is the compiled protected text of one request: its patterns and an
// index of their k-step grams at word starts. A Set is read-only and
// safe for concurrent use.
type Set struct {
	pats []pattern
	// table is open addressing over (gram hash, pattern<<32|position).
	keys   []uint64
	vals   []uint64
	mask   uint64
	filter []uint64 // one bit per hash>>fshift: a quick no
	fshift uint
	short  bool // a pattern leaks in one word (the canary)
}

// noDiff never equals a step.
const noDiff = ^uint32(0)

// maxSame bounds the places one gram is indexed at.
const maxSame = 8

// step is the code for going from letter prev to letter c: for two
// ASCII letters their distance mod 26, so that a ROT-N shift of the text
// keeps every step; otherwise the letter itself.
func step(prev, c rune) uint32 {
	if c >= 'a' && c <= 'z' && prev >= 'a' && prev <= 'z' {
		return uint32((c - prev + 26) % 26)
	}
	return 64 + uint32(c)
}

const hashBase = 0x9E3779B97F4A7C15

// New compiles p. It returns nil when nothing can leak: no text of more
// than MaxWords words and no canary. Then the answer needs no check.
func New(p Protected) *Set {
	s := &Set{}
	for _, t := range p.Texts {
		letters, wordOf, ws, we := words(t)
		if len(ws) <= MaxWords {
			continue
		}
		s.add(letters, wordOf, ws, we, MaxWords+1, false)
	}
	if p.Canary != "" {
		letters, wordOf, ws, we := words(p.Canary)
		if len(letters) > k {
			// The canary is one word, however it is written.
			for i := range wordOf {
				wordOf[i] = 0
			}
			s.add(letters, wordOf, []int32{0}, []int32{int32(len(letters))}, 1, true)
			s.short = true
		}
		_, _ = ws, we
	}
	if len(s.pats) == 0 {
		return nil
	}
	s.build()
	return s
}

// add adds the text's three patterns: forward, reversed, words reversed.
func (s *Set) add(letters []rune, wordOf, ws, we []int32, need int32, canary bool) {
	n := int32(len(letters))
	nw := int32(len(ws))
	s.pats = append(s.pats, newPattern(letters, wordOf, ws, we, need, forward, canary))
	ab := make([]rune, n)
	for i, c := range letters {
		ab[i] = c
		if c >= 'a' && c <= 'z' {
			ab[i] = 'z' - (c - 'a')
		}
	}
	s.pats = append(s.pats, newPattern(ab, wordOf, ws, we, need, atbash, canary))
	// Reversed characters: letter i comes from n-1-i, word w from nw-1-w.
	rl := make([]rune, n)
	rwo := make([]int32, n)
	for i := int32(0); i < n; i++ {
		rl[i] = letters[n-1-i]
		rwo[i] = nw - 1 - wordOf[n-1-i]
	}
	rws, rwe := make([]int32, nw), make([]int32, nw)
	for w := int32(0); w < nw; w++ {
		o := nw - 1 - w
		rws[w], rwe[w] = n-we[o], n-ws[o]
	}
	s.pats = append(s.pats, newPattern(rl, rwo, rws, rwe, need, reversedChars, canary))
	if nw > 1 {
		// Reversed word order.
		wl := make([]rune, 0, n)
		wwo := make([]int32, 0, n)
		wws, wwe := make([]int32, nw), make([]int32, nw)
		for w := int32(0); w < nw; w++ {
			o := nw - 1 - w
			wws[w] = int32(len(wl))
			wl = append(wl, letters[ws[o]:we[o]]...)
			for range we[o] - ws[o] {
				wwo = append(wwo, w)
			}
			wwe[w] = int32(len(wl))
		}
		s.pats = append(s.pats, newPattern(wl, wwo, wws, wwe, need, reversedWords, canary))
	}
}

func newPattern(letters []rune, wordOf, ws, we []int32, need int32, kd kind, canary bool) pattern {
	d := make([]uint32, len(letters))
	for i := range letters {
		if i == 0 {
			d[i] = noDiff
			continue
		}
		d[i] = step(letters[i-1], letters[i])
	}
	return pattern{letters: letters, diff: d, wordOf: wordOf, wstart: ws, wend: we, need: need, kind: kd, canary: canary}
}

// build indexes each pattern's k-step grams that begin at a word start
// (the step into its second letter): a leak of whole words always holds
// one.
func (s *Set) build() {
	n := 0
	for i := range s.pats {
		n += len(s.pats[i].wstart)
	}
	size := 64
	for size < 2*n {
		size <<= 1
	}
	s.keys = make([]uint64, size)
	s.vals = make([]uint64, size)
	s.mask = uint64(size - 1)
	// The filter has 16 bits per gram, 2^16 at most.
	s.fshift = 64 - 10
	for bits := 1 << 10; bits < 16*n && s.fshift > 48; bits <<= 1 {
		s.fshift--
	}
	s.filter = make([]uint64, 1<<(64-s.fshift)/64)
	for pi := range s.pats {
		p := &s.pats[pi]
		for _, w := range p.wstart {
			at := w + 1 // the first step inside the word
			if int(at)+k > len(p.diff) {
				continue
			}
			var h uint64
			for _, d := range p.diff[at : at+k] {
				h = h*hashBase + uint64(d)
			}
			h |= 1 // 0 marks an empty slot
			j, same := h&s.mask, 0
			for s.keys[j] != 0 && same < maxSame {
				if s.keys[j] == h {
					same++
				}
				j = (j + 1) & s.mask
			}
			if same == maxSame {
				// A text that repeats itself: its first places are
				// enough to open a candidate (and a candidate covers
				// the repeats that follow).
				continue
			}
			s.keys[j], s.vals[j] = h, uint64(pi)<<32|uint64(at)
			f := h >> s.fshift
			s.filter[f/64] |= 1 << (f % 64)
		}
	}
}

// words reads t as the matcher reads an answer: folded letters, digits
// dropped from numbers and read as leetspeak inside words, everything
// else a word boundary. It returns the letters, each one's word, and
// each word's bounds.
func words(t string) (letters []rune, wordOf, ws, we []int32) {
	var n normalizer
	letters, wordOf = make([]rune, 0, len(t)), make([]int32, 0, len(t))
	ws, we = make([]int32, 0, len(t)/4), make([]int32, 0, len(t)/4)
	flush := func() {
		for _, o := range n.out {
			if o.start {
				if len(ws) > 0 {
					we = append(we, int32(len(letters)))
				}
				ws = append(ws, int32(len(letters)))
			}
			letters = append(letters, o.c)
			wordOf = append(wordOf, int32(len(ws)-1))
		}
		n.out = n.out[:0]
	}
	for _, r := range t {
		n.feed(r, 0)
		flush()
	}
	n.end()
	flush()
	if len(ws) > 0 {
		we = append(we, int32(len(letters)))
	}
	return letters, wordOf, ws, we
}

// letterOut is one letter a normalizer lets out.
type letterOut struct {
	org   int64 // where in the answer it came from
	c     rune
	start bool // first letter of a word
}

// maxTok bounds the word a normalizer holds back to decide whether it
// is a number.
const maxTok = 24

// normalizer folds runes into letters, word by word: a word of digits
// only (a number, a list's numbering) is dropped, digits inside a word
// are leetspeak, apostrophes vanish.
type normalizer struct {
	tok       [maxTok]letterOut
	n         int
	hasLetter bool
	long      bool // a word longer than maxTok: let out as it comes
	dropping  bool // ... or dropped, a number
	out       []letterOut
	words     int64 // words let out
}

func (n *normalizer) feed(r rune, org int64) {
	var c rune
	if r < 0x80 {
		c = r
		if c >= 'A' && c <= 'Z' {
			c += 32
		}
	} else {
		c = guard.Fold(r)
	}
	letter := c >= 'a' && c <= 'z'
	switch {
	case letter:
	case c >= '0' && c <= '9' || c == '@' || c == '$':
	case c == '\'' || c < 0:
		return // inside a word, or nothing at all
	case c >= 0x80 && (unicode.IsLetter(c) || unicode.Is(unicode.Mc, c)):
		letter = true
	default:
		n.end()
		return
	}
	if n.long {
		if !n.dropping {
			n.out = append(n.out, letterOut{c: leet(c), org: org})
		}
		return
	}
	n.tok[n.n] = letterOut{c: c, org: org}
	n.n++
	n.hasLetter = n.hasLetter || letter
	if n.n == maxTok {
		n.long, n.dropping = true, !n.hasLetter
		if n.hasLetter {
			n.let()
		}
		n.n = 0
	}
}

// end ends the current word.
func (n *normalizer) end() {
	if n.n > 0 && n.hasLetter {
		n.let()
	}
	n.n, n.hasLetter, n.long, n.dropping = 0, false, false, false
}

func (n *normalizer) let() {
	n.words++
	for i := 0; i < n.n; i++ {
		o := n.tok[i]
		o.c, o.start = leet(o.c), i == 0
		n.out = append(n.out, o)
	}
}

// leet reads a digit or sign inside a word as the letter it stands for
// (1 as i: folding l into i too would break ROT-N's steps).
func leet(c rune) rune {
	switch c {
	case '0':
		return 'o'
	case '1':
		return 'i'
	case '2':
		return 'z'
	case '3':
		return 'e'
	case '4', '@':
		return 'a'
	case '5', '$':
		return 's'
	case '6', '9':
		return 'g'
	case '7':
		return 't'
	case '8':
		return 'b'
	}
	return c
}
