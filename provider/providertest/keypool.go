package providertest

import (
	"context"
	"io"
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

// KeyPoolCall is one kind of call a vendor's provider makes, as a
// KeyPoolCase lists it.
type KeyPoolCall struct {
	Kind string // as KeyPoolCase.Kind names it
	Do   func(ctx context.Context) error
}

// KeyPoolCase is one vendor's key pool check, run by RunKeyPool.
type KeyPoolCase struct {
	Header  string                     // the vendor's key header
	Kind    func(*http.Request) string // a call's kind; the gateway's own probe is "probe"
	Refusal string                     // the vendor's 401 body
	Answer  string                     // the JSON body of every other answer
	// Start builds the provider with PoolSetting on the stand-in's URL
	// and returns every kind of call it makes, and a call whose body
	// holds "refuse" (which the stand-in answers with 401).
	Start func(t *testing.T, baseURL string) (calls []KeyPoolCall, refused func(context.Context) error)
}

// RunKeyPool checks that with a two-key pool every kind of call c lists
// carries one key of the pool, spread over both, and that a refused key
// has the gateway's own probe check it.
func RunKeyPool(t *testing.T, c KeyPoolCase) {
	t.Helper()
	srv := NewKeyPoolServer(t, c.Header, c.Kind, func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if strings.Contains(string(body), "refuse") {
			w.WriteHeader(http.StatusUnauthorized)
			w.Write([]byte(c.Refusal))
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(c.Answer))
	})
	calls, refused := c.Start(t, srv.URL)
	ctx := context.Background()
	for i := 0; i < 40; i++ {
		for _, call := range calls {
			if err := call.Do(ctx); err != nil {
				t.Fatalf("%s call %d: %v", call.Kind, i, err)
			}
		}
	}
	if err := refused(ctx); err == nil {
		t.Fatal("a refused call answered")
	}
	for _, call := range calls {
		srv.Used(call.Kind, true)
	}
	srv.Used("probe", false)
}
