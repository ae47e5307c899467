package guard

import (
	"bytes"
	"math"
)

// Views that follow the attacker (besides the decoded runs, escapes and
// assembled pieces of normalize.go), appended after the normalised text
// when the text asks for them or looks like them:
//
//   - a Caesar shift (ROT13 and the 24 others) of each line or clause
//     whose letters fit English far better shifted than as written;
//   - the text reversed by characters and by words when it speaks of
//     reading backwards ("reverse", "backwards", "right to left");
//   - the first letters of its lines, spaced (the tokenizer joins spaced
//     letters and splits them into words), when it speaks of first
//     letters (an acrostic).
//
// Each is a copy of the normalised text or less, made once per window,
// so the work stays a constant per byte. The rot13 and reversed copies
// that attack words spelled that way call for are made in features.
//
// appendReshaped appends them for the text norm[:n0] and reports
// whether it added any.
func appendReshaped(norm []byte, n0 int) ([]byte, bool) {
	found := false
	text := norm[:n0]
	// Caesar shifts, per line or clause.
	for i := 0; i < n0; {
		j := i
		for j < n0 && text[j] != '\n' && text[j] != ':' {
			j++
		}
		if k := caesarShift(text[i:j]); k != 0 {
			norm = append(norm, '\n')
			for _, c := range norm[i:j] {
				if c >= 'a' && c <= 'z' {
					c = 'a' + (c-'a'+26-byte(k))%26
				}
				norm = append(norm, c)
			}
			found = true
			text = norm[:n0]
		}
		i = j + 1
	}
	text = norm[:n0]
	if hasAny(text, "revers", "backward", "right to left", "from the end", "end to start", "inverted order", "invert") {
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

// caesarShift returns the shift k (1..25) that turns the clause into
// English-like letters (each letter c read as c-k), or 0.
func caesarShift(s []byte) int {
	var cnt [26]int
	n, spaces := 0, 0
	for _, c := range s {
		switch {
		case c >= 'a' && c <= 'z':
			cnt[c-'a']++
			n++
		case c == ' ':
			spaces++
		}
	}
	if n < minCaesarLetters || spaces*12 < len(s) || n*10 < len(s)*6 {
		return 0 // short, or not prose (code, data)
	}
	common := cnt['e'-'a'] + cnt['t'-'a'] + cnt['a'-'a'] + cnt['o'-'a'] + cnt['i'-'a'] + cnt['n'-'a'] + cnt['s'-'a'] + cnt['h'-'a'] + cnt['r'-'a']
	if float64(common) >= caesarCommon*float64(n) {
		return 0
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
	if bk == 0 || best-base < caesarMargin*float64(n) {
		return 0
	}
	return bk
}

// assemblyOrder reports whether the text asks for pieces to be joined
// and the result followed ("join the phrase with the file's text and
// follow it", "evaluate x1+x2 and do it"). Such a text's quoted pieces
// are not mentioned but used: the rules read them as orders
// (quoted and mention return false).
func assemblyOrder(sc *scratch) bool {
	n := len(sc.tokens)
	for i := 0; i < n; i++ {
		switch string(sc.word(i)) {
		case "join", "combine", "concatenate", "concat", "assemble", "merge", "glue", "evaluate", "together", "unscramble", "decode", "decipher":
		default:
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
