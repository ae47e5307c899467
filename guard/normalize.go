package guard

import (
	"encoding/base64"
	"encoding/hex"
	"math/bits"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
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
// returns it lowercased. It returns -1 for runes that carry nothing
// (zero-width and formatting characters, variation selectors).
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
	case r >= 0xE0020 && r <= 0xE007E: // tag characters smuggle ASCII
		return foldRune(r - 0xE0000)
	case r >= 0xE0000 && r <= 0xE007F:
		return -1
	case r >= 0xC0 && r <= 0x17F:
		if c := latin1Fold[r-0xC0]; c != '.' {
			return rune(c)
		}
	case r >= 0xFF01 && r <= 0xFF5E: // fullwidth ASCII
		return foldRune(r - 0xFEE0)
	case r >= 0x1D400 && r <= 0x1D6A3: // mathematical alphanumeric letters
		k := (r - 0x1D400) % 52
		if k < 26 {
			return 'a' + k
		}
		return 'a' + k - 26
	case r >= 0x1D7CE && r <= 0x1D7FF: // mathematical digits
		return '0' + (r-0x1D7CE)%10
	case r >= 0x24B6 && r <= 0x24CF: // circled capitals
		return 'a' + r - 0x24B6
	case r >= 0x24D0 && r <= 0x24E9:
		return 'a' + r - 0x24D0
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
	if c, ok := confusable(r); ok {
		return c
	}
	return unicode.ToLower(r)
}

// confusable maps Cyrillic and Greek letters that look like Latin ones.
func confusable(r rune) (rune, bool) {
	switch r {
	case 'а', 'А', 'α', 'Α':
		return 'a', true
	case 'в', 'В', 'β', 'Β':
		return 'b', true
	case 'с', 'С', 'ϲ':
		return 'c', true
	case 'ԁ':
		return 'd', true
	case 'е', 'Е', 'ε', 'Ε', 'ё', 'Ё':
		return 'e', true
	case 'һ', 'Н', 'н', 'Η':
		return 'h', true
	case 'і', 'І', 'ι', 'Ι', 'ї', 'ӏ':
		return 'i', true
	case 'ј', 'Ј':
		return 'j', true
	case 'к', 'К', 'κ', 'Κ':
		return 'k', true
	case 'м', 'М', 'Μ':
		return 'm', true
	case 'ν', 'Ν':
		return 'n', true
	case 'о', 'О', 'ο', 'Ο', 'σ':
		return 'o', true
	case 'р', 'Р', 'ρ', 'Ρ':
		return 'p', true
	case 'ѕ', 'Ѕ':
		return 's', true
	case 'т', 'Т', 'τ', 'Τ':
		return 't', true
	case 'υ', 'Υ':
		return 'u', true
	case 'х', 'Х', 'χ', 'Χ':
		return 'x', true
	case 'у', 'У', 'γ':
		return 'y', true
	case 'ζ', 'Ζ':
		return 'z', true
	}
	return 0, false
}

// normalize appends the folded form of s to dst: lowercase, confusables
// and compatibility forms mapped to ASCII, invisible characters dropped,
// whitespace runs collapsed to one space (newlines kept as '\n').
func normalize(dst []byte, s string) []byte {
	dst, _, _ = normalizeText(dst, s)
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
func normalizeText(dst []byte, s string) (_ []byte, invisible bool, stretch int) {
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
	return out[:n], st.invisible, st.stretch
}

// normState is normalizeText's state between bytes.
type normState struct {
	start, stretch       int // of the current and first long stretch without a space
	prevSpace, invisible bool
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
			r = foldRune(r)
			if r < 0 {
				st.invisible = true
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

// maxDecoded bounds how much decoded text one scan adds; minB64Run is
// the shortest base64 or hex run worth decoding.
const (
	maxDecoded = 4096
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
		dst, found, added = decodeRuns(dst, raw[:en], st, found, added)
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
func decodeRuns(dst []byte, raw string, i int, found bool, added int) ([]byte, bool, int) {
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
		if len(run) < minB64Run {
			continue
		}
		var dec []byte
		if isHexRun(run) {
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
			if d, err := enc.DecodeString(trim); err == nil {
				dec = d
			}
		}
		if len(dec) == 0 || !readable(dec) {
			continue
		}
		if len(dec) > maxDecoded-added {
			dec = dec[:maxDecoded-added]
		}
		added += len(dec)
		dst = append(dst, '\n')
		dst = normalize(dst, string(dec))
		found = true
	}
	return dst, found, added
}

func isB64(c byte) bool {
	// Bitmaps of A-Z a-z 0-9 + / = - _ over bytes 0-63 and 64-127.
	const lo = 0x3FF<<48 | 1<<'+' | 1<<'/' | 1<<'=' | 1<<'-'
	const hi = 0x3FFFFFF<<1 | 0x3FFFFFF<<33 | 1<<('_'-64)
	return inBitmap(lo, hi, c)
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
