package reqbody

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"math/bits"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/go-json-experiment/json/jsontext"
)

// tokens is what the parser reads a body with: a scanner, or for an
// invalid body the decoder, for its error message.
type tokens interface {
	// peekKind is the next token's kind ('0' for a number), its
	// delimiter checked but not the token itself.
	peekKind() (byte, error)
	// readToken reads the next token, a whole value unless it opens or
	// closes an object or array.
	readToken() (byte, error)
	// readValue reads the next value (or member name) whole.
	readValue() ([]byte, error)
	// readText reads the next value, a string, and returns its text.
	readText() (string, error)
	skipValue() error
	// end checks that nothing but white space follows the top-level
	// value.
	end() error
}

// decoder is jsontext's Decoder as tokens.
type decoder struct{ d *jsontext.Decoder }

func (d decoder) peekKind() (byte, error) {
	if k := d.d.PeekKind(); k != 0 {
		return byte(k), nil
	}
	_, err := d.d.ReadToken()
	if err == nil {
		err = io.ErrUnexpectedEOF
	}
	return 0, err
}

func (d decoder) readToken() (byte, error) {
	tok, err := d.d.ReadToken()
	return byte(tok.Kind()), err
}

func (d decoder) readValue() ([]byte, error) {
	v, err := d.d.ReadValue()
	return bytes.Clone(v), err
}

func (d decoder) readText() (string, error) {
	v, err := d.readValue()
	if err != nil {
		return "", err
	}
	return unquoteValid(v), nil
}

func (d decoder) skipValue() error { return d.d.SkipValue() }

func (d decoder) end() error {
	if _, err := d.d.ReadToken(); err != io.EOF {
		if err == nil {
			err = errors.New("data after the top-level object")
		}
		return err
	}
	return nil
}

// scanner reads a JSON body token by token as jsontext's Decoder does
// (the same kinds peeked, the same delimiters, duplicate names, UTF-8
// and escape rules and nesting limit), in one pass over the bytes and
// without copying them: values are sub-slices of the body. It only
// tells that the body is invalid (errSyntax); the decoder reads it again
// then, for its message (rare: clients send valid JSON).
type scanner struct {
	b      []byte
	pos    int  // the next byte to read
	peeked bool // pos is at the peeked value's first byte
	stack  []frame
	names  []string // the names of the open objects, innermost last
}

// frame is an open object or array.
type frame struct {
	obj  bool
	n    int // tokens read in it: names and values (object), values (array)
	seen names
}

// names is an object's member names, for the duplicate check: a linear
// search while the object is small, a map once it is big.
type names struct {
	base int // its first name in scanner.names
	m    map[string]struct{}
}

// maxDepth is the decoder's nesting limit.
const maxDepth = 10000

// bigObject is the member count from which names are looked up in a map.
const bigObject = 16

// errSyntax is a body the decoder refuses (invalid JSON, invalid UTF-8,
// a duplicate name).
var errSyntax = errors.New("reqbody: invalid JSON")

func newScanner(b []byte) *scanner {
	return &scanner{b: b, stack: make([]frame, 0, 8), names: make([]string, 0, 32)}
}

// end checks that nothing but white space follows the top-level value.
func (s *scanner) end() error {
	if s.ws(s.pos) != len(s.b) {
		return errSyntax
	}
	return nil
}

// add records name in the object; false if it is there already.
func (s *scanner) add(seen *names, name string) bool {
	if seen.m != nil {
		if _, dup := seen.m[name]; dup {
			return false
		}
		seen.m[name] = struct{}{}
		s.names = append(s.names, name)
		return true
	}
	have := s.names[seen.base:]
	for _, n := range have {
		if n == name {
			return false
		}
	}
	s.names = append(s.names, name)
	if len(have)+1 >= bigObject {
		seen.m = make(map[string]struct{}, 2*bigObject)
		for _, n := range s.names[seen.base:] {
			seen.m[n] = struct{}{}
		}
	}
	return true
}

