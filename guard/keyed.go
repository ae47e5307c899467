package guard

import (
	"bytes"
)

// Keyed ciphers: a request that names a Vigenère or rail fence cipher
// and states its key (a keyword; a number of rails) hands the guard
// what it needs to read the ciphertext as the model would. appendKeyed
// decodes each clause of the text (a line, or what follows a colon or
// a quote) with each key stated, and appends the clauses that read as
// English once decoded and did not before: the ciphertext's order is
// then scored like any other view. A text that names no such cipher
// pays two substring scans.

// Bounds of what is read as a key: at most maxKeys keys a text, a
// keyword of 2 to maxKeyLen letters, 2 to maxRails rails.
const (
	maxKeys   = 3
	maxKeyLen = 32
	maxRails  = 12
)

// keyFillers are the words between "key" and the keyword ("the key is
// lemon", "keyword: lemon", "key of lemon").
var keyFillers = map[string]bool{"is": true, "word": true, "of": true, "the": true, "be": true, "being": true,
	"was": true, "will": true, "phrase": true, "set": true, "to": true, "equals": true, "used": true, "here": true,
	"s": true, "are": true, "a": true, "my": true, "our": true}

// appendKeyed appends the views of the clauses of norm[:n0] (raw
// lowercased, for a rail fence) decoded with the keys the text states
// for the ciphers it names, and reports whether it added any.
func appendKeyed(norm []byte, n0 int, raw string) ([]byte, bool) {
	text := norm[:n0]
	vig := bytes.Contains(text, []byte("vigen")) // vigenere, vigenère folded
	rail := bytes.Contains(text, []byte("rail")) || bytes.Contains(text, []byte("zigzag")) || bytes.Contains(text, []byte("zig zag"))
	if !vig && !rail {
		return norm, false
	}
	found := false
	var buf []byte
	if vig {
		for _, key := range vigenereKeys(text) {
			forClauses(text, func(s, e int) {
				if out, ok := decodeVigenere(buf[:0], norm[s:e], key); ok {
					norm = append(append(norm, '\n'), out...)
					buf = out
					found = true
				}
			})
			text = norm[:n0]
		}
	}
	if rail {
		// The rails are read from the text as written, lowercased (the
		// normalised text folds runs of spaces, which a rail fence
		// transposes like letters).
		var low []byte
		for _, r := range railCounts(text) {
			if low == nil {
				low = []byte(raw)
				for i, c := range low {
					if c >= 'A' && c <= 'Z' {
						low[i] = c + 'a' - 'A'
					}
				}
			}
			forClauses(low, func(s, e int) {
				if out, ok := decodeRailFence(buf[:0], low[s:e], r); ok {
					norm = append(append(norm, '\n'), out...)
					buf = out
					found = true
				}
			})
		}
	}
	return norm, found
}

// forClauses calls f with the bounds of each clause of text with at
// least minCaesarLetters letters: the runs between line breaks, colons
// and quotes, spaces trimmed.
func forClauses(text []byte, f func(s, e int)) {
	start, letters := 0, 0
	for i := 0; i <= len(text); i++ {
		if i < len(text) {
			switch c := text[i]; c {
			case '\n', ':', '"', '\'', '`':
			default:
				if c >= 'a' && c <= 'z' {
					letters++
				}
				continue
			}
		}
		if letters >= minCaesarLetters {
			s, e := start, i
			for s < e && text[s] == ' ' {
				s++
			}
			for e > s && text[e-1] == ' ' {
				e--
			}
			f(s, e)
		}
		start, letters = i+1, 0
	}
}

// keyWords splits text into its runs of letters and digits, with their
// offsets.
func keyWords(text []byte) (words []string, at []int) {
	for i := 0; i < len(text); {
		if !isAlnum(text[i]) {
			i++
			continue
		}
		j := i
		for j < len(text) && isAlnum(text[j]) {
			j++
		}
		words = append(words, string(text[i:j]))
		at = append(at, i)
		i = j
	}
	return words, at
}

