package providertest

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// PoolKeys are the two keys of the pool a KeyPoolServer's provider is
// given, as one setting ("key-one,key-two").
var PoolKeys = [2]string{"pool-key-one", "pool-key-two"}

// PoolSetting is PoolKeys as a provider's key setting.
var PoolSetting = PoolKeys[0] + "," + PoolKeys[1]

// KeyPoolServer is a vendor stand-in that notes the key each call
// carried (in the vendor's header) by the kind of call, and fails the
// test when a call carries anything but exactly one key of the pool
// (the whole setting, say).
type KeyPoolServer struct {
	*httptest.Server
	t      *testing.T
	header string // the vendor's key header ("Authorization" takes a Bearer)
	mu     sync.Mutex
	seen   map[string]map[string]int // kind -> key -> calls
}

// NewKeyPoolServer starts a KeyPoolServer; kind names the kind of a call
// ("chat", "count", "probe", ...) and answer writes its answer.
func NewKeyPoolServer(t *testing.T, header string, kind func(*http.Request) string, answer func(http.ResponseWriter, *http.Request)) *KeyPoolServer {
	s := &KeyPoolServer{t: t, header: header, seen: map[string]map[string]int{}}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		key := r.Header.Get(header)
		if strings.EqualFold(header, "Authorization") {
			key = strings.TrimPrefix(key, "Bearer ")
		}
		if key != PoolKeys[0] && key != PoolKeys[1] {
			t.Errorf("%s %s carried %s %q, not one key of the pool", r.Method, r.URL.Path, header, key)
		}
		s.mu.Lock()
		k := kind(r)
		if s.seen[k] == nil {
			s.seen[k] = map[string]int{}
		}
		s.seen[k][key]++
		s.mu.Unlock()
		answer(w, r)
	}))
	t.Cleanup(s.Close)
	return s
}

// Used fails the test unless calls of kind were made, and, when both
// is set, unless they used both keys of the pool.
func (s *KeyPoolServer) Used(kind string, both bool) {
	s.t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	m := s.seen[kind]
	if len(m) == 0 {
		s.t.Errorf("no %s call reached the vendor", kind)
		return
	}
	if both && (m[PoolKeys[0]] == 0 || m[PoolKeys[1]] == 0) {
		s.t.Errorf("%s calls used the keys %v, want both keys of the pool", kind, m)
	}
}