func isSpace(c byte) bool { return c == ' ' || c == '\n' || c == '\r' || c == '\t' }

func (s *scanner) ws(pos int) int {
	for pos < len(s.b) && isSpace(s.b[pos]) {
		pos++
	}
	return pos
}

// kind is the decoder's kind of a value's first byte.
func kind(c byte) byte {
	if c == '-' || '0' <= c && c <= '9' {
		return '0'
	}
	return c
}

// peekKind is the decoder's PeekKind: the delimiter before the next
// token checked, the token's first byte not.
func (s *scanner) peekKind() (byte, error) {
	if s.peeked {
		return kind(s.b[s.pos]), nil
	}
	pos := s.ws(s.pos)
	if pos >= len(s.b) {
		return 0, errSyntax
	}
	var delim byte
	if c := s.b[pos]; c == ':' || c == ',' {
		delim = c
		if pos = s.ws(pos + 1); pos >= len(s.b) {
			return 0, errSyntax
		}
	}
	k := kind(s.b[pos])
	if k == 0 {
		return 0, errSyntax // the decoder's "no kind"
	}
	var need byte
	if len(s.stack) > 0 {
		f := &s.stack[len(s.stack)-1]
		switch {
		case f.obj && f.n&1 == 1:
			need = ':'
		case f.n > 0 && k != '}' && k != ']':
			need = ','
		}
	}
	if need != delim {
		return 0, errSyntax
	}
	s.pos, s.peeked = pos, true
	return k, nil
}

// atName reports whether the next token is an object member name.
func (s *scanner) atName() bool {
	if len(s.stack) == 0 {
		return false
	}
	f := &s.stack[len(s.stack)-1]
	return f.obj && f.n&1 == 0
}

// readToken reads the next token (a whole value unless it opens or
// closes an object or array) and returns its kind.
func (s *scanner) readToken() (byte, error) {
	k, err := s.peekKind()
	if err != nil {
		return 0, err
	}
	switch k {
	case '{', '[':
		if s.atName() {
			return 0, errSyntax
		}
		if len(s.stack) >= maxDepth {
			return 0, errSyntax
		}
		if len(s.stack) > 0 {
			s.stack[len(s.stack)-1].n++
		}
		s.stack = append(s.stack, frame{obj: k == '{', seen: names{base: len(s.names)}})
		s.pos++
		s.peeked = false
		return k, nil
	case '}', ']':
		if len(s.stack) == 0 {
			return 0, errSyntax
		}
		f := &s.stack[len(s.stack)-1]
		if f.obj != (k == '}') || f.obj && f.n&1 == 1 {
			return 0, errSyntax
		}
		s.names = s.names[:f.seen.base]
		s.stack = s.stack[:len(s.stack)-1]
		s.pos++
		s.peeked = false
		return k, nil
	}
	_, err = s.readValue()
	return k, err
}

// readValue reads the next value, or member name, whole (validated) and
// returns its bytes.
func (s *scanner) readValue() ([]byte, error) {
	if _, err := s.peekKind(); err != nil {
		return nil, err
	}
	start := s.pos
	var end int
	var err error
	if s.atName() {
		f := &s.stack[len(s.stack)-1]
		if s.b[start] != '"' {
			return nil, errSyntax
		}
		var esc bool
		if end, esc, err = s.str(start); err != nil {
			return nil, err
		}
		if !s.add(&f.seen, s.nameOf(s.b[start:end], esc)) {
			return nil, errSyntax
		}
	} else if end, err = s.value(start, len(s.stack)); err != nil {
		return nil, err
	}
	if len(s.stack) > 0 {
		s.stack[len(s.stack)-1].n++
	}
	s.pos, s.peeked = end, false
	return s.b[start:end], nil
}

