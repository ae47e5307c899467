package guard

import (
	"encoding/binary"
	"math/bits"
	"slices"
	"unicode"
	"unicode/utf8"
)

// Feature-space constants. Changing any of them changes the model's
// signature, and a model trained with other values is refused.
const (
	featureVersion = 13
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
	neg        bool  // a negation occurs within negWindow tokens before
	sent       bool  // the token starts a sentence or line
	negd       bool  // a negation occurs earlier in the token's sentence, at most 8 tokens back (rules)
	probe      bool  // joined, undone from leetspeak or long: look for key stems if unknown
	ml         uint8 // multilingual rule categories (multilingual.go)
}

// scratch holds the per-check buffers, reused through a sync.Pool.
type scratch struct {
	norm             []byte
	toks             []byte
	tokens           []token
	ctoks            []int32 // indices of the tokens with concepts, in order
	edges            []int32 // bounds of the words in norm, start and end in turn (findWords)
	wcache           *wordCache
	sparse           []uint32 // hashed bucket indices, repeats allowed
	dense            [denseWords]uint64
	hits             []int32 // dense indices set, in first-set order
	rule             ruleHit
	mentioned        bool        // a rule's phrasing was passed over as mentioned, not issued (rules.go)
	sentAt           int         // index of the next token that starts a sentence (tokenize)
	lastNeg          int         // index of the last token with a negation, or noToken (tokenize)
	lastSent         int         // index of the last token starting a sentence, or noToken (tokenize)
	run, maxRun      int         // repeats of the last token, and the most (tokenize)
	rotCues, revCues int         // rot13 and reversed attack words seen (tokenize)
	reshapeCues      int         // words asking to read backwards or by first letters (tokenize)
	assemblyCues     int         // words asking for pieces to be joined (tokenize)
	viewFrom         int         // where the views start in norm, or -1 (extract)
	assembly         bool        // the text asks for pieces to be joined and followed (assemblyOrder)
	literal          bool        // the text only assigns quoted strings to names (literalAssignments)
	viewBuf          []byte      // the views, copied (extractViews)
	prefix           []prefixSum // local model (localLogit)
	ldense           []int32     // one token's concept features (local model)
	idx, pack        []int       // scored segments, and a pack's (CheckPolicy)
	uidx             []int       // the scored user segments (CheckPolicy)
	spans            []int       // sentence spans (sentences.go)
	codeBuf          []byte      // decoded runs (decoders.go)
	sentencePass     bool        // scoring sentences alone (sentences.go)
	join             []byte      // a pack's joined text
	mlhits           []mlHit     // multilingual words found (findMultilingual)
	nonASCII         bool        // the text has non-ASCII characters (normalizeText)
	scored           int         // bytes of text scored, over the scratch's life (tests read it)
}

// noToken stands for "no such token" in token indices: far enough below
// any index that distances from it exceed every window.
const noToken = -1 << 40

func (sc *scratch) reset() {
	sc.norm = sc.norm[:0]
	sc.toks = sc.toks[:0]
	sc.tokens = sc.tokens[:0]
	sc.ctoks = sc.ctoks[:0]
	sc.sparse = sc.sparse[:0]
	sc.dense = [denseWords]uint64{}
	sc.hits = sc.hits[:0]
	sc.rule = ruleHit{}
	sc.mentioned = false
	sc.sentAt = 0
	sc.lastNeg, sc.lastSent = noToken, noToken
	sc.run, sc.maxRun = 0, 0
	sc.rotCues, sc.revCues, sc.reshapeCues, sc.assemblyCues = 0, 0, 0, 0
	sc.viewFrom = -1
	sc.assembly, sc.literal = false, false
}

func (sc *scratch) setDense(i int) {
	w, b := i>>6, uint64(1)<<(uint(i)&63)
	if sc.dense[w]&b == 0 {
		sc.dense[w] |= b
		sc.hits = append(sc.hits, int32(i))
	}
}

