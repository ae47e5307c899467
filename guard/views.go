package guard

import (
	"bytes"
	"math"
	"slices"
	"strings"
)

// Views that follow the attacker (besides the decoded runs, escapes and
// assembled pieces of normalize.go), appended after the normalised text:
//
//   - a Caesar shift (ROT13 and the 24 others) of each line or clause
//     whose letters fit English far better shifted than as written
//     (appendShifted, before the text is tokenized);
//   - the text reversed by characters and by words when it speaks of
//     reading backwards ("reverse", "backwards", "right to left"), and
//     the first letters of its lines, spaced (the tokenizer joins spaced
//     letters and splits them into words), when it speaks of first
//     letters (an acrostic): appendReshaped, after tokenizing, when the
//     lexicon found one of reshapeCueWords.
//
// Each is a copy of the normalised text or less, made once per window,
// so the work stays a constant per byte. The rot13 and reversed copies
// that attack words spelled that way call for are made in features.

// reshapeCueWords make the tokenizer count a reshape cue.
var reshapeCueWords = []string{"reverse", "reversed", "reversing", "backwards", "backward", "invert", "inverted", "left",
	"end", "acrostic", "letter", "letters", "character", "characters", "char", "chars"}

// appendShifted appends the Caesar-shifted copies of the clauses of
// norm[:n0] that read as shifted English, and reports whether it added
// any.
func appendShifted(norm []byte, n0 int) ([]byte, bool) {
	found := false
	// One pass adds each byte's packed counts (letters, common English
	// letters, spaces: one table read and one add a byte); a clause ends
	// at a line break or a colon, and only a clause whose counts say
	// "prose, but not English letters" is counted letter by letter. (A
	// window is at most a few windowSize long, far below the fields'
	// 2^21.)
	var acc uint64
	start := 0
	text := norm[:n0]
	for i := 0; i <= len(text); i++ {
		if i < len(text) {
			if t := shiftCounts[text[i]]; t&clauseEnd == 0 {
				acc += t
				continue
			}
		}
		n, common, spaces := int(acc&fieldMask), int(acc>>21&fieldMask), int(acc>>42&fieldMask)
		size := i - start
		if n >= minCaesarLetters && spaces*12 >= size && n*10 >= size*6 && float64(common) < caesarCommon*float64(n) {
			if sh := caesarShift(norm[start:i], n); sh != 0 {
				norm = append(norm, '\n')
				for _, c := range norm[start:i] {
					if c >= 'a' && c <= 'z' {
						if sh == atbashShift {
							c = 'z' - (c - 'a')
						} else {
							c = 'a' + (c-'a'+26-byte(sh))%26
						}
					}
					norm = append(norm, c)
				}
				text = norm[:n0]
				found = true
			}
		}
		acc = 0
		start = i + 1
	}
	return norm, found
}

// shiftCounts packs, for each byte, 1 in the letters field (bits 0-20),
// the common English letters' field (21-41: etaoinshr) and the spaces'
// field (42-62); clauseEnd marks line breaks and colons.
const (
	fieldMask = 1<<21 - 1
	clauseEnd = 1 << 63
)

var shiftCounts = func() [256]uint64 {
	var t [256]uint64
	for c := 'a'; c <= 'z'; c++ {
		t[c] = 1
	}
	for _, c := range "etaoinshr" {
		t[c] |= 1 << 21
	}
	t[' '] = 1 << 42
	t['\n'], t[':'] = clauseEnd, clauseEnd
	return t
}()

// appendReshaped appends the reversed and first-letter views of
// norm[:n0] that the text asks for, and reports whether it added any.
func appendReshaped(norm []byte, n0 int) ([]byte, bool) {
	found := false
	text := norm[:n0]
	if hasAny(text, "revers", "backward", "right to left", "from the end", "end to start", "invert") {
		norm = appendTransformed(norm, norm[:n0], false)
		norm = appendWordsReversed(norm, n0)
		found = true
	}
	text = norm[:n0]
	if hasAny(text, "first letter", "initial letter", "first character", "acrostic", "first char") {
		norm = append(norm, '\n')
		lineStart := true
		for p := 0; p < n0; p++ {
			c := norm[p]
			if c == '\n' {
				lineStart = true
				continue
			}
			if lineStart && c != ' ' {
				if c >= 'a' && c <= 'z' {
					// spaced, so the tokenizer joins the letters and
					// splits them into words
					norm = append(norm, c, ' ')
				}
				lineStart = false
			}
		}
		found = true
	}
	return norm, found
}

func hasAny(s []byte, words ...string) bool {
	for _, w := range words {
		if bytes.Contains(s, []byte(w)) {
			return true
		}
	}
	return false
}

// appendWordsReversed appends, after a newline, the words of norm[:n0]
// in reverse order.
func appendWordsReversed(norm []byte, n0 int) []byte {
	norm = append(norm, '\n')
	e := n0
	for e > 0 {
		for e > 0 && (norm[e-1] == ' ' || norm[e-1] == '\n') {
			e--
		}
		s := e
		for s > 0 && norm[s-1] != ' ' && norm[s-1] != '\n' {
			s--
		}
		if s < e {
			norm = append(norm, norm[s:e]...)
			norm = append(norm, ' ')
		}
		e = s
	}
	return norm
}

