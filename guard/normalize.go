package guard

import (
	"encoding/base32"
	"encoding/base64"
	"encoding/hex"
	"html"
	"math/bits"
	"slices"
	"strings"
	"sync/atomic"
	"unicode"
	"unicode/utf8"
	"unsafe"
)

// latin1Fold maps U+00C0..U+017F (Latin-1 Supplement letters and Latin
// Extended-A) to their base ASCII letter; '.' means "keep the rune".
const latin1Fold = "" +
	"aaaaaaaceeeeiiii" + // C0..CF
	"dnooooo.ouuuuyts" + // D0..DF
	"aaaaaaaceeeeiiii" + // E0..EF
	"dnooooo.ouuuuyty" + // F0..FF
	"aaaaaaccccccccdd" + // 100..10F
	"ddeeeeeeeeeegggg" + // 110..11F
	"gggghhhhiiiiiiii" + // 120..12F
	"iijjjjkkklllllll" + // 130..13F
	"lllnnnnnnnnnoooo" + // 140..14F
	"oooorrrrrrssssss" + // 150..15F
	"ssttttttuuuuuuuu" + // 160..16F
	"uuuuwwyyyzzzzzzs" //   170..17F

// foldRune maps a rune to the ASCII letter or digit it imitates, or
// returns it lowercased. It returns -1 for runes that carry nothing and
// hide text (zero-width and formatting characters, variation selectors,
// tag characters outside ASCII), and -2 for the combining diacritical
// marks, dropped without notice ("i\u0301gnore" is "ignore"; the vowel
// signs of Indic scripts and Thai are not in those blocks and stay).
//
// The look-alikes (foldtable.go, generated from Unicode's confusables
// and compatibility decompositions) cover Latin letters with
// diacritics, fullwidth, mathematical, enclosed, small-capital,
// superscript and subscript forms, and the Greek, Cyrillic, Armenian and
// Cherokee letters that imitate Latin ones.
func foldRune(r rune) rune {
	if r < 0x80 {
		if r >= 'A' && r <= 'Z' {
			return r + 32
		}
		return r
	}
	switch {
	case r == 0xAD || r == 0x34F || r == 0x180E || r == 0x61C,
		r >= 0x200B && r <= 0x200F,
		r >= 0x202A && r <= 0x202E,
		r >= 0x2060 && r <= 0x206F,
		r >= 0xFE00 && r <= 0xFE0F,
		r == 0xFEFF,
		r >= 0xE0100 && r <= 0xE01EF:
		return -1
	case r >= 0x300 && r <= 0x36F, r >= 0x1AB0 && r <= 0x1AFF, r >= 0x1DC0 && r <= 0x1DFF,
		r >= 0x20D0 && r <= 0x20FF, r >= 0xFE20 && r <= 0xFE2F:
		return -2
	case r >= 0xE0020 && r <= 0xE007E: // tag characters smuggle ASCII
		return foldRune(r - 0xE0000)
	case r >= 0xE0000 && r <= 0xE007F:
		return -1
	case r >= 0x249C && r <= 0x24B5: // parenthesized
		return 'a' + r - 0x249C
	case r >= 0x1F130 && r <= 0x1F149: // squared
		return 'a' + r - 0x1F130
	case r >= 0x1F150 && r <= 0x1F169: // negative circled
		return 'a' + r - 0x1F150
	case r >= 0x1F170 && r <= 0x1F189: // negative squared
		return 'a' + r - 0x1F170
	case r >= 0x1F1E6 && r <= 0x1F1FF: // regional indicators
		return 'a' + r - 0x1F1E6
	case r >= 0x2018 && r <= 0x201F, r == 0x2032 || r == 0x2033 || r == 0xB4 || r == 0x60:
		return '\''
	case r >= 0x2010 && r <= 0x2015, r == 0x2212:
		return '-'
	case r == 0x3000 || r == 0xA0 || r >= 0x2000 && r <= 0x200A || r == 0x202F || r == 0x205F:
		return ' '
	}
	if r < 0x20000 {
		if p := foldIndex[r>>8]; p != 0 {
			if c := foldPages[int(p-1)<<8|int(r&0xFF)]; c != 0 {
				return rune(c)
			}
		}
	}
	if r >= 0xC0 && r <= 0x17F {
		if c := latin1Fold[r-0xC0]; c != '.' {
			return rune(c)
		}
	}
	r = unicode.ToLower(r)
	switch r {
	// Greek and Cyrillic lower-case letters that stand in for Latin
	// ones in mixed-script text but are not in the confusables' table
	// (which maps only what looks the same in most fonts).
	case 'β':
		return 'b'
	case 'ε', 'ϵ':
		return 'e'
	case 'κ', 'к':
		return 'k'
	case 'χ':
		return 'x'
	case 'ω', 'ш':
		return 'w'
	case 'м':
		return 'm'
	case 'т':
		return 't'
	case 'п':
		return 'n'
	}
	return r
}