// vigenereKeys are the keywords the text states: the word after "key"
// or "keyword" (past fillers: "the key is lemon", "key: lemon"), or
// before "as the key" ("using lemon as the key").
func vigenereKeys(text []byte) []string {
	words, _ := keyWords(text)
	var keys []string
	add := func(w string) {
		if len(w) < 2 || len(w) > maxKeyLen || keyFillers[w] || len(keys) == maxKeys {
			return
		}
		for i := 0; i < len(w); i++ {
			if w[i] < 'a' || w[i] > 'z' {
				return
			}
		}
		for _, k := range keys {
			if k == w {
				return
			}
		}
		keys = append(keys, w)
	}
	for i, w := range words {
		if w != "key" && w != "keyword" && w != "keyed" && w != "passphrase" {
			continue
		}
		j := i + 1
		for n := 0; j < len(words) && n < 3 && keyFillers[words[j]]; n++ {
			j++
		}
		if j < len(words) && words[j] != "with" {
			add(words[j])
		}
		// "lemon as the key", "lemon as key"
		b := i - 1
		if b >= 0 && words[b] == "the" {
			b--
		}
		if b >= 1 && words[b] == "as" {
			add(words[b-1])
		}
	}
	return keys
}

// numberWords are the rail counts written as words.
var numberWords = map[string]int{"two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8,
	"nine": 9, "ten": 10, "eleven": 11, "twelve": 12}

// railCounts are the numbers of rails the text states: the first
// number (digits or a word, 2 to maxRails) within four words of a word
// that starts with "rail" ("3 rails", "rail fence, key 4", "rails: 5").
func railCounts(text []byte) []int {
	words, _ := keyWords(text)
	var out []int
	for i, w := range words {
		if len(w) < 4 || w[:4] != "rail" && w != "zigzag" && w != "zag" {
			continue
		}
		for d := 1; d <= 4; d++ {
			n := 0
			for _, j := range []int{i - d, i + d} {
				if j < 0 || j >= len(words) || n != 0 {
					continue
				}
				if v, ok := numberWords[words[j]]; ok {
					n = v
				} else if v, ok := atoiBase(words[j], 10); ok && v >= 2 && v <= maxRails {
					n = v
				}
			}
			if n == 0 {
				continue
			}
			seen := false
			for _, r := range out {
				seen = seen || r == n
			}
			if !seen && len(out) < maxKeys {
				out = append(out, n)
			}
			break
		}
	}
	return out
}

// decodeVigenere appends to dst the clause deciphered with key (each
// letter less the key's next letter; other bytes kept and not counted),
// from the key offset that reads best, and reports whether that reads as
// English by caesarMargin nats a letter more than the clause as
// written.
func decodeVigenere(dst, clause []byte, key string) ([]byte, bool) {
	k := len(key)
	var cnt [maxKeyLen][26]int // letters by their index mod k, by letter
	n := 0
	for _, c := range clause {
		if c >= 'a' && c <= 'z' {
			cnt[n%k][c-'a']++
			n++
		}
	}
	var base float64
	for r := 0; r < k; r++ {
		for c, m := range cnt[r] {
			base += float64(m) * englishLog[c]
		}
	}
	best, bo := base, -1
	for o := 0; o < k; o++ {
		sum := 0.0
		for r := 0; r < k; r++ {
			sh := int(key[(r+o)%k] - 'a')
			for c, m := range cnt[r] {
				if m > 0 {
					sum += float64(m) * englishLog[(c+26-sh)%26]
				}
			}
		}
		if sum > best {
			best, bo = sum, o
		}
	}
	if bo < 0 || best-base < caesarMargin*float64(n) {
		return dst, false
	}
	i := 0
	for _, c := range clause {
		if c >= 'a' && c <= 'z' {
			c = 'a' + (c-'a'+26-(key[(i+bo)%k]-'a'))%26
			i++
		}
		dst = append(dst, c)
	}
	return dst, true
}

