// Package id mints the gateway's identifiers: a prefix ("req_", "inc_")
// and 26 characters of a time-ordered random id in the ULID layout
// (48 bits of Unix milliseconds, then 80 random bits, in Crockford base32),
// so ids sort by creation time and never repeat in practice.
package id

import (
	"crypto/rand"
	"encoding/binary"
	"time"
)

const crockford = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"

// New returns prefix + a 26-character time-ordered id for time now.
func New(prefix string, now time.Time) string {
	var b [16]byte
	binary.BigEndian.PutUint64(b[0:8], uint64(now.UnixMilli())<<16)
	_, _ = rand.Read(b[6:])
	// 128 bits -> 26 base32 digits (130 bits, the top two zero).
	out := make([]byte, len(prefix)+26)
	copy(out, prefix)
	hi := binary.BigEndian.Uint64(b[0:8])
	lo := binary.BigEndian.Uint64(b[8:16])
	for i := 25; i >= 0; i-- {
		out[len(prefix)+i] = crockford[lo&31]
		lo = lo>>5 | hi<<59
		hi >>= 5
	}
	return string(out)
}

// Random returns the random part of an id minted by New (what follows
// the prefix's underscore).
func Random(full string) string {
	for i := 0; i < len(full); i++ {
		if full[i] == '_' {
			return full[i+1:]
		}
	}
	return full
}