// normalize appends the folded form of s to dst: lowercase, confusables
// and compatibility forms mapped to ASCII, invisible characters dropped,
// whitespace runs collapsed to one space (newlines kept as '\n').
func normalize(dst []byte, s string) []byte {
	dst, _, _, _ = normalizeText(dst, s)
	return dst
}

// normalizeText is normalize that also reports whether invisible
// characters (zero-width, bidi, tags) were dropped, and where the first
// stretch of s of at least minB64Run bytes without a space starts (-1
// if none), for appendDecoded.
//
// Printable ASCII, the bulk of most prompts, goes eight bytes at a time:
// eight bytes with no control byte, no byte above 0x7F and no space
// following a space are lowercased together and stored whole. The rest
// takes normalizeSlow, byte by byte.
func normalizeText(dst []byte, s string) (_ []byte, invisible bool, stretch int, nonASCII bool) {
	if cap(dst)-len(dst) < len(s) {
		dst = slices.Grow(dst, len(s))
	}
	// Invariant: cap(out)-n >= len(s)-i, so the eight-byte path (which
	// writes no more than it reads) never runs out of room.
	out, n := dst[:cap(dst)], len(dst)
	st := normState{stretch: -1, prevSpace: true}
	for i := 0; i < len(s); {
		if i+8 <= len(s) {
			x := load64(s, i)
			if x&hiBits == 0 && (x-0x20*loBits)&^x&hiBits == 0 {
				sp := spaceBytes(x)
				if sp&(sp<<8) == 0 && !(st.prevSpace && sp&0x80 != 0) {
					if st.stretch < 0 {
						// The stretch runs to the first space of these
						// eight bytes, or past them if there is none.
						if i+bits.TrailingZeros64(sp)>>3-st.start >= minB64Run {
							st.stretch = st.start
						}
						// After the last space (without a branch: chunks
						// without one are common and irregular).
						next := i + 8 - bits.LeadingZeros64(sp)>>3
						if sp == 0 {
							next = st.start
						}
						st.start = next
					}
					up := (x + 0x3f*loBits) &^ (x + 0x25*loBits) & hiBits // 'A'..'Z'
					store64(out[n:n+8], x|up>>2)
					n += 8
					i += 8
					st.prevSpace = sp>>63 != 0
					continue
				}
			}
		}
		var d []byte
		d, i, st = normalizeSlow(out[:n], s, i, st)
		out, n = d[:cap(d)], len(d)
	}
	return out[:n], st.invisible, st.stretch, st.nonASCII
}

// normState is normalizeText's state between bytes.
type normState struct {
	start, stretch                 int // of the current and first long stretch without a space
	prevSpace, invisible, nonASCII bool
}

