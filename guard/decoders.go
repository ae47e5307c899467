package guard

import (
	"strings"
)

// More encodings the attacker asks the model to decode, each a view
// appended after the normalised text when it decodes to readable text
// (normalize.go's readable): quoted-printable (=XX), Morse code, binary
// octets, decimal character codes, A1Z26 (letters as 1-26), octal
// (\NNN or three-digit groups), \xNN and 0xNN escapes, and Ascii85
// between <~ and ~>. Each scan is one pass over the text, skipping at
// once a text without the encoding's marks, and adds at most
// maxDecoded bytes, like the base64 and hex views.

// appendCoded appends the views of raw's encoded runs to dst and reports
// whether it added any; buf is scratch space, returned for reuse.
func appendCoded(dst []byte, raw string, buf []byte) ([]byte, []byte, bool) {
	found := false
	add := func(dec []byte) {
		if len(dec) >= minCoded && readable(dec) {
			dst = append(dst, '\n')
			dst = normalize(dst, string(dec))
			found = true
		}
		if cap(dec) > cap(buf) {
			buf = dec
		}
	}
	if strings.Count(raw, "=") >= minEscapes {
		add(quotedPrintable(buf[:0], raw))
	}
	if strings.Count(raw, "<~") > 0 {
		add(decodeA85(buf[:0], raw))
	}
	var morseMarks, digits, backslashes int
	for i := 0; i < len(raw); i++ {
		switch c := raw[i]; {
		case c == '.' || c == '-':
			morseMarks++
		case c >= '0' && c <= '9':
			digits++
		case c == '\\':
			backslashes++
		}
	}
	if morseMarks >= 2*minCoded {
		add(morse(buf[:0], raw))
	}
	if digits >= minCoded {
		for _, k := range []numKind{numBinary, numDecimal, numA1Z26, numOctal, numHex} {
			add(numbers(buf[:0], raw, k))
		}
	}
	return dst, buf, found
}

// minCoded is the shortest decoded text kept: a few words.
const minCoded = 8

// quotedPrintable decodes =XX escapes and drops soft line breaks.
func quotedPrintable(dst []byte, raw string) []byte {
	n := 0
	for i := 0; i < len(raw) && len(dst) < maxDecoded; i++ {
		c := raw[i]
		if c == '=' {
			if i+2 < len(raw) && isHex(raw[i+1]) && isHex(raw[i+2]) {
				dst = append(dst, unhex(raw[i+1])<<4|unhex(raw[i+2]))
				i += 2
				n++
				continue
			}
			if i+1 < len(raw) && raw[i+1] == '\n' {
				i++
				continue
			}
			if i+2 < len(raw) && raw[i+1] == '\r' && raw[i+2] == '\n' {
				i += 2
				continue
			}
		}
		dst = append(dst, c)
	}
	if n < minEscapes {
		return dst[:0]
	}
	return dst
}

// decodeA85 decodes the runs between <~ and ~>.
func decodeA85(dst []byte, raw string) []byte {
	for {
		i := strings.Index(raw, "<~")
		if i < 0 {
			return dst
		}
		raw = raw[i+2:]
		j := strings.Index(raw, "~>")
		if j < 0 {
			j = len(raw)
		}
		var group [5]byte
		n := 0
		for k := 0; k < j && len(dst)+4 <= maxDecoded; k++ {
			c := raw[k]
			switch {
			case c == 'z' && n == 0:
				dst = append(dst, 0, 0, 0, 0)
			case c >= '!' && c <= 'u':
				group[n] = c - '!'
				if n++; n == 5 {
					dst = a85Group(dst, group, 4)
					n = 0
				}
			}
		}
		if n > 1 {
			for k := n; k < 5; k++ {
				group[k] = 'u' - '!'
			}
			dst = a85Group(dst, group, n-1)
		}
		if j == len(raw) {
			return dst
		}
		raw = raw[j+2:]
	}
}

func a85Group(dst []byte, g [5]byte, keep int) []byte {
	var v uint64
	for _, d := range g {
		v = v*85 + uint64(d)
	}
	if v > 0xFFFFFFFF {
		return dst
	}
	b := [4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)}
	return append(dst, b[:keep]...)
}

// morseCodes maps Morse letters and digits.
var morseCodes = func() map[string]byte {
	m := map[string]byte{}
	for i, c := range strings.Fields(".- -... -.-. -.. . ..-. --. .... .. .--- -.- .-.. -- -. --- .--. --.- .-. ... - ..- ...- .-- -..- -.-- --..") {
		m[c] = byte('a' + i)
	}
	for i, c := range strings.Fields("----- .---- ..--- ...-- ....- ..... -.... --... ---.. ----.") {
		m[c] = byte('0' + i)
	}
	return m
}()

