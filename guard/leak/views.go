package leak

import "unsafe"

// The views each decode the answer one way and hand what they decode to
// their track. Each keeps only the state of the unit it is in the middle
// of (an escape, a base64 quantum, a hex pair), so an answer split
// anywhere across writes reads the same.

// textView reads the answer as text, undoing the escapes a leak may hide
// behind: JSON and code escapes (\n, \", \u00e9, \x41), URL escapes
// (%41) and quoted-printable (=41, soft line breaks).
type textView struct {
	t      track
	u      utf8Buf
	st     uint8
	acc    rune
	nd     int
	escOrg int64
}

const (
	stText uint8 = iota
	stEsc
	stPct // %XX, \xXX
	stQP  // =XX
	stQPCR
	stUni // \uXXXX
)

func (v *textView) write(p []byte, base int64) *Leak {
	for i, c := range p {
		if l := v.byte(c, base+int64(i)); l != nil {
			return l
		}
	}
	return nil
}

func (v *textView) byte(c byte, org int64) *Leak {
	switch v.st {
	case stText:
		switch c {
		case '\\':
			v.st, v.escOrg = stEsc, org
			return nil
		case '%':
			v.st, v.escOrg, v.acc, v.nd = stPct, org, 0, 0
			return nil
		case '=':
			v.st, v.escOrg, v.acc, v.nd = stQP, org, 0, 0
			return nil
		case '\n':
			v.t.nl++
		}
		return v.u.byte(&v.t, c, org)
	case stEsc:
		v.st = stText
		v.t.esc++
		switch c {
		case 'u':
			v.st, v.acc, v.nd = stUni, 0, 0
			return nil
		case 'x':
			v.st, v.acc, v.nd = stPct, 0, 0
			return nil
		case 'n':
			v.t.nl++
			return v.t.sep()
		case 't', 'r', 'b', 'f':
			return v.t.sep()
		}
		return v.u.byte(&v.t, c, v.escOrg)
	case stPct, stQP, stUni:
		h := hexVal(c)
		if v.st == stQP {
			if c == '\r' && v.nd == 0 {
				v.st = stQPCR
				return nil
			}
			if c == '\n' && v.nd == 0 {
				v.st = stText // a soft line break
				return nil
			}
			if c >= 'a' && c <= 'f' {
				h = -1 // quoted-printable writes upper case
			}
		}
		if h < 0 {
			st := v.st
			v.st = stText
			if st == stQP && v.nd == 0 {
				// "=" alone: a sign, a word boundary.
				if l := v.t.sep(); l != nil {
					return l
				}
			} else if l := v.t.sep(); l != nil {
				return l
			}
			return v.byte(c, org)
		}
		v.acc = v.acc<<4 | rune(h)
		v.nd++
		switch {
		case v.st == stUni && v.nd == 4:
			v.st = stText
			if v.acc >= 0xD800 && v.acc < 0xE000 {
				return v.t.sep() // half a surrogate pair: no letter of ours
			}
			v.u.reset()
			return v.t.rune(v.acc, v.escOrg)
		case v.st != stUni && v.nd == 2:
			if v.st == stPct {
				v.t.pct++
			} else {
				v.t.qp++
			}
			v.st = stText
			return v.u.byte(&v.t, byte(v.acc), v.escOrg)
		}
		return nil
	case stQPCR:
		v.st = stText
		if c == '\n' {
			return nil
		}
		return v.byte(c, org)
	}
	return nil
}

func hexVal(c byte) int8 {
	switch {
	case c >= '0' && c <= '9':
		return int8(c - '0')
	case c >= 'a' && c <= 'f':
		return int8(c - 'a' + 10)
	case c >= 'A' && c <= 'F':
		return int8(c - 'A' + 10)
	}
	return -1
}

// radixView decodes base64 (standard and URL alphabets) or base32. A run
// of the alphabet starts a new decoding; whitespace continues it only
// after whole quanta of a long enough run (a wrapped encoding), so prose
// around an encoded block does not shift its alignment.
type radixView struct {
	t       track
	u       utf8Buf
	bits    uint
	table   *[256]int8
	quantum int
	minRun  int
	acc     uint32
	nacc    uint
	run     int
	byteOrg int64
}

func (v *radixView) write(p []byte, base int64) *Leak {
	for i, c := range p {
		org := base + int64(i)
		if x := v.table[c]; x >= 0 {
			if v.nacc == 0 {
				v.byteOrg = org
			}
			v.acc = v.acc<<v.bits | uint32(x)
			v.nacc += v.bits
			v.run++
			if v.nacc >= 8 {
				v.nacc -= 8
				b := byte(v.acc >> v.nacc)
				v.acc &= 1<<v.nacc - 1
				from := v.byteOrg
				if v.nacc > 0 {
					v.byteOrg = org
				}
				if l := v.u.byte(&v.t, b, from); l != nil {
					return l
				}
			}
			continue
		}
		switch c {
		case '=':
			// Padding ends the data; the quantum stays counted.
			v.acc, v.nacc = 0, 0
			v.run++
			continue
		case ' ', '\n', '\r', '\t':
			if v.run > 0 && v.run%v.quantum == 0 && v.run >= v.minRun {
				continue // a wrapped line
			}
		}
		v.acc, v.nacc, v.run = 0, 0, 0
		v.u.reset()
		if l := v.t.sep(); l != nil {
			return l
		}
	}
	return nil
}

var b64Values, b32Values = func() (b64, b32 [256]int8) {
	for i := range b64 {
		b64[i], b32[i] = -1, -1
	}
	const std = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
	for i := 0; i < len(std); i++ {
		b64[std[i]] = int8(i)
	}
	b64['-'], b64['_'] = 62, 63
	for i := 0; i < 26; i++ {
		b32['A'+i], b32['a'+i] = int8(i), int8(i)
	}
	for i := 0; i < 6; i++ {
		b32['2'+i] = int8(26 + i)
	}
	return b64, b32
}()

// hexView decodes pairs of hex digits, alone or separated by spaces,
// colons, commas or dashes, with or without 0x or \x before each.
type hexView struct {
	t   track
	u   utf8Buf
	hi  int8
	org int64
	odd bool // a digit is waiting for its pair
}

func (v *hexView) write(p []byte, base int64) *Leak {
	for i, c := range p {
		org := base + int64(i)
		if h := hexVal(c); h >= 0 {
			if !v.odd {
				v.hi, v.org, v.odd = h, org, true
				continue
			}
			v.odd = false
			if l := v.u.byte(&v.t, byte(v.hi)<<4|byte(h), v.org); l != nil {
				return l
			}
			continue
		}
		switch c {
		case 'x', 'X':
			if !v.odd || v.hi == 0 {
				v.odd = false // 0x, \x
				continue
			}
		case '\\':
			if !v.odd {
				continue // \x
			}
		case ' ', ':', ',', '-', '\n', '\r', '\t':
			if !v.odd {
				continue
			}
		}
		v.odd = false
		v.u.reset()
		if l := v.t.sep(); l != nil {
			return l
		}
	}
	return nil
}

func unsafeBytes(s string) []byte { return unsafe.Slice(unsafe.StringData(s), len(s)) }