// normalizeSlow is normalizeText byte by byte, from s[i] up to the next
// eight-byte boundary from there. It returns d with room for the rest
// of s, and where it stopped.
func normalizeSlow(d []byte, s string, i int, st normState) ([]byte, int, normState) {
	for stop := min(i+8, len(s)); i < stop; {
		c := s[i]
		var r rune
		if c < utf8.RuneSelf {
			r = rune(c)
			i++
			if r >= 'A' && r <= 'Z' {
				r += 32
			}
		} else {
			var w int
			r, w = utf8.DecodeRuneInString(s[i:])
			i += w
		}
		if c == ' ' {
			st.start = i
		} else if st.stretch < 0 && i-st.start >= minB64Run {
			st.stretch = st.start
		}
		if c >= utf8.RuneSelf {
			st.nonASCII = true
			r = foldRune(r)
			if r < 0 {
				st.invisible = st.invisible || r == -1
				continue
			}
		}
		switch r {
		case ' ', '\t', '\r', '\v', '\f':
			if !st.prevSpace {
				d = append(d, ' ')
				st.prevSpace = true
			}
			continue
		case '\n':
			if k := len(d); k > 0 && d[k-1] == ' ' {
				d = d[:k-1]
			}
			if k := len(d); k == 0 || d[k-1] != '\n' {
				d = append(d, '\n')
			}
			st.prevSpace = true
			continue
		}
		st.prevSpace = false
		if r < utf8.RuneSelf {
			d = append(d, byte(r))
		} else {
			d = utf8.AppendRune(d, r)
		}
	}
	if cap(d)-len(d) < len(s)-i {
		d = slices.Grow(d, len(s)-i)
	}
	return d, i, st
}

// Byte-parallel constants: 0x01 and 0x80 in every byte of a word.
const (
	loBits = 0x0101010101010101
	hiBits = 0x8080808080808080
)

// load64 reads s[i:i+8] as a little-endian word (the compiler turns
// this into one load).
func load64(s string, i int) uint64 {
	s = s[i : i+8]
	return uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
}

func store64(b []byte, x uint64) {
	_ = b[7]
	b[0], b[1], b[2], b[3] = byte(x), byte(x>>8), byte(x>>16), byte(x>>24)
	b[4], b[5], b[6], b[7] = byte(x>>32), byte(x>>40), byte(x>>48), byte(x>>56)
}

// spaceBytes returns 0x80 in each byte of x that is a space, and 0
// elsewhere; exact, with no carries between bytes.
func spaceBytes(x uint64) uint64 {
	e := x ^ 0x20*loBits
	return ^((e&^hiBits + 0x7f*loBits) | e) & hiBits
}

// maxDecoded bounds how much decoded text one scan adds (decoded text is
// shorter than its encoding, so a window's worth is all of it); minB64Run
// is the shortest base64, base32 or hex run worth decoding.
const (
	maxDecoded = windowSize
	minB64Run  = 16
)

// appendDecoded looks in raw for base64 and hex runs that decode to
// readable text and appends that text, after a newline, to dst. It
// returns dst and whether anything was decoded. from is where the first
// stretch without a space starts (normalizeText found it), or -1.
//
// A run of minB64Run base64 bytes has no space, so only the stretches of
// at least that many bytes without one are searched (decodeRuns), in
// order; they are found eight bytes at a time.
func appendDecoded(dst []byte, raw string, from int) ([]byte, bool) {
	found := false
	added := 0
	if from < 0 {
		return dst, false
	}
	for i := from; i < len(raw) && added < maxDecoded; {
		st := nextStretch(raw, i)
		if st < 0 {
			break
		}
		en := len(raw)
		if k := strings.IndexByte(raw[st+minB64Run:], ' '); k >= 0 {
			en = st + minB64Run + k
		}
		dst, found, added = decodeRuns(dst, raw[:en], st, found, added, 1)
		i = en
	}
	return dst, found
}

// nextStretch returns the start of the first stretch of raw[i:] of at
// least minB64Run bytes without a space (i or just after a space), or -1.
func nextStretch(raw string, i int) int {
	start := i // of the current stretch
	q := i
	for ; q+8 <= len(raw); q += 8 {
		sp := spaceBytes(load64(raw, q))
		// The stretch runs to the first space of these eight bytes, or
		// past them if there is none.
		if q+bits.TrailingZeros64(sp)>>3-start >= minB64Run {
			return start
		}
		if sp != 0 {
			start = q + 8 - bits.LeadingZeros64(sp)>>3
		}
	}
	for ; q < len(raw); q++ {
		if raw[q] == ' ' {
			start = q + 1
		} else if q+1-start >= minB64Run {
			return start
		}
	}
	return -1
}

