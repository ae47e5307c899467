package guard

// Fold maps a rune to the ASCII letter or digit it imitates (look-alike
// letters, fullwidth, mathematical and enclosed forms, letters with
// diacritics), or returns it lowercased; -1 for runes that hide text
// (zero-width, formatting), -2 for combining marks. The answer-side
// check (guard/leak) folds with it, so both sides of the guard read a
// look-alike letter the same way.
func Fold(r rune) rune { return foldRune(r) }