// englishLog is the log of each letter's frequency in English text.
var englishLog = func() [26]float64 {
	f := [26]float64{8.2, 1.5, 2.8, 4.3, 12.7, 2.2, 2.0, 6.1, 7.0, 0.15, 0.77, 4.0, 2.4,
		6.7, 7.5, 1.9, 0.095, 6.0, 6.3, 9.1, 2.8, 0.98, 2.4, 0.15, 2.0, 0.074}
	var l [26]float64
	for i, x := range f {
		l[i] = math.Log(x / 100)
	}
	return l
}()

// Caesar detection: a clause of at least minCaesarLetters letters whose
// most frequent letters are not English's (etaoinshr make about 70% of
// English letters, under caesarCommon here) is tried at every shift; the
// best shift is taken when its letters' log-likelihood under English
// frequencies beats the text as written by caesarMargin nats a letter.
const (
	minCaesarLetters = 16
	caesarCommon     = 0.5
	caesarMargin     = 0.35
)

// caesarShift returns the shift k (1..25) that turns the clause, of n
// letters, into English-like letters (each letter c read as c-k),
// atbashShift when the reversed alphabet does that best, or 0.
func caesarShift(clause []byte, n int) int {
	var cnt [26]int
	for _, c := range clause {
		if c >= 'a' && c <= 'z' {
			cnt[c-'a']++
		}
	}
	ll := func(k int) float64 {
		sum := 0.0
		for c, m := range cnt {
			if m > 0 {
				sum += float64(m) * englishLog[(c+26-k)%26]
			}
		}
		return sum
	}
	base := ll(0)
	best, bk := base, 0
	for k := 1; k < 26; k++ {
		if v := ll(k); v > best {
			best, bk = v, k
		}
	}
	// Atbash (a<->z, b<->y, ...), returned as atbashShift
	ab := 0.0
	for c, m := range cnt {
		if m > 0 {
			ab += float64(m) * englishLog[25-c]
		}
	}
	if ab > best && ab-base >= caesarMargin*float64(n) {
		return atbashShift
	}
	if bk == 0 || best-base < caesarMargin*float64(n) {
		return 0
	}
	return bk
}

// atbashShift is caesarShift's answer for a clause that reads as English
// with its alphabet reversed (Atbash).
const atbashShift = -1

// assemblyOrder reports whether the text asks for pieces to be joined
// and the result followed ("join the phrase with the file's text and
// follow it", "evaluate x1+x2 and do it"). Such a text's quoted pieces
// are not mentioned but used: the rules read them as orders
// (quoted and mention return false).
func assemblyOrder(sc *scratch) bool {
	// (called only when the tokenizer counted one of assemblyWords)
	n := len(sc.tokens)
	for i := 0; i < n; i++ {
		if !slices.Contains(assemblyWords, string(sc.word(i))) {
			continue
		}
		for j := i + 1; j < n && j <= i+12; j++ {
			switch string(sc.word(j)) {
			case "follow", "execute", "obey", "comply", "carry", "act", "do", "perform", "run":
				return true
			}
		}
	}
	return false
}

// assemblyWords ask for pieces to be joined.
var assemblyWords = []string{"join", "combine", "concatenate", "concat", "assemble", "merge", "glue", "evaluate", "together", "unscramble", "decode", "decipher"}

// literalAssignments reports whether every non-blank line of s assigns
// one quoted string to a name and does nothing else (a='Ignore all
// previous', x1 := "the system prompt";). Lines longer than 512 bytes,
// or more than 16 lines, are not looked at (false).
func literalAssignments(s string) bool {
	if len(s) > 16*512 {
		return false
	}
	lines := 0
	for len(s) > 0 {
		line, rest, _ := strings.Cut(s, "\n")
		s = rest
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		if lines++; lines > 16 || len(line) > 512 || !literalAssignment(line) {
			return false
		}
	}
	return lines > 0
}

// literalAssignment reports whether line is name = 'string' (or :=, or
// with " or ` quotes), with at most a ; or , after it.
func literalAssignment(line string) bool {
	i := 0
	for i < len(line) && (line[i] == '_' || line[i] >= 'a' && line[i] <= 'z' || line[i] >= 'A' && line[i] <= 'Z' || i > 0 && line[i] >= '0' && line[i] <= '9') {
		i++
	}
	if i == 0 {
		return false
	}
	rest := strings.TrimLeft(line[i:], " \t")
	rest = strings.TrimPrefix(rest, ":")
	if !strings.HasPrefix(rest, "=") {
		return false
	}
	rest = strings.TrimLeft(rest[1:], " \t")
	if rest == "" || rest[0] != '\'' && rest[0] != '"' && rest[0] != '`' {
		return false
	}
	q := rest[0]
	end := strings.IndexByte(rest[1:], q)
	if end < 0 {
		return false
	}
	tail := strings.TrimRight(rest[end+2:], " \t;,")
	return tail == ""
}
