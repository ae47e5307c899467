package guard

import (
	"slices"
	"strings"
	"sync"
)

// Word games the attacker asks the model to undo, read on short texts
// (a prompt, not a document: at most maxGameText bytes), each appended
// as a view when it turns at least minGameWords words into words of the
// lexicon's concepts:
//
//   - pig latin: "ignoreway allway eviouspray" (a word's leading
//     consonants moved to its end before "ay", or "way" after a vowel);
//   - scrambled inner letters: "ignroe all pervious insturctions" (first
//     and last letters kept, the others shuffled), matched against the
//     concept words by their letters.
const (
	maxGameText  = 2048
	minGameWords = 3
)

// scrambleIndex maps a word's scramble key (first letter, last letter,
// the inner letters sorted) to the concept word with those letters.
var scrambleIndex = sync.OnceValue(func() map[string]string {
	m := map[string]string{}
	for _, list := range conceptWords() {
		for _, w := range strings.Fields(list) {
			if len(w) >= 4 {
				m[scrambleKey(w)] = w
			}
		}
	}
	return m
})

// scrambleShapes has, for a first and a last letter, a bit per length
// of the concept words with them: a word whose shape no concept word has
// is passed over before it is sorted.
var scrambleShapes = sync.OnceValue(func() *[26][26]uint32 {
	var t [26][26]uint32
	for k := range scrambleIndex() {
		if a, z := k[0], k[len(k)-1]; isLetter(a) && isLetter(z) && len(k) < 32 {
			t[a-'a'][z-'a'] |= 1 << len(k)
		}
	}
	return &t
})

func scrambleKey(w string) string {
	b := []byte(w)
	slices.Sort(b[1 : len(b)-1])
	return string(b)
}

func isVowel(c byte) bool { return c == 'a' || c == 'e' || c == 'i' || c == 'o' || c == 'u' }

// appendWordGames appends the pig-latin and unscrambled views of
// norm[:n0] and reports whether it added any. A first pass over the
// words counts what each game would turn into concept words, without
// allocating; a view is built only when one counts minGameWords.
func appendWordGames(norm []byte, n0 int, lex *lexicon) ([]byte, bool) {
	if n0 > maxGameText || n0 < 12 {
		return norm, false
	}
	text := norm[:n0]
	pigs, scrambles := 0, 0
	pigLatin := countAy(text) >= minGameWords
	forWords(text, func(w []byte) {
		if pigLatin {
			if _, ok := unPig(w, lex); ok {
				pigs++
			}
		}
		if _, ok := unScramble(w, lex); ok {
			scrambles++
		}
	})
	found := false
	if pigs >= minGameWords {
		norm = append(norm, '\n')
		forWords(norm[:n0], func(w []byte) {
			if c, ok := unPig(w, lex); ok {
				norm = append(norm, c...)
			} else {
				norm = append(norm, w...)
			}
			norm = append(norm, ' ')
		})
		found = true
	}
	if scrambles >= minGameWords {
		norm = append(norm, '\n')
		forWords(norm[:n0], func(w []byte) {
			if c, ok := unScramble(w, lex); ok {
				norm = append(norm, c...)
			} else {
				norm = append(norm, w...)
			}
			norm = append(norm, ' ')
		})
		found = true
	}
	return norm, found
}

// countAy counts the words ending in "ay".
func countAy(text []byte) int {
	n := 0
	for i := 2; i <= len(text); i++ {
		if text[i-2] == 'a' && text[i-1] == 'y' && (i == len(text) || !isLetter(text[i])) {
			n++
		}
	}
	return n
}

func isLetter(c byte) bool { return c >= 'a' && c <= 'z' }

// forWords calls f with each run of lower-case ASCII letters of text.
func forWords(text []byte, f func(w []byte)) {
	for i := 0; i < len(text); {
		if !isLetter(text[i]) {
			i++
			continue
		}
		j := i
		for j < len(text) && isLetter(text[j]) {
			j++
		}
		f(text[i:j])
		i = j
	}
}

// unPig undoes pig latin for one word: the concept word it stands for.
func unPig(w []byte, lex *lexicon) (string, bool) {
	if len(w) < 4 || w[len(w)-2] != 'a' || w[len(w)-1] != 'y' {
		return "", false
	}
	base := w[:len(w)-2]
	if base[len(base)-1] == 'w' && isVowel(base[0]) && lex.lookup(wordHash(base[:len(base)-1])) != 0 {
		return string(base[:len(base)-1]), true
	}
	var buf [32]byte
	for l := 1; l <= 3 && l < len(base) && len(base) <= len(buf); l++ {
		if isVowel(base[len(base)-l]) {
			break
		}
		c := append(append(buf[:0], base[len(base)-l:]...), base[:len(base)-l]...)
		if lex.lookup(wordHash(c)) != 0 {
			return string(c), true
		}
	}
	return "", false
}

// unScramble finds the concept word whose letters a word not itself in
// the lexicon has, first and last in place.
func unScramble(w []byte, lex *lexicon) (string, bool) {
	if len(w) < 4 || len(w) > 16 || scrambleShapes()[w[0]-'a'][w[len(w)-1]-'a']&(1<<len(w)) == 0 || lex.lookup(wordHash(w)) != 0 {
		return "", false
	}
	var buf [16]byte
	k := append(buf[:0], w...)
	slices.Sort(k[1 : len(k)-1])
	c, ok := scrambleIndex()[string(k)]
	return c, ok
}