// mixBucket is the hashed bucket of h: the top bucketBits bits of the
// MurmurHash3 64-bit finaliser of h, without the finaliser's last
// xor-shift, which changes none of those bits (h>>33 has its top 33 bits
// zero).
func mixBucket(h uint64) uint32 {
	h ^= h >> 33
	h *= 0xff51afd7ed558ccd
	h ^= h >> 33
	h *= 0xc4ceb9fe1a85ec53
	return uint32(h >> (64 - bucketBits))
}

// extract computes the features of text into sc (which it resets). The
// normalised text comes first in sc.norm, its views after it (decoded
// runs, escapes, assembled pieces, shifted or reversed copies: see
// views.go); sc.viewFrom is where the views start, or -1.
func extract(sc *scratch, lex *lexicon, text string) {
	sc.reset()
	sc.literal = literalAssignments(text)
	var invisible bool
	var stretch int
	sc.norm, invisible, stretch, sc.nonASCII = normalizeText(sc.norm, text)
	n0 := len(sc.norm)
	var decoded bool
	sc.norm, decoded = appendDecoded(sc.norm, text, stretch)
	var unescaped, assembled bool
	sc.norm, unescaped = appendUnescaped(sc.norm, text)
	sc.norm, assembled = appendAssembled(sc.norm, text)
	var coded bool
	if !sc.sentencePass { // a sentence's window was decoded whole
		sc.norm, sc.codeBuf, coded = appendCoded(sc.norm, text, sc.codeBuf)
	}
	decoded = decoded || unescaped || assembled || coded
	var shifted bool
	sc.norm, shifted = appendShifted(sc.norm, n0)
	if !sc.sentencePass {
		var played bool
		sc.norm, played = appendWordGames(sc.norm, n0, lex)
		var keyed bool
		sc.norm, keyed = appendKeyed(sc.norm, n0, text)
		shifted = shifted || played || keyed
	}
	if len(sc.norm) > n0 {
		sc.viewFrom = n0
	}
	sc.nonASCII = sc.nonASCII || decoded // a decoded view may hold any script
	features(sc, lex, n0, decoded, shifted, invisible)
}

// extractViews computes the features of the views extract found, alone
// (the text they came from left out): an order decoded from a run
// inside a long benign wrapper is read without the wrapper's words
// diluting it. It reports false, leaving sc as it was, when there are
// none.
func extractViews(sc *scratch, lex *lexicon) bool {
	if sc.viewFrom < 0 {
		return false
	}
	sc.viewBuf = append(sc.viewBuf[:0], sc.norm[sc.viewFrom:]...)
	nonASCII := sc.nonASCII
	sc.reset()
	sc.norm = append(sc.norm[:0], sc.viewBuf...)
	sc.nonASCII = nonASCII
	features(sc, lex, len(sc.norm), true, false, false)
	return true
}

// features tokenizes sc.norm (its first n0 bytes the text, the rest its
// views) and sets the dense features and rules.
func features(sc *scratch, lex *lexicon, n0 int, decoded, reshaped, invisible bool) {
	spaced, leet := tokenize(sc, lex, 0)
	transformed := sc.rotCues >= 2 || sc.revCues >= 2
	if transformed {
		// Written in rot13 or backwards: add the decoded copy.
		n1 := len(sc.norm)
		sc.norm = appendTransformed(sc.norm, sc.norm[:n0], sc.rotCues >= 2)
		s2, l2 := tokenize(sc, lex, n1)
		spaced, leet = spaced || s2, leet || l2
	}
	if sc.reshapeCues > 0 {
		// Asked to read backwards or by first letters: add those copies.
		n1 := len(sc.norm)
		var ok bool
		if sc.norm, ok = appendReshaped(sc.norm, n0); ok {
			if sc.viewFrom < 0 {
				sc.viewFrom = n1
			}
			s2, l2 := tokenize(sc, lex, n1)
			spaced, leet = spaced || s2, leet || l2
			reshaped = true
		}
	}
	transformed = transformed || reshaped

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

	// Concept presence and concept pairs, over the tokens that have
	// concepts only, in token order.
	dense := sc.ldense[:0]
	for q := range sc.ctoks {
		dense = conceptFeatures(sc, q, dense[:0])
		for _, d := range dense {
			sc.setDense(int(d))
		}
	}
	sc.ldense = dense
	if sc.maxRun >= 30 {
		sc.setDense(miscFlood)
	}
	if n := len(sc.norm); n >= 200 && len(sc.toks)*5 < n {
		sc.setDense(miscSymbols)
	}

	sc.assembly = sc.assemblyCues > 0 && assemblyOrder(sc)
	findRules(sc)
	if sc.rule.name == "" {
		findMultilingual(sc, lex.cjk)
	}
	if sc.literal && !sc.assembly && sc.rule.name == "" {
		// Strings put in variables and nothing asked of them
		// (a='Ignore all previous'): a piece defined, not an order given.
		// Scored apart like a mention; the turn that asks for the
		// pieces to be joined and followed is read with them (packs).
		sc.mentioned = true
	}
}