// decodeRailFence appends to dst the clause read back from r rails (the
// clause's bytes, spaces included, as written rail by rail; or, when
// that does not read as English, its letters alone) and reports whether
// the result reads as English where the clause did not: a transposition
// keeps the letters' frequencies, so the test is on common pairs of
// letters (commonPairShare).
func decodeRailFence(dst, clause []byte, r int) ([]byte, bool) {
	before := commonPairShare(clause)
	try := func(dst, seq []byte) ([]byte, bool) {
		if len(seq) <= r {
			return dst, false
		}
		n0 := len(dst)
		dst = unrail(dst, seq, r)
		if got := commonPairShare(dst[n0:]); got >= minPairShare && got >= before+pairMargin {
			return dst, true
		}
		return dst[:n0], false
	}
	n0 := len(dst)
	out, ok := try(dst, clause)
	if !ok {
		letters := make([]byte, 0, len(clause))
		for _, c := range clause {
			if c >= 'a' && c <= 'z' {
				letters = append(letters, c)
			}
		}
		if out, ok = try(dst, letters); !ok {
			return dst, false
		}
	}
	if got := out[n0:]; bytes.Count(got, []byte(" "))*16 < len(got) {
		// Written without its spaces, it reads back as one run
		// ("ignoreallprevious..."): the words the rules read are
		// spaced out of it.
		run := append([]byte(nil), got...)
		out = spaceWords(out[:n0], run)
	}
	return out, true
}

// runWords are spaced out of a run of letters read back without its
// spaces: the key stems and the short words around them, the longest
// first.
var runWords = func() []string {
	w := []string{"instruction", "previous", "disregard", "developer", "password", "override", "restrict",
		"reveal", "ignore", "forget", "secret", "system", "prompt", "repeat", "output", "jailbr", "above",
		"print", "write", "reply", "rules", "show", "tell", "your", "and", "all", "you"}
	return w
}()

// spaceWords appends run to dst with a space before and after each of
// runWords found in it (left to right, the longest at each place).
func spaceWords(dst, run []byte) []byte {
	for i := 0; i < len(run); {
		hit := ""
		for _, w := range runWords {
			if len(run)-i >= len(w) && string(run[i:i+len(w)]) == w {
				hit = w
				break
			}
		}
		if hit == "" {
			dst = append(dst, run[i])
			i++
			continue
		}
		dst = append(append(append(dst, ' '), hit...), ' ')
		i += len(hit)
	}
	return dst
}

// unrail appends to dst seq read back from r rails of the rail fence
// (zigzag) cipher.
func unrail(dst, seq []byte, r int) []byte {
	n := len(seq)
	cycle := 2 * (r - 1)
	railOf := func(i int) int {
		p := i % cycle
		if p >= r {
			p = cycle - p
		}
		return p
	}
	var count [maxRails]int
	for i := 0; i < n; i++ {
		count[railOf(i)]++
	}
	var next [maxRails]int // where each rail's next byte is in seq
	for q, p := 1, 0; q < r; q++ {
		p += count[q-1]
		next[q] = p
	}
	for i := 0; i < n; i++ {
		q := railOf(i)
		dst = append(dst, seq[next[q]])
		next[q]++
	}
	return dst
}

// Rail fence detection: decoded text is taken when at least
// minPairShare of its adjacent letter pairs are common English pairs,
// and pairMargin more than as written.
const (
	minPairShare = 0.28
	pairMargin   = 0.12
)

// commonPairs marks the 40 most frequent letter pairs of English.
var commonPairs = func() (t [26 * 26]bool) {
	for _, p := range []string{"th", "he", "in", "er", "an", "re", "on", "at", "en", "nd", "ti", "es", "or", "te", "of",
		"ed", "is", "it", "al", "ar", "st", "to", "nt", "ng", "se", "ha", "as", "ou", "io", "le", "ve", "co", "me",
		"de", "hi", "ri", "ro", "ic", "ne", "ea"} {
		t[int(p[0]-'a')*26+int(p[1]-'a')] = true
	}
	return t
}()

// commonPairShare is the share of s's adjacent letter pairs (within
// words) that are common English pairs.
func commonPairShare(s []byte) float64 {
	pairs, common := 0, 0
	for i := 1; i < len(s); i++ {
		a, b := s[i-1], s[i]
		if a < 'a' || a > 'z' || b < 'a' || b > 'z' {
			continue
		}
		pairs++
		if commonPairs[int(a-'a')*26+int(b-'a')] {
			common++
		}
	}
	if pairs == 0 {
		return 0
	}
	return float64(common) / float64(pairs)
}
