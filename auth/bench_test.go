package auth

import (
	"testing"
	"time"
)

// BenchmarkAuthenticate is a request's key check through the cache, a
// hit (the common case): parsing the header, hashing the key, the cached
// lookup.
func BenchmarkAuthenticate(b *testing.B) {
	secret, _, h, err := NewKey()
	if err != nil {
		b.Fatal(err)
	}
	store, _ := newFake()
	store.keys[h] = store.keys[Hash("gwk_one")]
	for _, c := range []struct {
		name string
		keys KeyLookup
	}{{"cached", NewCache(store, time.Hour)}} {
		b.Run(c.name, func(b *testing.B) {
			a := &Authenticator{Keys: c.keys}
			header := "Bearer " + secret // as the request's header: no concatenation per call
			b.ReportAllocs()
			for b.Loop() {
				if _, err := a.Authenticate(b.Context(), header); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