// isWordByte says whether an ASCII byte belongs to a word. '@', '$' and
// '|' count so that leetspeak like "p@$$w0rd" stays one token; they are
// trimmed from token edges.
func isWordByte(c byte) bool {
	// Bitmaps of a-z, 0-9, '\'', '@' and '$' over bytes 0-63 and 64-127.
	const lo = 0x3FF<<48 | 1<<39 | 1<<36
	const hi = 0x3FFFFFF<<33 | 1
	return inBitmap(lo, hi, c)
}

// inBitmap says whether bit c is set in the 128-bit set lo (bytes 0-63)
// and hi (bytes 64-127); bytes above 127 are never in it.
func inBitmap(lo, hi uint64, c byte) bool {
	switch {
	case c < 64:
		return lo>>c&1 != 0
	case c < 128:
		return hi>>(c-64)&1 != 0
	}
	return false
}

// Byte classes for tokenize.
const (
	clStop = 1 << iota // ends a sentence or line: . ! ? \n ; :
	clNL               // '\n'
)

var tokClass = func() (t [256]uint8) {
	for _, c := range []byte(".!?\n;:") {
		t[c] |= clStop
	}
	t['\n'] |= clNL
	return t
}()

// wordMask64 returns a bit for each of the 64 bytes of b that is an
// ASCII word byte (isWordByte), and the OR of the bytes. Bytes above 0x7F
// get 0: non-ASCII letters are found by decoding.
func wordMask64(b []byte) (w, or uint64) {
	b = b[:64]
	for g := 0; g < 64; g += 8 {
		c := b[g : g+8 : g+8]
		m := uint64(wordTab[c[0]]) | uint64(wordTab[c[1]])<<1 | uint64(wordTab[c[2]])<<2 | uint64(wordTab[c[3]])<<3 |
			uint64(wordTab[c[4]])<<4 | uint64(wordTab[c[5]])<<5 | uint64(wordTab[c[6]])<<6 | uint64(wordTab[c[7]])<<7
		w |= m << uint(g)
		or |= binary.LittleEndian.Uint64(c)
	}
	return w, or
}

// wordTab is isWordByte as a table.
var wordTab = func() (t [256]uint8) {
	for c := 0; c < 128; c++ {
		if isWordByte(byte(c)) {
			t[c] = 1
		}
	}
	return t
}()

// findWords finds the words of s[from:], where s has 64 bytes to spare
// past len(s) (their content does not matter): runs of ASCII word bytes
// (isWordByte) and of non-ASCII letters and digits. It leaves their
// bounds in sc.edges, start and end of each word in turn, and returns
// the number of words.
//
// The text is classified 64 bytes at a time into a bitmap, whose changes
// between word and non-word bytes are listed by counting trailing zeros:
// no branch per byte or per word. Runes are decoded only in blocks
// holding non-ASCII bytes, in order from the block's first rune, so they
// are split exactly as decoding the text from from would.
func (sc *scratch) findWords(s []byte, from int) int {
	n := len(s)
	s = s[:n+64]
	if max := n - from + 4; cap(sc.edges) < max {
		sc.edges = make([]int32, max+max/4)
	}
	e := sc.edges[:cap(sc.edges)]
	ne := 0
	var prev, carry uint64 // previous block's bitmap; bits a rune spills into this block
	next := from           // where decoding resumes
	for base := from; base < n; base += 64 {
		w, hi := wordMask64(s[base : base+64])
		w |= carry
		carry = 0
		if hi&hiBits != 0 {
			w, carry, next = decodeWords(s[:n], base, max(next, base), w)
		}
		if rem := n - base; rem < 64 {
			w &= 1<<uint(rem) - 1
		}
		for b := w ^ (w<<1 | prev>>63); b != 0; b &= b - 1 {
			e[ne] = int32(base + bits.TrailingZeros64(b))
			ne++
		}
		prev = w
	}
	if ne&1 == 1 { // the text ends in a word
		e[ne] = int32(n)
		ne++
	}
	return ne / 2
}

