package guard

import (
	"math/bits"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Feature-space constants. Changing any of them changes the model's
// signature, and a model trained with other values is refused.
const (
	featureVersion = 10
	bucketBits     = 17 // 2^17 hashed buckets for word unigrams and bigrams
	numBuckets     = 1 << bucketBits
	pairWindow     = 5 // a concept pair counts when at most this many tokens apart
	denseRef       = 1 // see denseNorm
	negWindow      = 3 // a negation this many tokens before a pair marks it negated

	// Dense features: concept presence, ordered concept pairs (plain and
	// negated), then a few signals about obfuscation.
	densePairs    = numConcepts
	denseMisc     = densePairs + numConcepts*numConcepts*2
	miscDecoded   = denseMisc + 0 // base64 or hex decoded to text
	miscTransform = denseMisc + 1 // rot13 or reversed text recovered
	miscInvisible = denseMisc + 2 // zero-width or tag characters removed
	miscSpaced    = denseMisc + 3 // letters written s p a c e d out
	miscLeet      = denseMisc + 4 // digits standing for letters
	miscFlood     = denseMisc + 5 // a short token repeated very many times
	miscSymbols   = denseMisc + 6 // a long text made mostly of symbols
	numDense      = denseMisc + 7
	denseWords    = (numDense + 63) / 64
)

// Seeds separating the hashed feature families.
const (
	seedWord    = 0x9e3779b97f4a7c15
	seedBigram  = 0xc2b2ae3d27d4eb4f
	seedConcept = 0x27d4eb2f165667c5
)

// token is one word of the normalised text.
type token struct {
	start, end int32  // bytes in scratch.toks
	hash       uint64 // hash of the token's bytes
	concepts   uint64
	neg        bool // a negation occurs within negWindow tokens before
	sent       bool // the token starts a sentence or line
}

// scratch holds the per-check buffers, reused through a sync.Pool.
type scratch struct {
	norm             []byte
	toks             []byte
	tokens           []token
	sparse           []uint32 // hashed bucket indices, repeats allowed
	dense            [denseWords]uint64
	hits             []int32 // dense indices set, in first-set order
	rule             ruleHit
	sentAt           int // index of the next token that starts a sentence (tokenize)
	rotCues, revCues int // rot13 and reversed attack words seen (tokenize)
}

func (sc *scratch) reset() {
	sc.norm = sc.norm[:0]
	sc.toks = sc.toks[:0]
	sc.tokens = sc.tokens[:0]
	sc.sparse = sc.sparse[:0]
	sc.dense = [denseWords]uint64{}
	sc.hits = sc.hits[:0]
	sc.rule = ruleHit{}
	sc.sentAt = 0
	sc.rotCues, sc.revCues = 0, 0
}

func (sc *scratch) setDense(i int) {
	w, b := i>>6, uint64(1)<<(uint(i)&63)
	if sc.dense[w]&b == 0 {
		sc.dense[w] |= b
		sc.hits = append(sc.hits, int32(i))
	}
}

func mix(h uint64) uint64 {
	h ^= h >> 33
	h *= 0xff51afd7ed558ccd
	h ^= h >> 33
	h *= 0xc4ceb9fe1a85ec53
	h ^= h >> 33
	return h
}

func bucket(h uint64) uint32 { return uint32(h >> (64 - bucketBits)) }

// extract computes the features of text into sc (which it resets).
func extract(sc *scratch, lex *lexicon, text string) {
	sc.reset()
	var invisible bool
	sc.norm, invisible = normalizeText(sc.norm, text)
	n0 := len(sc.norm)
	var decoded bool
	sc.norm, decoded = appendDecoded(sc.norm, text)
	spaced, leet := tokenize(sc, lex, 0)
	transformed := sc.rotCues >= 2 || sc.revCues >= 2
	if transformed {
		// Written in rot13 or backwards: add the decoded copy.
		n1 := len(sc.norm)
		sc.norm = appendTransformed(sc.norm, sc.norm[:n0], sc.rotCues >= 2)
		s2, l2 := tokenize(sc, lex, n1)
		spaced, leet = spaced || s2, leet || l2
	}

	if decoded {
		sc.setDense(miscDecoded)
	}
	if transformed {
		sc.setDense(miscTransform)
	}
	if invisible {
		sc.setDense(miscInvisible)
	}
	if spaced {
		sc.setDense(miscSpaced)
	}
	if leet {
		sc.setDense(miscLeet)
	}

	// Word unigrams and bigrams, concept presence and concept pairs.
	var prev uint64 = seedWord
	run, maxRun := 0, 0
	for i := range sc.tokens {
		t := &sc.tokens[i]
		sc.sparse = append(sc.sparse, bucket(mix(t.hash^seedWord)), bucket(mix(prev*31+t.hash^seedBigram)))
		if i > 0 && t.hash == sc.tokens[i-1].hash {
			run++
			if run > maxRun {
				maxRun = run
			}
		} else {
			run = 0
		}
		prev = t.hash
		if t.concepts == 0 {
			continue
		}
		for m := t.concepts; m != 0; m &= m - 1 {
			sc.setDense(bits.TrailingZeros64(m))
		}
		lo := i - pairWindow
		if lo < 0 {
			lo = 0
		}
		for j := lo; j < i; j++ {
			p := &sc.tokens[j]
			if p.concepts == 0 {
				continue
			}
			neg := 0
			if p.neg {
				neg = 1
			}
			for a := p.concepts; a != 0; a &= a - 1 {
				ca := bits.TrailingZeros64(a)
				for b := t.concepts; b != 0; b &= b - 1 {
					cb := bits.TrailingZeros64(b)
					sc.setDense(densePairs + (ca*numConcepts+cb)*2 + neg)
				}
			}
		}
	}
	if maxRun >= 30 {
		sc.setDense(miscFlood)
	}
	if n := len(sc.norm); n >= 200 && len(sc.toks)*5 < n {
		sc.setDense(miscSymbols)
	}

	findRules(sc)
}

// isWordByte says whether an ASCII byte belongs to a word. '@', '$' and
// '|' count so that leetspeak like "p@$$w0rd" stays one token; they are
// trimmed from token edges.
func isWordByte(c byte) bool {
	// Bitmaps of a-z, 0-9, '\'', '@' and '$' over bytes 0-63 and 64-127.
	const lo = 0x3FF<<48 | 1<<39 | 1<<36
	const hi = 0x3FFFFFF<<33 | 1
	switch {
	case c < 64:
		return lo>>c&1 != 0
	case c < 128:
		return hi>>(c-64)&1 != 0
	}
	return false
}

// tokenize splits sc.norm into tokens written to sc.toks, undoing
// leetspeak and letter spacing, and looks up concepts. It reports
// whether spacing or leetspeak was undone.
func tokenize(sc *scratch, lex *lexicon, from int) (spaced, leet bool) {
	s := sc.norm
	type raw struct {
		start, end int
		gap        int // separator bytes before the token
	}
	var pending [64]raw // spaced-letter run being collected
	np := 0
	lastEnd := from

	flushSingles := func() {
		if np == 0 {
			return
		}
		if np >= 3 {
			// "i g n o r e" -> "ignore"
			spaced = true
			st := len(sc.toks)
			for k := 0; k < np; k++ {
				sc.toks = append(sc.toks, s[pending[k].start])
			}
			sc.addToken(lex, st, true)
		} else {
			for k := 0; k < np; k++ {
				st := len(sc.toks)
				sc.toks = append(sc.toks, s[pending[k].start:pending[k].end]...)
				sc.addToken(lex, st, false)
			}
		}
		np = 0
	}

	for i := from; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if !isWordByte(c) {
				i++
				continue
			}
		} else {
			r, n := utf8.DecodeRune(s[i:])
			if !unicode.IsLetter(r) && !unicode.IsDigit(r) {
				i += n
				continue
			}
		}
		j := i
		digits := false // digits, '@', '$' or '\'' (all below 'a'): leetspeak is possible
		for j < len(s) {
			c := s[j]
			if c < utf8.RuneSelf {
				if !isWordByte(c) {
					break
				}
				digits = digits || c < 'a'
				j++
				continue
			}
			r, n := utf8.DecodeRune(s[j:])
			if !unicode.IsLetter(r) && !unicode.IsDigit(r) {
				break
			}
			j += n
		}
		st, en := i, j
		for st < en && (s[st] == '\'' || s[st] == '@' || s[st] == '$') {
			st++
		}
		for en > st && (s[en-1] == '\'' || s[en-1] == '@' || s[en-1] == '$') {
			en--
		}
		gap := i - lastEnd
		gapNL := hasNewline(s[lastEnd:i])
		sent := hasStop(s[lastEnd:i])
		lastEnd = j
		i = j
		if st == en {
			continue
		}
		single := en-st == 1 && s[st] >= 'a' && s[st] <= 'z'
		if single && np > 0 && gap <= 2 && !gapNL && np < len(pending) {
			pending[np] = raw{st, en, gap}
			np++
			continue
		}
		flushSingles()
		if sent {
			sc.sentAt = len(sc.tokens)
		}
		if single {
			pending[0] = raw{st, en, gap}
			np = 1
			continue
		}
		tokStart := len(sc.toks)
		probe := en-st >= 12
		if digits && hasLeet(s[st:en]) {
			leet, probe = true, true
			for _, c := range s[st:en] {
				sc.toks = append(sc.toks, unleet(c))
			}
		} else {
			sc.toks = append(sc.toks, s[st:en]...)
		}
		sc.addToken(lex, tokStart, probe)
	}
	flushSingles()
	if n := len(sc.toks); n > 0 && sc.toks[n-1] == ' ' {
		sc.toks = sc.toks[:n-1]
	}

	// Mark tokens with a negation shortly before.
	lastNeg := -1 << 20
	for i := range sc.tokens {
		t := &sc.tokens[i]
		t.neg = i-lastNeg <= negWindow
		if t.concepts&(1<<cNeg) != 0 {
			lastNeg = i
		}
	}
	return spaced, leet
}

