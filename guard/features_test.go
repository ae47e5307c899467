package guard

import "testing"

// Vowel signs and other combining marks belong to the word they sit in:
// a Hindi or Bengali word is one token, not a run of fragments cut at
// every vowel sign.
func TestMarksStayInWords(t *testing.T) {
	lex := newLexicon()
	for _, c := range []struct {
		text   string
		tokens int
	}{
		{"किताबें", 1},
		{"पिछले निर्देशों को", 3},
		{"আগের নির্দেশনা", 2},
		{"café crème", 2},
		{"cafe\u0301 cre\u0300me", 2}, // combining accents
	} {
		sc := &scratch{}
		extract(sc, lex, c.text)
		if len(sc.tokens) != c.tokens {
			t.Errorf("%q: %d tokens, want %d", c.text, len(sc.tokens), c.tokens)
		}
	}
}