// decodeWords sets the bits of the non-ASCII letters, digits and marks
// (the vowel signs of Indic scripts and Thai are marks, inside words)
// of the block at base in w, decoding runes from k on; bits past the
// block go to carry. It returns where decoding stopped.
func decodeWords(s []byte, base, k int, w uint64) (_, carry uint64, next int) {
	for end := min(base+64, len(s)); k < end; {
		if s[k] < utf8.RuneSelf {
			k++
			continue
		}
		r, size := utf8.DecodeRune(s[k:])
		if unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsMark(r) {
			for p := k - base; p < k-base+size; p++ {
				if p < 64 {
					w |= 1 << uint(p)
				} else {
					carry |= 1 << uint(p-64)
				}
			}
		}
		k += size
	}
	return w, carry, k
}

// tokenize splits sc.norm[from:] into tokens written to sc.toks, undoing
// leetspeak and letter spacing, and looks up concepts. It reports
// whether spacing or leetspeak was undone.
func tokenize(sc *scratch, lex *lexicon, from int) (spaced, leet bool) {
	first := len(sc.tokens)
	if first == 0 {
		sc.ctoks, sc.sparse = sc.ctoks[:0], sc.sparse[:0]
		sc.lastNeg, sc.lastSent = noToken, noToken
		sc.run, sc.maxRun = 0, 0
	}
	if cap(sc.norm)-len(sc.norm) < 64 {
		sc.norm = slices.Grow(sc.norm, 64)
	}
	s := sc.norm
	nw := sc.findWords(s, from)
	// Room for every word as a token, and its bytes, a space and an
	// 8-byte store: the common words are added without checks.
	sc.tokens = slices.Grow(sc.tokens, nw)
	sc.toks = slices.Grow(sc.toks, len(s)-from+nw+16)
	tz := tokenizer{sc: sc, lex: lex, s: s[:len(s)+64], edges: sc.edges[:2*nw], lastEnd: from}
	for k := 0; k < len(tz.edges); k += 2 {
		k = tz.commonWords(k)
		if k < len(tz.edges) {
			i, j := int(tz.edges[k]), int(tz.edges[k+1])
			gap := i - tz.lastEnd
			tz.word(i, j, gap, gapClass(s, tz.lastEnd, i))
			tz.lastEnd = j
		}
	}
	if tz.np > 0 {
		tz.spaced = sc.flushSingles(tz.lex, s, tz.pending[:tz.np]) || tz.spaced
	}
	if n := len(sc.toks); n > 0 && sc.toks[n-1] == ' ' {
		sc.toks = sc.toks[:n-1]
	}
	sc.finishTokens(lex, first)
	return tz.spaced, tz.leet
}

// tokenizer is tokenize's state.
type tokenizer struct {
	sc           *scratch
	lex          *lexicon
	s            []byte    // sc.norm and 64 bytes to spare
	edges        []int32   // word bounds (findWords)
	lastEnd      int       // end of the last word
	pending      [64]int32 // spaced-letter run being collected: start of each letter
	np           int
	spaced, leet bool
}

// gapClass ORs the classes of the separator bytes s[from:to].
func gapClass(s []byte, from, to int) uint8 {
	var g uint8
	if to > from {
		g = tokClass[s[from]] | tokClass[s[to-1]]
		for p := from + 1; p < to-1; p++ {
			g |= tokClass[s[p]]
		}
	}
	return g
}