// decodeRuns decodes the base64 and hex runs of raw from i on (i is 0 or
// follows a byte that is not base64), as appendDecoded describes, and
// returns dst, found and added updated.
func decodeRuns(dst []byte, raw string, i int, found bool, added, depth int) ([]byte, bool, int) {
	var scratch [256]byte
	for i < len(raw) && added < maxDecoded {
		// A run of minB64Run base64 bytes starting anywhere in
		// raw[i:p+1] covers p, so when raw[p] is not base64 the whole
		// stretch is skipped; prose is mostly short words, so this looks
		// at a fraction of the bytes.
		p := i + minB64Run - 1
		if p >= len(raw) {
			break
		}
		if !isB64(raw[p]) {
			i = p + 1
			continue
		}
		st := p
		for st > i && isB64(raw[st-1]) {
			st--
		}
		j := p + 1
		for j < len(raw) && isB64(raw[j]) {
			j++
		}
		run := raw[st:j]
		i = j
		if k := strings.LastIndexByte(strings.TrimRight(run, "="), '='); k >= 0 {
			run = run[k+1:] // key=value: the value
		}
		if len(run) < minB64Run {
			continue
		}
		var dec []byte
		if isBase32Run(run) {
			trim := strings.TrimRight(run, "=")
			if d, err := base32.StdEncoding.WithPadding(base32.NoPadding).DecodeString(trim[:len(trim)/8*8+b32Tail(len(trim)%8)]); err == nil && readable(d) {
				dec = d
			}
		}
		if dec != nil {
		} else if isHexRun(run) {
			if len(run)%2 == 1 {
				run = run[:len(run)-1]
			}
			d, err := hex.DecodeString(run)
			if err == nil {
				dec = d
			}
		} else {
			trim := strings.TrimRight(run, "=")
			if len(trim)%4 == 1 {
				trim = trim[:len(trim)-1]
			}
			enc := base64.RawStdEncoding
			if strings.ContainsAny(trim, "-_") {
				enc = base64.RawURLEncoding
			}
			// Decoded into the stack when short (DecodeString's
			// bytes, without its allocation: the views copy what
			// they keep).
			d := scratch[:]
			if n := enc.DecodedLen(len(trim)); n > len(scratch) {
				d = make([]byte, n)
			}
			if n, err := enc.Decode(d, unsafe.Slice(unsafe.StringData(trim), len(trim))); err == nil {
				dec = d[:n]
			}
		}
		if len(dec) == 0 {
			continue
		}
		if len(dec) > maxDecoded-added {
			dec = dec[:maxDecoded-added]
		}
		if !readable(dec) {
			// A view of a view: base64 inside base64, base64 inside hex,
			// %-escapes inside base64. Decoded text is shorter than its
			// encoding, so each level reads fewer bytes than the one
			// before, and the levels share maxDecoded.
			if depth < maxViewDepth && printable(dec) {
				var f bool
				dst, f, added = nestedViews(dst, string(dec), depth+1, added)
				found = found || f
			}
			continue
		}
		added += len(dec)
		dst = append(dst, '\n')
		dst = normalize(dst, string(dec))
		found = true
		if depth < maxViewDepth && len(dec) >= minB64Run {
			// readable text may still carry an encoded run or escapes
			var f bool
			dst, f, added = nestedViews(dst, string(dec), depth+1, added)
			found = found || f
		}
	}
	return dst, found, added
}

// maxViewDepth bounds how many encodings deep the decoded views go: a
// run of the text is level 1, a run inside its decoded text level 2,
// and so on. Each level is at most as long as the one it came from
// (base64 decodes to 3/4 of its bytes, hex and base32 to less, escapes
// to at most as many), and all levels together add at most maxDecoded
// bytes, so the work stays within a constant per byte of the text.
const maxViewDepth = 4