func (s *scanner) readText() (string, error) {
	if _, err := s.peekKind(); err != nil {
		return "", err
	}
	if s.atName() || s.b[s.pos] != '"' { // not met: the parser peeks a string first
		v, err := s.readValue()
		if err != nil {
			return "", err
		}
		return unquoteValid(v), nil
	}
	end, text, err := s.text(s.pos)
	if err != nil {
		return "", err
	}
	if len(s.stack) > 0 {
		s.stack[len(s.stack)-1].n++
	}
	s.pos, s.peeked = end, false
	return text, nil
}

func (s *scanner) skipValue() error {
	_, err := s.readValue()
	return err
}

// nameOf is a name as the decoder compares it (unescaped).
func (s *scanner) nameOf(raw []byte, esc bool) string {
	if !esc {
		return bytesString(raw[1 : len(raw)-1])
	}
	return unquoteValid(raw)
}

// value reads the value at pos, inside depth open objects and arrays,
// and returns where it ends.
func (s *scanner) value(pos, depth int) (int, error) {
	b := s.b
	if pos >= len(b) {
		return 0, errSyntax
	}
	switch c := b[pos]; c {
	case '"':
		end, _, err := s.str(pos)
		return end, err
	case '{', '[':
		return s.container(pos, depth)
	case 't':
		return s.literal(pos, "true")
	case 'f':
		return s.literal(pos, "false")
	case 'n':
		return s.literal(pos, "null")
	}
	return s.number(pos)
}