// hasStop reports whether separator bytes end a sentence or line.
func hasStop(b []byte) bool {
	for _, c := range b {
		switch c {
		case '.', '!', '?', '\n', ';', ':':
			return true
		}
	}
	return false
}

func hasNewline(b []byte) bool {
	for _, c := range b {
		if c == '\n' {
			return true
		}
	}
	return false
}

// addToken finishes the token written at sc.toks[st:], then a space.
// With probe (the token was joined from spaced letters, undone from
// leetspeak, or is 12 bytes or longer) an unknown token is searched for
// key stems: "ignorepreviousinstructions".
func (sc *scratch) addToken(lex *lexicon, st int, probe bool) {
	w := sc.toks[st:]
	h := wordHash(w)
	m := lex.lookup(h)
	if m&(cueRot13|cueReversed) != 0 {
		if m&cueRot13 != 0 {
			sc.rotCues++
		} else {
			sc.revCues++
		}
		m &= conceptBits
	}
	if m == 0 && probe && len(w) >= 9 {
		ws := string(w) // rare; the copy is acceptable
		for _, k := range keyStems() {
			if strings.Contains(ws, k.stem) {
				m |= k.mask
			}
		}
	}
	sc.tokens = append(sc.tokens, token{start: int32(st), end: int32(len(sc.toks)), hash: h, concepts: m, sent: len(sc.tokens) == sc.sentAt})
	sc.toks = append(sc.toks, ' ')
}

// hasLeet reports whether a token mixes letters with digits or symbols
// that stand for letters ("1gn0r3", "p@ssw0rd"), as opposed to numbers
// or identifiers like "mp3" (one digit at the end) or "2024".
func hasLeet(w []byte) bool {
	letters, subs := 0, 0
	for i, c := range w {
		switch {
		case c >= 'a' && c <= 'z':
			letters++
		case c == '0' || c == '1' || c == '3' || c == '4' || c == '5' || c == '7' || c == '@' || c == '$':
			if i > 0 && i < len(w)-1 || c == '@' || c == '$' {
				subs++
			}
		case c >= '0' && c <= '9':
		default:
			return false
		}
	}
	return letters >= 2 && subs >= 1
}

func unleet(c byte) byte {
	switch c {
	case '0':
		return 'o'
	case '1':
		return 'i'
	case '3':
		return 'e'
	case '4', '@':
		return 'a'
	case '5', '$':
		return 's'
	case '7':
		return 't'
	}
	return c
}