// nestedViews appends the views of a decoded text raw at the given
// depth: its own base64, base32 and hex runs and its %-escapes, each in
// turn followed down to maxViewDepth.
func nestedViews(dst []byte, raw string, depth, added int) ([]byte, bool, int) {
	found := false
	if st := nextStretch(raw, 0); st >= 0 {
		var f bool
		dst, f, added = decodeRunsFrom(dst, raw, st, depth, added)
		found = found || f
	}
	if !strings.Contains(raw, " ") && strings.Count(raw, "+") >= minEscapes {
		// a form-encoded text: '+' for spaces
		if d := strings.ReplaceAll(raw, "+", " "); readable([]byte(d)) && added < maxDecoded {
			d = d[:min(len(d), maxDecoded-added)]
			added += len(d)
			dst = append(dst, '\n')
			dst = normalize(dst, d)
			found = true
			raw = d
		}
	}
	if added < maxDecoded && strings.Count(raw, "%") >= minEscapes {
		mark := len(dst)
		var f bool
		dst, f = appendUnescaped(dst, raw)
		if f {
			dec := string(dst[mark:])
			added += len(dec)
			found = true
			if depth < maxViewDepth {
				dst, f, added = nestedViews(dst, dec, depth+1, added)
				found = found || f
			}
		}
	}
	return dst, found, added
}

// decodeRunsFrom is decodeRuns over the stretches of raw without a
// space from st on, as appendDecoded does for the text itself.
func decodeRunsFrom(dst []byte, raw string, st, depth, added int) ([]byte, bool, int) {
	found := false
	for i := st; i < len(raw) && added < maxDecoded; {
		st := nextStretch(raw, i)
		if st < 0 {
			break
		}
		en := len(raw)
		if k := strings.IndexByte(raw[st+minB64Run:], ' '); k >= 0 {
			en = st + minB64Run + k
		}
		var f bool
		dst, f, added = decodeRuns(dst, raw[:en], st, found, added, depth)
		found = found || f
		i = en
	}
	return dst, found, added
}

// printable reports whether b is valid UTF-8 without control bytes
// other than line breaks and tabs: text that may be another encoding.
func printable(b []byte) bool {
	if !utf8.Valid(b) {
		return false
	}
	for _, c := range b {
		if c < 0x20 && c != '\n' && c != '\t' && c != '\r' || c == 0x7F {
			return false
		}
	}
	return true
}

func isB64(c byte) bool {
	// Bitmaps of A-Z a-z 0-9 + / = - _ over bytes 0-63 and 64-127.
	const lo = 0x3FF<<48 | 1<<'+' | 1<<'/' | 1<<'=' | 1<<'-'
	const hi = 0x3FFFFFF<<1 | 0x3FFFFFF<<33 | 1<<('_'-64)
	return inBitmap(lo, hi, c)
}

// isBase32Run reports whether s is made of base32's alphabet (upper-case
// letters and 2-7, then padding).
func isBase32Run(s string) bool {
	s = strings.TrimRight(s, "=")
	for i := 0; i < len(s); i++ {
		if c := s[i]; !(c >= 'A' && c <= 'Z' || c >= '2' && c <= '7') {
			return false
		}
	}
	return len(s) >= minB64Run
}

// b32Tail is how many of a base32 run's last n (mod 8) characters form
// whole bytes: 2, 4, 5 and 7 do; the others lose their last one.
func b32Tail(n int) int {
	switch n {
	case 1, 3, 6:
		return n - 1
	}
	return n
}

func isHexRun(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
			return false
		}
	}
	return true
}

// readable reports whether b looks like natural-language text: valid
// UTF-8, mostly printable, with letters and spaces.
func readable(b []byte) bool {
	if !utf8.Valid(b) {
		return false
	}
	letters, spaces, bad := 0, 0, 0
	for _, c := range b {
		switch {
		case c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z':
			letters++
		case c == ' ':
			spaces++
		case c < 0x20 && c != '\n' && c != '\t' && c != '\r':
			bad++
		}
	}
	return bad == 0 && letters*10 >= len(b)*6 && spaces > 0
}

// Rot13 and reversed text are spotted by a few attack words in their
// transformed spelling, which the lexicon tags with cue bits.
func transformCues() (rot13, reversed []string) {
	// rot13 and reversal of ignore, instruction(s), password, prompt,
	// system, previous, secret, reveal, rules
	return []string{"vtaber", "vafgehpgvba", "vafgehpgvbaf", "cnffjbeq", "cebzcg", "flfgrz", "cerivbhf", "frperg", "erirny", "ehyrf"},
		[]string{"erongi", "noitcurtsni", "snoitcurtsni", "drowssap", "tpmorp", "metsys", "suoiverp", "terces", "laever", "selur"}
}