// commonWords adds the words from edge k on while they are common: 2 to
// 8 bytes, letters only, no single letters pending. It returns the edge
// of the first word it left. It makes no calls, so that its running
// values stay in registers, and relies on the room tokenize made.
func (tz *tokenizer) commonWords(k int) int {
	if tz.np > 0 {
		return k
	}
	sc, s, edges := tz.sc, tz.s, tz.edges
	lastEnd, sentAt := tz.lastEnd, sc.sentAt
	toks, tn := sc.toks[:cap(sc.toks)], len(sc.toks)
	tokens, nt := sc.tokens[:cap(sc.tokens)], len(sc.tokens)
	for ; k+1 < len(edges); k += 2 {
		i, j := int(edges[k]), int(edges[k+1])
		n := j - i
		x := binary.LittleEndian.Uint64(s[i:])
		// Bytes below 'a' (digits, '@', '$', '\''): leetspeak is possible.
		// (A carry out of a byte above 0x7F changes no word byte's bit.)
		low := ^(x + (0x80-'a')*loBits) &^ x & hiBits
		if n < 2 || n > 8 || low&(1<<(8*uint(n))-1) != 0 {
			break
		}
		// Separator bytes before the word: a sentence end?
		if gap := i - lastEnd; gap > 0 {
			g := tokClass[s[lastEnd]] | tokClass[s[i-1]]
			for p := lastEnd + 1; p < i-1; p++ {
				g |= tokClass[s[p]]
			}
			if g&clStop != 0 {
				sentAt = nt
			}
		}
		lastEnd = j
		b := toks[tn : tn+9]
		store64(b, x)
		b[n] = ' '
		t := &tokens[nt]
		t.start, t.end = int32(tn), int32(tn+n)
		t.sent, t.probe = nt == sentAt, false
		tn += n + 1
		nt++
	}
	sc.toks, sc.tokens, sc.sentAt, tz.lastEnd = toks[:tn], tokens[:nt], sentAt, lastEnd
	return k
}

// word adds the word s[i:j], which gap separator bytes of classes g
// precede.
func (tz *tokenizer) word(i, j, gap int, g uint8) {
	sc, s := tz.sc, tz.s
	// digits, '@', '$' or '\'' (all below 'a'): leetspeak is possible
	digits := hasLow(s[i:j])
	st, en := i, j
	if digits {
		for st < en && (s[st] == '\'' || s[st] == '@' || s[st] == '$') {
			st++
		}
		for en > st && (s[en-1] == '\'' || s[en-1] == '@' || s[en-1] == '$') {
			en--
		}
		if st == en {
			return
		}
	}
	single := en-st == 1 && s[st] >= 'a' && s[st] <= 'z'
	if single && tz.np > 0 && gap <= 2 && g&clNL == 0 && tz.np < len(tz.pending) {
		tz.pending[tz.np] = int32(st)
		tz.np++
		return
	}
	if tz.np > 0 {
		tz.spaced = sc.flushSingles(tz.lex, s, tz.pending[:tz.np]) || tz.spaced
		tz.np = 0
	}
	if g&clStop != 0 {
		sc.sentAt = len(sc.tokens)
	}
	if single {
		tz.pending[0] = int32(st)
		tz.np = 1
		return
	}
	switch {
	case digits && hasLeet(s[st:en]):
		tz.leet = true
		tokStart := len(sc.toks)
		for _, c := range s[st:en] {
			sc.toks = append(sc.toks, unleet(c))
		}
		sc.addToken(tokStart, true)
	case en-st <= 8:
		sc.addShort(binary.LittleEndian.Uint64(s[st:]), en-st)
	default:
		tokStart := len(sc.toks)
		sc.toks = append(sc.toks, s[st:en]...)
		sc.addToken(tokStart, en-st >= 12)
	}
}

// hasLow reports whether a word has an ASCII byte below 'a'.
func hasLow(w []byte) bool {
	for _, c := range w {
		if c < 'a' {
			return true
		}
	}
	return false
}

