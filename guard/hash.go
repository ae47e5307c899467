package guard

import (
	"bytes"
	"crypto/sha256"
)

// TextHash is the SHA-256 of a text's normalised form (folded as the
// guard reads it, whitespace runs collapsed, ends trimmed): the key of an
// account's allow list, so that a reviewed false positive passes again
// whatever its case, spacing or look-alike characters.
func TextHash(text string) [32]byte {
	n := bytes.TrimSpace(normalize(nil, text))
	return sha256.Sum256(n)
}
