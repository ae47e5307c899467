package storetest

import (
	"bytes"
	"testing"
	"time"

	"github.com/gwlabs/gateway/ratecard"
)

// RunDocuments checks a store's kept documents (ratecard.ListStore: the
// last good OpenRouter price list): none at first, then the last one set
// under a name, with its time, apart from other names. open returns a
// fresh, empty store.
func RunDocuments(t *testing.T, open func(t *testing.T) ratecard.ListStore) {
	s := open(t)
	ctx := t.Context()
	if _, _, ok, err := s.Document(ctx, ratecard.OpenRouterDocument); err != nil || ok {
		t.Fatalf("a fresh store has a document: ok %v, err %v", ok, err)
	}
	t1 := time.Date(2026, 11, 27, 10, 0, 0, 123000, time.UTC)
	t2 := t1.Add(6 * time.Hour)
	first, second := []byte(`{"data":[1]}`), bytes.Repeat([]byte{0, 0xff, 'x'}, 100_000) // binary and large
	for _, step := range []struct {
		name string
		body []byte
		at   time.Time
	}{{ratecard.OpenRouterDocument, first, t1}, {"other", []byte("o"), t1}, {ratecard.OpenRouterDocument, second, t2}} {
		if err := s.SetDocument(ctx, step.name, step.body, step.at); err != nil {
			t.Fatalf("set %s: %v", step.name, err)
		}
	}
	body, at, ok, err := s.Document(ctx, ratecard.OpenRouterDocument)
	if err != nil || !ok || !bytes.Equal(body, second) || !at.Equal(t2) {
		t.Errorf("document: %d bytes at %v, ok %v, err %v; want the last one set (%d bytes at %v)", len(body), at, ok, err, len(second), t2)
	}
	if body, _, ok, err := s.Document(ctx, "other"); err != nil || !ok || string(body) != "o" {
		t.Errorf("another name's document: %q %v %v", body, ok, err)
	}
}