// morse decodes runs of Morse code: letters separated by spaces, words
// by a slash, a bar or several spaces.
func morse(dst []byte, raw string) []byte {
	letters := 0
	var sym [8]byte
	n, spaces := 0, 0
	flush := func() {
		if n > 0 {
			if n <= len(sym) {
				if c, ok := morseCodes[string(sym[:n])]; ok {
					dst = append(dst, c)
					letters++
				}
			}
			n = 0
		}
	}
	for i := 0; i < len(raw) && len(dst) < maxDecoded; i++ {
		c := raw[i]
		switch c {
		case '.', '-', '_':
			if c == '_' {
				c = '-'
			}
			if spaces >= 3 && len(dst) > 0 && dst[len(dst)-1] != ' ' {
				dst = append(dst, ' ')
			}
			spaces = 0
			if n < len(sym) {
				sym[n] = c
			}
			n++
		case ' ', '\t':
			flush()
			spaces++
		case '/', '|', '\n':
			flush()
			if len(dst) > 0 && dst[len(dst)-1] != ' ' {
				dst = append(dst, ' ')
			}
			spaces = 0
		default:
			flush()
			spaces = 0
		}
	}
	flush()
	if letters < minCoded {
		return dst[:0]
	}
	return dst
}

type numKind int

const (
	numBinary  numKind = iota // 01001001 01100111 ...
	numDecimal                // 73 103 110 ... (character codes 32-126)
	numA1Z26                  // 9-7-14-15-18-5 1-12-12 (letters 1-26)
	numOctal                  // \111\147 or 111 147 ...
	numHex                    // \x49\x67 or 0x49 0x67 ...
)

// numbers decodes the runs of numeric groups of kind k: a group is a
// run of alphanumerics (with a leading \ or 0x), groups are separated by
// spaces, commas or the like; a run of at least minCoded groups that all
// read as kind k is decoded.
func numbers(dst []byte, raw string, k numKind) []byte {
	run := 0
	start := len(dst)
	total := 0
	end := func() {
		if run < minCoded {
			dst = dst[:start]
		} else {
			total += run
			dst = append(dst, ' ')
		}
		start, run = len(dst), 0
	}
	for i := 0; i < len(raw) && len(dst) < maxDecoded; {
		c := raw[i]
		if !isAlnum(c) && c != '\\' {
			// a separator; A1Z26 keeps its words apart with spaces
			if k == numA1Z26 && c == ' ' && run > 0 && len(dst) > 0 && dst[len(dst)-1] != ' ' {
				dst = append(dst, ' ')
			}
			if c == '\n' || c == '.' && k != numA1Z26 {
				end()
			}
			i++
			continue
		}
		j := i
		for j < len(raw) && (isAlnum(raw[j]) || raw[j] == '\\') {
			j++
		}
		g := raw[i:j]
		i = j
		if b, ok := numGroup(g, k, dst); ok {
			run += len(b) - len(dst) // characters, not groups ("\\111\\147" is one)
			dst = b
			continue
		}
		end()
	}
	end()
	if total == 0 {
		return dst[:0]
	}
	return dst
}

func isAlnum(c byte) bool {
	return c >= '0' && c <= '9' || c|0x20 >= 'a' && c|0x20 <= 'z'
}

// numGroup appends the characters group g stands for as kind k.
func numGroup(g string, k numKind, dst []byte) ([]byte, bool) {
	switch k {
	case numBinary:
		if (len(g) == 8 || len(g) == 7) && strings.Trim(g, "01") == "" {
			v := 0
			for i := 0; i < len(g); i++ {
				v = v<<1 | int(g[i]-'0')
			}
			return append(dst, byte(v)), v >= 0x20 && v < 0x7f || v == '\n'
		}
	case numDecimal:
		if v, ok := atoiBase(g, 10); ok && v >= 32 && v <= 126 && len(g) <= 3 {
			return append(dst, byte(v)), true
		}
	case numA1Z26:
		// letters joined by dashes within a word: "9-7-14" is read as
		// three groups; the separator between them is not a space
		if v, ok := atoiBase(g, 10); ok && v >= 1 && v <= 26 {
			return append(dst, byte('a'+v-1)), true
		}
	case numOctal:
		for len(g) > 0 {
			d := strings.TrimPrefix(g, "\\")
			if len(d) < 3 {
				return dst, false
			}
			v, ok := atoiBase(d[:3], 8)
			if !ok || v < 0o40 || v > 0o176 {
				return dst, false
			}
			dst = append(dst, byte(v))
			g = d[3:]
		}
		return dst, true
	case numHex:
		for len(g) > 0 {
			switch {
			case strings.HasPrefix(g, "\\x"), strings.HasPrefix(g, "0x"):
				g = g[2:]
			default:
				return dst, false
			}
			if len(g) < 2 || !isHex(g[0]) || !isHex(g[1]) {
				return dst, false
			}
			dst = append(dst, unhex(g[0])<<4|unhex(g[1]))
			g = g[2:]
		}
		return dst, true
	}
	return dst, false
}

func atoiBase(s string, base int) (int, bool) {
	if s == "" || len(s) > 8 {
		return 0, false
	}
	v := 0
	for i := 0; i < len(s); i++ {
		d := int(s[i] - '0')
		if d < 0 || d >= base {
			return 0, false
		}
		v = v*base + d
	}
	return v, true
}
