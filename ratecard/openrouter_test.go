package ratecard

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"
)

const listJSON = `{"data":[{"id":"acme/model-1","context_length":8192,"pricing":{"prompt":"0.000001","completion":"0.000002"}}]}`

// memDocs is a ListStore in memory.
type memDocs struct {
	mu   sync.Mutex
	body []byte
	at   time.Time
	sets int
}

func (m *memDocs) Document(_ context.Context, name string) ([]byte, time.Time, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if name != OpenRouterDocument || m.body == nil {
		return nil, time.Time{}, false, nil
	}
	return m.body, m.at, true, nil
}

func (m *memDocs) SetDocument(_ context.Context, name string, body []byte, at time.Time) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.body, m.at, m.sets = append([]byte(nil), body...), at, m.sets+1
	return nil
}

// Issue 38 item 2: a failed read is retried (not left for the 6-hour
// interval) until one succeeds; the good list is kept in the store.
func TestRefreshRetriesUntilLoaded(t *testing.T) {
	var mu sync.Mutex
	calls := 0
	loaded := make(chan *OpenRouterList, 1)
	store := &memDocs{}
	p := &OpenRouterPrices{}
	p.Refresh(context.Background(), RefreshOptions{
		Fetch: func(context.Context) (*OpenRouterList, error) {
			mu.Lock()
			defer mu.Unlock()
			calls++
			if calls <= 4 {
				return nil, errors.New("connection refused")
			}
			return ParseOpenRouter(strings.NewReader(listJSON), time.Now())
		},
		Interval: time.Hour, RetryMin: time.Millisecond, RetryMax: 4 * time.Millisecond,
		Store:  store,
		OnLoad: func(l *OpenRouterList) { loaded <- l },
	})
	defer p.Stop()
	if p.List() != nil {
		t.Fatal("a list in use before any read succeeded")
	}
	var l *OpenRouterList
	select {
	case l = <-loaded:
	case <-time.After(30 * time.Second):
		t.Fatal("no list loaded in 30 s of retries")
	}
	if _, ok := l.Lookup("acme/model-1"); !ok || l.FromStore || p.List() != l {
		t.Fatalf("loaded %+v", l)
	}
	mu.Lock()
	n := calls
	mu.Unlock()
	if n != 5 {
		t.Errorf("%d reads, want 4 failed and 1 good", n)
	}
	// OnLoad runs before the good read is kept: stopping the refresher
	// waits for the keeping.
	p.Stop()
	store.mu.Lock()
	defer store.mu.Unlock()
	if store.sets != 1 || string(store.body) != listJSON || !store.at.Equal(l.Fetched) {
		t.Errorf("kept %d times: %q at %v", store.sets, store.body, store.at)
	}
}

// Issue 38 item 2: with the vendor unreachable the store's copy is in
// use from the start, marked as such; past a day old it is reported
// once, however often the read is retried.
func TestRefreshStartsFromStoredCopy(t *testing.T) {
	kept := time.Date(2026, 11, 25, 6, 0, 0, 0, time.UTC)
	store := &memDocs{body: []byte(listJSON), at: kept}
	now := kept.Add(50 * time.Hour)
	var mu sync.Mutex
	stale, fails := 0, 0
	p := &OpenRouterPrices{}
	p.Refresh(context.Background(), RefreshOptions{
		Fetch:    func(context.Context) (*OpenRouterList, error) { return nil, errors.New("unreachable") },
		Interval: time.Hour, RetryMin: time.Millisecond, RetryMax: time.Millisecond,
		Store: store,
		Now:   func() time.Time { return now },
		OnErr: func(error) { mu.Lock(); fails++; mu.Unlock() },
		OnStale: func(l *OpenRouterList, age time.Duration) {
			mu.Lock()
			defer mu.Unlock()
			stale++
			if age != 50*time.Hour || !l.FromStore {
				t.Errorf("stale report: %v, from store %v", age, l.FromStore)
			}
		},
	})
	l := p.List()
	if l == nil || !l.FromStore || !l.Fetched.Equal(kept) {
		t.Fatalf("in use at start: %+v", l)
	}
	if _, ok := l.Lookup("acme/model-1"); !ok {
		t.Fatal("the kept copy prices nothing")
	}
	for start := time.Now(); ; time.Sleep(time.Millisecond) {
		mu.Lock()
		n := fails
		mu.Unlock()
		if n >= 5 {
			break
		}
		if time.Since(start) > 30*time.Second {
			t.Fatalf("%d failed reads in 30 s; want retries", n)
		}
	}
	if err := p.Stop(); err != nil {
		t.Fatal(err)
	}
	if stale != 1 {
		t.Errorf("a stale list reported %d times over %d failed reads, want once", stale, fails)
	}
}

// A read that prices no model does not replace the list in use.
func TestRefreshKeepsListOverEmptyAnswer(t *testing.T) {
	store := &memDocs{body: []byte(listJSON), at: time.Now()}
	errs := make(chan error, 10)
	p := &OpenRouterPrices{}
	p.Refresh(context.Background(), RefreshOptions{
		Fetch: func(context.Context) (*OpenRouterList, error) {
			return ParseOpenRouter(strings.NewReader(`{"data":[]}`), time.Now())
		},
		Interval: time.Hour, RetryMin: time.Hour, Store: store,
		OnErr: func(err error) { errs <- err },
	})
	defer p.Stop()
	if err := <-errs; !strings.Contains(err.Error(), "prices no model") {
		t.Errorf("err %v", err)
	}
	if l := p.List(); l == nil || !l.FromStore || l.Len() != 1 {
		t.Errorf("in use: %+v", l)
	}
}
