package leak

import "strconv"

// codeView decodes text written one character per token: decimal
// character codes ("89 111 117") and letter positions (A1Z26:
// "25-15-21"), 8-bit binary ("01011001 01101111") or Morse (".-- ....",
// "/" between words). A run is decoded once it holds codeMinRun tokens
// in a row, so numbers and dashes in prose cost a table lookup a byte.
type codeView struct {
	t      track
	kind   uint8
	tok    [maxCodeTok]byte
	n      int
	tokOrg int64
	run    int
	wait   [codeMinRun]rune
	worg   [codeMinRun]int64
	spaces int // spaces in a row (Morse: three or more part words)
}

const (
	codeDecimal uint8 = iota
	codeBinary
	codeMorse
)

const (
	codeMinRun = 8
	maxCodeTok = 8
)

func (v *codeView) inToken(c byte) bool {
	switch v.kind {
	case codeDecimal:
		return c >= '0' && c <= '9'
	case codeBinary:
		return c == '0' || c == '1'
	}
	return c == '.' || c == '-' || c == '_'
}

func (v *codeView) isSep(c byte) bool {
	switch c {
	case ' ', ',', '\n', '\r', '\t':
		return true
	case '-', ';':
		return v.kind == codeDecimal
	case '/', '|':
		return v.kind == codeMorse || v.kind == codeDecimal
	}
	return false
}

// codeClass[kind][c]: 1 a token's byte, 2 a separator, 0 neither.
var codeClass = func() (t [3][256]uint8) {
	for k := range t {
		v := codeView{kind: uint8(k)}
		for c := range 256 {
			switch {
			case v.inToken(byte(c)):
				t[k][c] = 1
			case v.isSep(byte(c)):
				t[k][c] = 2
			}
		}
	}
	return t
}()

func (v *codeView) write(p []byte, base int64) *Leak {
	class := &codeClass[v.kind]
	for i, c := range p {
		cls := class[c]
		if cls == 0 && v.n == 0 && v.run == 0 {
			v.spaces = 0
			continue // prose: nothing to end
		}
		org := base + int64(i)
		if cls == 1 {
			if v.n == 0 {
				v.tokOrg = org
			}
			if v.n == maxCodeTok {
				if l := v.reset(); l != nil {
					return l
				}
				continue
			}
			v.tok[v.n] = c
			v.n++
			v.spaces = 0
			continue
		}
		if cls == 2 {
			if l := v.endToken(); l != nil {
				return l
			}
			if v.kind == codeMorse && (c == '/' || c == '|' || c == ' ' && v.spaces >= 2) {
				if l := v.push(' ', org); l != nil {
					return l
				}
			}
			if c == ' ' {
				v.spaces++
			}
			continue
		}
		if l := v.endToken(); l != nil {
			return l
		}
		if l := v.reset(); l != nil {
			return l
		}
	}
	return nil
}

// endToken decodes the token just ended.
func (v *codeView) endToken() *Leak {
	if v.n == 0 {
		return nil
	}
	s := string(v.tok[:v.n])
	v.n = 0
	var r rune
	switch v.kind {
	case codeDecimal:
		x, _ := strconv.Atoi(s)
		switch {
		case x >= 1 && x <= 26:
			r = 'a' + rune(x-1)
		case x >= 32 && x <= 0x24F:
			r = rune(x)
		}
	case codeBinary:
		if len(s) >= 7 {
			x, _ := strconv.ParseUint(s, 2, 8)
			if x >= 32 && x < 127 {
				r = rune(x)
			}
		}
	default:
		r = morse[s]
	}
	if r == 0 {
		return v.reset()
	}
	return v.push(r, v.tokOrg)
}

// push adds one decoded character to the run.
func (v *codeView) push(r rune, org int64) *Leak {
	if v.run < codeMinRun {
		if r == ' ' && v.run == 0 {
			return nil
		}
		v.wait[v.run], v.worg[v.run] = r, org
		v.run++
		if v.run == codeMinRun {
			for j := range codeMinRun {
				if l := v.t.rune(v.wait[j], v.worg[j]); l != nil {
					return l
				}
			}
		}
		return nil
	}
	v.run++
	return v.t.rune(r, org)
}

// reset ends the run: what follows is not this code.
func (v *codeView) reset() *Leak {
	v.n, v.spaces = 0, 0
	long := v.run >= codeMinRun
	v.run = 0
	if long {
		return v.t.sep()
	}
	return nil
}

// finish decodes a token the answer ended on.
func (v *codeView) finish() *Leak { return v.endToken() }

var morse = map[string]rune{
	".-": 'a', "-...": 'b', "-.-.": 'c', "-..": 'd', ".": 'e', "..-.": 'f', "--.": 'g', "....": 'h',
	"..": 'i', ".---": 'j', "-.-": 'k', ".-..": 'l', "--": 'm', "-.": 'n', "---": 'o', ".--.": 'p',
	"--.-": 'q', ".-.": 'r', "...": 's', "-": 't', "..-": 'u', "...-": 'v', ".--": 'w', "-..-": 'x',
	"-.--": 'y', "--..": 'z', "-----": '0', ".----": '1', "..---": '2', "...--": '3', "....-": '4',
	".....": '5', "-....": '6', "--...": '7', "---..": '8', "----.": '9',
}