func (s *scanner) literal(pos int, lit string) (int, error) {
	if len(s.b)-pos < len(lit) || string(s.b[pos:pos+len(lit)]) != lit {
		return 0, errSyntax
	}
	return pos + len(lit), nil
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// number reads a number: -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?
func (s *scanner) number(pos int) (int, error) {
	b := s.b
	if pos < len(b) && b[pos] == '-' {
		pos++
	}
	switch {
	case pos >= len(b):
		return 0, errSyntax
	case b[pos] == '0':
		pos++
	case '1' <= b[pos] && b[pos] <= '9':
		for pos++; pos < len(b) && isDigit(b[pos]); pos++ {
		}
	default:
		return 0, errSyntax
	}
	if pos < len(b) && b[pos] == '.' {
		pos++
		if pos >= len(b) || !isDigit(b[pos]) {
			return 0, errSyntax
		}
		for pos++; pos < len(b) && isDigit(b[pos]); pos++ {
		}
	}
	if pos < len(b) && (b[pos] == 'e' || b[pos] == 'E') {
		pos++
		if pos < len(b) && (b[pos] == '+' || b[pos] == '-') {
			pos++
		}
		if pos >= len(b) || !isDigit(b[pos]) {
			return 0, errSyntax
		}
		for pos++; pos < len(b) && isDigit(b[pos]); pos++ {
		}
	}
	return pos, nil
}

// container reads the object or array at pos (see value).
func (s *scanner) container(pos, depth int) (int, error) {
	if depth >= maxDepth {
		return 0, errSyntax
	}
	b := s.b
	obj := b[pos] == '{'
	closer := byte(']')
	seen := names{base: len(s.names)}
	if obj {
		closer = '}'
		defer func() { s.names = s.names[:seen.base] }()
	}
	pos = s.ws(pos + 1)
	if pos < len(b) && b[pos] == closer {
		return pos + 1, nil
	}
	for {
		if obj {
			if pos >= len(b) || b[pos] != '"' {
				return 0, errSyntax
			}
			end, esc, err := s.str(pos)
			if err != nil {
				return 0, err
			}
			if !s.add(&seen, s.nameOf(b[pos:end], esc)) {
				return 0, errSyntax
			}
			if pos = s.ws(end); pos >= len(b) || b[pos] != ':' {
				return 0, errSyntax
			}
			pos = s.ws(pos + 1)
		}
		end, err := s.value(pos, depth+1)
		if err != nil {
			return 0, err
		}
		if pos = s.ws(end); pos >= len(b) {
			return 0, errSyntax
		}
		switch b[pos] {
		case ',':
			pos = s.ws(pos + 1)
		case closer:
			return pos + 1, nil
		default:
			return 0, errSyntax
		}
	}
}

const (
	lsb = 0x0101010101010101
	msb = 0x8080808080808080
)

// special marks the bytes of x that need a look in a string: a quote,
// a backslash, a control character or a non-ASCII byte. The lowest
// marked byte is the first such: the bytes below it borrow nothing in
// the subtractions (above it marks may be false).
func special(x uint64) uint64 {
	return (x | (x - ' '*lsb) | ((x ^ '"'*lsb) - lsb) | ((x ^ '\\'*lsb) - lsb)) & msb
}

// plainRun is the end of the run of bytes at b[i:] that need no look in
// a string (see special), read 8 bytes at a time; the last 7 bytes of b
// are left to the caller.
func plainRun(b []byte, i int) int {
	for ; i+8 <= len(b); i += 8 {
		if m := special(binary.LittleEndian.Uint64(b[i : i+8])); m != 0 {
			return i + bits.TrailingZeros64(m)>>3
		}
	}
	return i
}

// str reads the string at pos (its quote) as the decoder validates it,
// returning where it ends and whether it has escapes.
func (s *scanner) str(pos int) (end int, esc bool, err error) {
	b := s.b
	i := pos + 1
	for {
		i = plainRun(b, i)
		if i >= len(b) {
			return 0, false, errSyntax
		}
		switch c := b[i]; {
		case c == '"':
			return i + 1, esc, nil
		case c == '\\':
			esc = true
			if i+1 >= len(b) {
				return 0, false, errSyntax
			}
			switch b[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				r, ok := hex4(b, i+2)
				if !ok {
					return 0, false, errSyntax
				}
				i += 6
				if utf16.IsSurrogate(r) {
					r2, ok := hex4(b, i+2)
					if !ok || b[i] != '\\' || b[i+1] != 'u' || utf16.DecodeRune(r, r2) == utf8.RuneError {
						return 0, false, errSyntax
					}
					i += 6
				}
			default:
				return 0, false, errSyntax
			}
		case c < ' ':
			return 0, false, errSyntax
		case c < utf8.RuneSelf:
			i++
		default:
			r, n := utf8.DecodeRune(b[i:])
			if r == utf8.RuneError && n == 1 {
				return 0, false, errSyntax
			}
			i += n
		}
	}
}

// text reads the string at pos as str does, returning where it ends and
// its text: a sub-slice of the body if it has no escapes, else decoded in
// the same pass that validates the rest.
func (s *scanner) text(pos int) (int, string, error) {
	b := s.b
	i := pos + 1
	for {
		i = plainRun(b, i)
		if i >= len(b) {
			return 0, "", errSyntax
		}
		switch c := b[i]; {
		case c == '"':
			return i + 1, bytesString(b[pos+1 : i]), nil
		case c == '\\':
			return s.escapedText(pos, i)
		case c < ' ':
			return 0, "", errSyntax
		case c < utf8.RuneSelf:
			i++
		default:
			r, n := utf8.DecodeRune(b[i:])
			if r == utf8.RuneError && n == 1 {
				return 0, "", errSyntax
			}
			i += n
		}
	}
}

// escapedText is text from the string's first backslash, at i.
func (s *scanner) escapedText(pos, i int) (int, string, error) {
	b := s.b
	// The closing quote is the first one after an even run of
	// backslashes; the text is shorter than what is before it.
	end := i
	for {
		q := bytes.IndexByte(b[end:], '"')
		if q < 0 {
			return 0, "", errSyntax
		}
		end += q
		n := 0
		for b[end-1-n] == '\\' {
			n++
		}
		if n%2 == 0 {
			break
		}
		end++
	}
	// 8 bytes more let the plain runs be copied 8 bytes at a time: a run
	// read whole never passes the closing quote.
	out := make([]byte, end-pos+8)
	j := copy(out, b[pos+1:i])
	for {
		for i+8 <= len(b) {
			x := binary.LittleEndian.Uint64(b[i : i+8])
			binary.LittleEndian.PutUint64(out[j:j+8], x)
			if m := special(x); m != 0 {
				k := bits.TrailingZeros64(m) >> 3
				i, j = i+k, j+k
				break
			}
			i, j = i+8, j+8
		}
		if i >= len(b) {
			return 0, "", errSyntax
		}
		switch c := b[i]; {
		case c == '"':
			if i != end {
				return 0, "", errSyntax // not met
			}
			return i + 1, bytesString(out[:j]), nil
		case c == '\\':
			if i+2 > end {
				return 0, "", errSyntax // not met
			}
			if c = unescape[b[i+1]]; c != 0 {
				out[j] = c
				i, j = i+2, j+1
				continue
			}
			switch b[i+1] {
			case 'u':
				r, ok := hex4(b, i+2)
				if !ok {
					return 0, "", errSyntax
				}
				i += 6
				if utf16.IsSurrogate(r) {
					r2, ok := hex4(b, i+2)
					if !ok || b[i] != '\\' || b[i+1] != 'u' {
						return 0, "", errSyntax
					}
					if r = utf16.DecodeRune(r, r2); r == utf8.RuneError {
						return 0, "", errSyntax
					}
					i += 6
				}
				if i > end {
					return 0, "", errSyntax // not met
				}
				j += utf8.EncodeRune(out[j:], r)
				continue
			default:
				return 0, "", errSyntax
			}
		case c < ' ':
			return 0, "", errSyntax
		case c < utf8.RuneSelf:
			out[j] = c
			i, j = i+1, j+1
		default:
			r, n := utf8.DecodeRune(b[i:])
			if r == utf8.RuneError && n == 1 {
				return 0, "", errSyntax
			}
			j += copy(out[j:], b[i:i+n])
			i += n
		}
	}
}

// unescape is the byte each one-letter escape stands for.
var unescape = [256]byte{'"': '"', '\\': '\\', '/': '/', 'b': '\b', 'f': '\f', 'n': '\n', 'r': '\r', 't': '\t'}

// hex4 reads the 4 hex digits at b[i:], if there are.
func hex4(b []byte, i int) (rune, bool) {
	if i+4 > len(b) {
		return 0, false
	}
	var r rune
	for _, c := range b[i : i+4] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c -= 'a' - 10
		case 'A' <= c && c <= 'F':
			c -= 'A' - 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}

// unquoteValid decodes a JSON string the scanner has validated.
func unquoteValid(raw []byte) string {
	s := raw[1 : len(raw)-1]
	i := bytes.IndexByte(s, '\\')
	if i < 0 {
		return bytesString(s)
	}
	// Unquoting never lengthens a string; the 8 bytes more let the
	// plain runs be copied 8 bytes at a time.
	out := make([]byte, len(s)+8)
	j := copy(out, s[:i])
	for i < len(s) {
		if i+8 <= len(s) {
			x := binary.LittleEndian.Uint64(s[i : i+8])
			binary.LittleEndian.PutUint64(out[j:j+8], x)
			e := x ^ ('\\' * lsb)
			if m := (e - lsb) &^ e & msb; m != 0 {
				k := bits.TrailingZeros64(m) >> 3
				i, j = i+k, j+k
			} else {
				i, j = i+8, j+8
				continue
			}
		} else if c := s[i]; c != '\\' {
			out[j] = c
			i, j = i+1, j+1
			continue
		}
		c := s[i+1]
		i += 2
		switch c {
		case 'u':
			r, _ := hex4(s, i)
			i += 4
			if utf16.IsSurrogate(r) {
				r2, _ := hex4(s, i+2)
				r = utf16.DecodeRune(r, r2)
				i += 6
			}
			j += utf8.EncodeRune(out[j:], r)
			continue
		case 'b':
			c = '\b'
		case 'f':
			c = '\f'
		case 'n':
			c = '\n'
		case 'r':
			c = '\r'
		case 't':
			c = '\t'
		}
		out[j] = c // or '"', '\\', '/'
		j++
	}
	return bytesString(out[:j])
}