// flushSingles adds a run of single letters: joined when there are three
// or more ("i g n o r e" -> "ignore", reported as spacing undone), else
// each as a token. A joined run of spacedWords letters or more, which
// spells several words when the spacing between words was the same as
// between letters ("i g n o r e a l l"), is split back into words
// (splitJoined).
func (sc *scratch) flushSingles(lex *lexicon, s []byte, starts []int32) (spaced bool) {
	if len(starts) >= 3 {
		st := len(sc.toks)
		for _, p := range starts {
			sc.toks = append(sc.toks, s[p])
		}
		if len(starts) >= spacedWords && sc.splitJoined(lex, st) {
			return true
		}
		sc.addToken(st, true)
		return true
	}
	for _, p := range starts {
		st := len(sc.toks)
		sc.toks = append(sc.toks, s[p])
		sc.addToken(st, false)
	}
	return false
}

// spacedWords is the shortest run of spaced letters split into words.
const spacedWords = 10

// splitJoined splits the letters at sc.toks[st:] into words: the
// segmentation that leaves the fewest letters outside a known word
// (a lexicon word or a common short word), then the fewest words;
// the letters between known words make one token. It adds the tokens
// and reports true, or adds nothing and reports false when no known
// word was found.
func (sc *scratch) splitJoined(lex *lexicon, st int) bool {
	w := sc.toks[st:]
	n := len(w)
	if n > 256 {
		return false // the cost is n times the longest word; a run that long is not words
	}
	type cell struct{ cost, words, from int }
	var dp [257]cell
	for i := 1; i <= n; i++ {
		dp[i] = cell{dp[i-1].cost + 1, dp[i-1].words + 1, -(i - 1) - 1} // one unknown letter
		for l := 2; l <= min(i, maxSplitWord); l++ {
			if !knownWord(lex, w[i-l:i]) {
				continue
			}
			c := cell{dp[i-l].cost, dp[i-l].words + 1, i - l}
			if c.cost < dp[i].cost || c.cost == dp[i].cost && c.words < dp[i].words {
				dp[i] = c
			}
		}
	}
	// Walk back: known words, and runs of unknown letters merged.
	var cuts [257]int32
	var known [257]bool
	k := 0
	for i := n; i > 0; {
		c := dp[i]
		if c.from >= 0 {
			cuts[k], known[k] = int32(c.from), true
			k++
			i = c.from
			continue
		}
		j := i - 1
		for j > 0 && dp[j].from < 0 {
			j--
		}
		cuts[k], known[k] = int32(j), false
		k++
		i = j
	}
	found := false
	for q := 0; q < k; q++ {
		found = found || known[q]
	}
	if !found {
		return false
	}
	var buf [256]byte
	copy(buf[:], w)
	sc.toks = sc.toks[:st]
	// The cuts were found from the end: the pieces in text order.
	for q := k - 1; q >= 0; q-- {
		end := n
		if q > 0 {
			end = int(cuts[q-1])
		}
		t := len(sc.toks)
		sc.toks = append(sc.toks, buf[cuts[q]:end]...)
		sc.addToken(t, true)
	}
	return true
}

// maxSplitWord is the longest word splitJoined looks for.
const maxSplitWord = 14

// knownWord reports whether w is a lexicon word or a common short word.
func knownWord(lex *lexicon, w []byte) bool {
	h := wordHash(w)
	if lex.lookup(h)&conceptBits != 0 {
		return true
	}
	switch string(w) {
	case "and", "the", "to", "of", "in", "on", "it", "is", "be", "for", "with", "this", "that", "as", "at", "by", "or", "an",
		"do", "my", "are", "was", "were", "been", "told", "given", "word", "tell", "set", "aside", "put", "please", "here", "there":
		return true
	}
	return false
}

// addToken finishes the token written at sc.toks[st:], then a space.
// With probe (the token was joined from spaced letters, undone from
// leetspeak, or is 12 bytes or longer) an unknown token is searched for
// key stems: "ignorepreviousinstructions".
func (sc *scratch) addToken(st int, probe bool) {
	en := len(sc.toks)
	sc.toks = append(sc.toks, ' ')
	sc.newToken(st, en, probe)
}

// addShort adds a token of n (1 to 8) bytes, the low bytes of x, then a
// space, with one store.
func (sc *scratch) addShort(x uint64, n int) {
	st := len(sc.toks)
	if cap(sc.toks)-st < 9 {
		sc.toks = slices.Grow(sc.toks, 9)
	}
	b := sc.toks[st : st+9]
	store64(b, x)
	b[n] = ' '
	sc.toks = sc.toks[:st+n+1]
	sc.newToken(st, st+n, false)
}