// appendTransformed appends the rot13 (rot) or reversed copy of norm.
func appendTransformed(dst []byte, norm []byte, rot bool) []byte {
	if rot {
		dst = append(dst, '\n')
		for _, c := range norm {
			switch {
			case c >= 'a' && c <= 'm':
				c += 13
			case c >= 'n' && c <= 'z':
				c -= 13
			}
			dst = append(dst, c)
		}
		return dst
	}
	dst = append(dst, '\n')
	for i := len(norm) - 1; i >= 0; i-- {
		c := norm[i]
		if c >= 0x80 {
			c = ' '
		}
		dst = append(dst, c)
	}
	return dst
}

// appendUnescaped appends, after a newline, the text of raw with its
// %-escapes ("%49%67...") or HTML character references ("&#73;&#x67;",
// "&lt;") decoded, when raw holds at least minEscapes of them, and
// reports whether it did. A count of '%' and '&' bytes (a fast scan)
// decides whether to look at all.
func appendUnescaped(dst []byte, raw string) ([]byte, bool) {
	found := false
	if n := strings.Count(raw, "%"); n >= minEscapes && percentEscapes(raw) >= minEscapes {
		mark := len(dst)
		dst = append(dst, '\n')
		start := len(dst)
		for i := 0; i < len(raw); i++ {
			if raw[i] == '%' && i+2 < len(raw) && isHex(raw[i+1]) && isHex(raw[i+2]) {
				dst = append(dst, unhex(raw[i+1])<<4|unhex(raw[i+2]))
				i += 2
				continue
			}
			dst = append(dst, raw[i])
		}
		// Normalise the decoded bytes in place of themselves: copied out
		// first (decoded text is never longer than raw, which bounds it).
		dec := string(dst[start:])
		dst = dst[:mark]
		if utf8.ValidString(dec) {
			dst = append(dst, '\n')
			dst = normalize(dst, dec)
			found = true
		}
	}
	if (strings.Count(raw, "&#") >= minEscapes || strings.Count(raw, "&") >= minEscapes && strings.Count(raw, ";") >= minEscapes) && htmlReferences(raw) {
		if u := html.UnescapeString(raw); len(u) < len(raw) {
			dst = append(dst, '\n')
			dst = normalize(dst, u)
			found = true
		}
	}
	return dst, found
}

// htmlReferences reports whether html.UnescapeString may change raw:
// false only when no '&' of raw starts a character reference, so that
// code full of "&&" and "&x" (which pass appendUnescaped's counts) is
// not copied and scanned whole for nothing. Each '&' is decided alone:
// the unescaper reads a reference from its '&' on and consumes no '&',
// so a reference's bytes are the '&', its run of letters and digits and
// an optional ';'. Those bytes alone are unescaped and compared; a '&#'
// (a numeric reference, whose reading depends on the bytes after it)
// or a run longer than maxReferenceRun answers true without looking.
func htmlReferences(raw string) bool {
	for i := strings.IndexByte(raw, '&'); i >= 0; {
		j := i + 1
		if j < len(raw) && raw[j] == '#' {
			return true
		}
		for j < len(raw) && isAlnum(raw[j]) {
			j++
		}
		if j-i-1 > maxReferenceRun {
			return true
		}
		if j < len(raw) && raw[j] == ';' {
			j++
		}
		if j-i > 1 && isReference(raw[i:j]) {
			return true
		}
		k := strings.IndexByte(raw[j:], '&')
		if k < 0 {
			break
		}
		i = j + k
	}
	return false
}