// newToken appends the token at sc.toks[st:en]; finishTokens fills in
// its hash and concepts.
func (sc *scratch) newToken(st, en int, probe bool) {
	// Grow then set the fields in place: building the token in a
	// temporary and copying it costs a store-forwarding stall per token.
	n := len(sc.tokens)
	if n == cap(sc.tokens) {
		sc.tokens = append(sc.tokens, token{})
	} else {
		sc.tokens = sc.tokens[:n+1]
	}
	t := &sc.tokens[n]
	t.start, t.end = int32(st), int32(en)
	t.sent, t.probe = n == sc.sentAt, probe
}

// finishTokens completes the tokens from first on: their hashes,
// concepts, negation flags, the index of those with concepts, and their
// hashed unigram and bigram buckets.
//
// It works in passes with few running values, which the compiler keeps
// in registers. The hash, lexicon entry and unigram bucket depend on the
// token's bytes only, so for tokens of up to 8 bytes they are remembered
// in sc.wcache, indexed by the bytes; prose repeats its common words.
// lookupCached completes the runs of tokens found there, in a loop
// without calls; the others go through lookupOne.
func (sc *scratch) finishTokens(lex *lexicon, first int) {
	if cap(sc.toks)-len(sc.toks) < 8 {
		sc.toks = slices.Grow(sc.toks, 8)
	}
	if sc.wcache == nil {
		sc.wcache = new(wordCache)
	}
	n := len(sc.tokens)
	if cap(sc.ctoks) < n {
		sc.ctoks = slices.Grow(sc.ctoks, n-len(sc.ctoks))
	}
	if cap(sc.sparse) < 2*n {
		sc.sparse = slices.Grow(sc.sparse, 2*n-len(sc.sparse))
	}
	sp := sc.sparse[:2*n]
	buf := sc.toks[:len(sc.toks)+8] // tokens of up to 8 bytes are loaded whole
	for i := first; i < n; i++ {
		i = lookupCached(sc.tokens, buf, sc.wcache, sp, i)
		if i < n {
			sc.lookupOne(lex, i, sp)
		}
	}
	sc.sparse = sp
	sc.ctoks = sc.markTokens(sc.ctoks[:n], sp, first)
}

// lookupCached sets the hash and concepts of tokens from i on, and their
// unigram bucket in sp, while they are in wc (and their lexicon entry
// needs no rareConcepts). It returns the index of the first token it
// left.
func lookupCached(tokens []token, buf []byte, wc *wordCache, sp []uint32, i int) int {
	for ; i < len(tokens); i++ {
		t := &tokens[i]
		n := int(t.end - t.start)
		if n > 8 {
			break
		}
		x := binary.LittleEndian.Uint64(buf[int(t.start):])
		if n < 8 {
			x &= 1<<(8*uint(n)) - 1
		}
		e := &wc[x*0x9e3779b97f4a7c15>>(64-wordCacheBits)]
		if e.key != x || e.concepts&cueBits != 0 {
			break
		}
		t.hash, t.concepts, t.ml = e.hash, e.concepts&conceptBits, uint8(e.concepts>>mlShift)
		sp[2*i] = e.uni
	}
	return i
}

// lookupOne is lookupCached for token i, whatever it is: hashed (and
// remembered, for up to 8 bytes), looked up, and rareConcepts applied.
func (sc *scratch) lookupOne(lex *lexicon, i int, sp []uint32) {
	t := &sc.tokens[i]
	st, en := int(t.start), int(t.end)
	var h, m uint64
	var uni uint32
	if en-st <= 8 {
		b := sc.toks[st : st+8 : st+8]
		x := binary.LittleEndian.Uint64(b)
		if en-st < 8 {
			x &= 1<<(8*uint(en-st)) - 1
		}
		e := &sc.wcache[x*0x9e3779b97f4a7c15>>(64-wordCacheBits)]
		if e.key != x {
			e.key = x
			e.hash = hash8(b, en-st)
			e.concepts = lex.lookup(e.hash)
			e.uni = mixBucket(e.hash ^ seedWord)
		}
		h, m, uni = e.hash, e.concepts, e.uni
	} else {
		h = wordHash(sc.toks[st:en])
		m = lex.lookup(h)
		uni = mixBucket(h ^ seedWord)
	}
	ml := uint8(m >> mlShift)
	m &^= mlBits
	if m&cueBits != 0 || m == 0 && t.probe {
		m = sc.rareConcepts(t, m)
	}
	t.hash, t.concepts, t.ml = h, m, ml
	sp[2*i] = uni
}