// isReference reports whether the unescaper changes ref, a '&' and the
// letters and digits after it (and a ';'). The answers are kept in a
// small table shared by all goroutines, so that the few names code
// repeats ("&it", "&buf") are unescaped once, not a copy a time.
func isReference(ref string) bool {
	h := uint32(2166136261)
	for i := 0; i < len(ref); i++ {
		h = (h ^ uint32(ref[i])) * 16777619
	}
	slot := &referenceMemo[h%uint32(len(referenceMemo))]
	if e := slot.Load(); e != nil && e.ref == ref {
		return e.changes
	}
	e := &referenceAnswer{ref: ref, changes: html.UnescapeString(ref) != ref}
	e.ref = strings.Clone(ref) // not the window's text, which the caller reuses
	slot.Store(e)
	return e.changes
}

type referenceAnswer struct {
	ref     string
	changes bool
}

var referenceMemo [256]atomic.Pointer[referenceAnswer]

// maxReferenceRun bounds the letters and digits after a '&' that
// htmlReferences unescapes alone (the longest named reference is 32).
const maxReferenceRun = 40

// percentEscapes counts the %XX escapes of raw.
func percentEscapes(raw string) int {
	n := 0
	for i := strings.IndexByte(raw, '%'); i >= 0 && i+2 < len(raw); {
		if isHex(raw[i+1]) && isHex(raw[i+2]) {
			n++
		}
		j := strings.IndexByte(raw[i+1:], '%')
		if j < 0 {
			break
		}
		i += 1 + j
	}
	return n
}

// minEscapes is how many escapes make a text worth decoding.
const minEscapes = 4

func isHex(c byte) bool { return c >= '0' && c <= '9' || c|0x20 >= 'a' && c|0x20 <= 'f' }

func unhex(c byte) byte {
	if c <= '9' {
		return c - '0'
	}
	return c | 0x20 - 'a' + 10
}

// appendAssembled appends, after a newline, the string a text builds from
// its own pieces: string literals assigned to names ("a='Ignore all'",
// b = "previous") and an expression joining the names with '+'
// ("execute a+b+c"), in the expression's order. It reports whether it
// did. Texts without both a quote after '=' and a '+' are not looked at.
func appendAssembled(dst []byte, raw string) ([]byte, bool) {
	if !strings.Contains(raw, "+") || !strings.Contains(raw, "=") {
		return dst, false
	}
	// name -> literal, for up to 32 names
	var names, vals [32]string
	nv := 0
	for i := 0; i < len(raw) && nv < len(names); i++ {
		if raw[i] != '=' {
			continue
		}
		// the name before '=' (spaces allowed)
		e := i
		for e > 0 && raw[e-1] == ' ' {
			e--
		}
		st := e
		for st > 0 && isIdent(raw[st-1]) {
			st--
		}
		// the quoted literal after it
		q := i + 1
		for q < len(raw) && raw[q] == ' ' {
			q++
		}
		if st == e || q >= len(raw) || (raw[q] != '\'' && raw[q] != '"' && raw[q] != '`') {
			continue
		}
		end := strings.IndexByte(raw[q+1:], raw[q])
		if end < 0 {
			continue
		}
		names[nv], vals[nv] = raw[st:e], raw[q+1:q+1+end]
		nv++
		i = q + 1 + end
	}
	if nv < 2 {
		return dst, false
	}
	lookup := func(n string) (string, bool) {
		for k := nv - 1; k >= 0; k-- {
			if names[k] == n {
				return vals[k], true
			}
		}
		return "", false
	}
	found := false
	for i := 0; i < len(raw); i++ {
		if raw[i] != '+' {
			continue
		}
		// the expression around this '+': name (+ name)*
		st := i
		for st > 0 && (isIdent(raw[st-1]) || raw[st-1] == ' ') {
			st--
		}
		en := i
		for en < len(raw) && (isIdent(raw[en]) || raw[en] == ' ' || raw[en] == '+') {
			en++
		}
		parts := strings.Split(raw[st:en], "+")
		var out []string
		for _, p := range parts {
			if v, ok := lookup(strings.TrimSpace(p)); ok {
				out = append(out, v)
			}
		}
		if len(out) >= 2 {
			dst = append(dst, '\n')
			dst = normalize(dst, strings.Join(out, " "))
			found = true
		}
		i = en
	}
	return dst, found
}

func isIdent(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_'
}