// markTokens sets the negation flags of the tokens from first on,
// appends those with concepts to ct[:len(sc.ctoks)] (ct has room for all
// the tokens), sets their bigram buckets in sp (sp[2i+1]; the unigram is
// sp[2i]), and carries the count of repeats of the last token and the
// most seen.
func (sc *scratch) markTokens(ct []int32, sp []uint32, first int) []int32 {
	tokens := sc.tokens
	k := len(sc.ctoks)
	ln, ls := sc.lastNeg, sc.lastSent
	run, maxRun := sc.run, sc.maxRun
	prev := uint64(seedWord)
	if first > 0 {
		prev = tokens[first-1].hash
	}
	sp = sp[:2*len(tokens)]
	for i := first; i < len(tokens); i++ {
		t := &tokens[i]
		m, h := t.concepts, t.hash
		t.neg = i-ln <= negWindow
		t.negd = ln >= i-8 && ln >= ls
		if m&(1<<cNeg) != 0 {
			ln = i
		}
		if t.sent {
			ls = i
		}
		ct[k] = int32(i)
		if m != 0 {
			k++
		}
		sp[2*i+1] = mixBucket(prev*31 + h ^ seedBigram)
		r := run + 1
		if i == 0 || h != prev {
			r = 0
		}
		run = r
		maxRun = max(maxRun, run)
		prev = h
	}
	sc.lastNeg, sc.lastSent = ln, ls
	sc.run, sc.maxRun = run, maxRun
	return ct[:k]
}

// hash8 is wordHash of b[:n] (n from 1 to 8; b has 8 bytes): eight steps
// whatever n, keeping every step's value, and the one at n taken.
func hash8(b []byte, n int) uint64 {
	const p = 1099511628211
	var hs [8]uint64
	b = b[:8]
	h := (14695981039346656037 ^ uint64(b[0])) * p
	hs[0] = h
	h = (h ^ uint64(b[1])) * p
	hs[1] = h
	h = (h ^ uint64(b[2])) * p
	hs[2] = h
	h = (h ^ uint64(b[3])) * p
	hs[3] = h
	h = (h ^ uint64(b[4])) * p
	hs[4] = h
	h = (h ^ uint64(b[5])) * p
	hs[5] = h
	h = (h ^ uint64(b[6])) * p
	hs[6] = h
	hs[7] = (h ^ uint64(b[7])) * p
	return hs[(n-1)&7]
}

// wordCache remembers the hash, lexicon entry and unigram bucket of
// tokens of up to 8 bytes, by their bytes (a token has no zero byte, so
// the key 0 of an empty entry matches none).
type wordCache [1 << wordCacheBits]struct {
	key, hash, concepts uint64
	uni                 uint32
}

const wordCacheBits = 10

// rareConcepts handles a lexicon result m with rot13 or reversed cue
// bits, or none for a token to probe: it counts the cues and returns
// the concepts, searching the key stems in an unknown probed token.
func (sc *scratch) rareConcepts(t *token, m uint64) uint64 {
	if m&cueBits != 0 {
		switch {
		case m&cueRot13 != 0:
			sc.rotCues++
		case m&cueReversed != 0:
			sc.revCues++
		}
		if m&cueReshape != 0 {
			sc.reshapeCues++
		}
		if m&cueAssembly != 0 {
			sc.assemblyCues++
		}
		m &^= cueBits
	}
	if m == 0 && t.probe && t.end-t.start >= 9 {
		m = stemConcepts(sc.toks[t.start:t.end])
	}
	return m
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
