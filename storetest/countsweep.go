package storetest

import (
	"strings"
	"testing"
	"time"

	"github.com/gwlabs/gateway/optimize"
	"github.com/gwlabs/gateway/ratecard"
)

// CountSweepStore is a store the optimizer keeps its counts in and
// sweeps.
type CountSweepStore interface {
	optimize.CountStore
	optimize.SweepStore
}

// RunCountSweep checks the sweep of the optimizer's kept counts: of 60
// spellings of one model (left by versions that kept a count under the
// caller's spelling), an older directive's count and a count older than
// a day, only the rate card id's current count remains, and documents
// that are not counts are untouched.
func RunCountSweep(t *testing.T, open func(t *testing.T) CountSweepStore) {
	s := open(t)
	ctx := t.Context()
	now := time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)
	const id = "llama-3.3-70b-versatile"
	o := optimize.New(optimize.Config{
		Store: s,
		Now:   func() time.Time { return now },
		Canonical: func(vendor, model string) (string, bool) {
			if vendor == "groq" && strings.EqualFold(model, id) {
				return id, true
			}
			return "", false
		},
	})
	set := func(name string, at time.Time) {
		t.Helper()
		if err := s.SetDocument(ctx, name, []byte(`{"system":40}`), at); err != nil {
			t.Fatalf("set %s: %v", name, err)
		}
	}
	keep := optimize.CountDocument("groq", id)
	set(keep, now.Add(-time.Hour))
	variants := map[string]bool{}
	for i := 0; len(variants) < 60; i++ {
		b := []byte(id)
		for j := range b {
			if i>>(j%20)&1 == 1 && b[j] >= 'a' && b[j] <= 'z' {
				b[j] -= 'a' - 'A'
			}
		}
		if string(b) != id && !variants[string(b)] {
			variants[string(b)] = true
			set(optimize.CountDocument("groq", string(b)), now.Add(-time.Hour))
		}
	}
	set(optimize.CountDocument("groq", "not-on-the-card"), now.Add(-time.Hour))
	set(optimize.CountDocument("openai", id), now.Add(-time.Hour))
	set(strings.Replace(keep, "optimizer_count/v", "optimizer_count/v0", 1), now.Add(-time.Hour))
	set(ratecard.OpenRouterDocument, now.Add(-30*24*time.Hour))

	n, err := o.SweepCounts(ctx)
	if err != nil {
		t.Fatalf("sweep: %v", err)
	}
	if want := 60 + 3; n != want {
		t.Errorf("swept %d counts, want %d", n, want)
	}
	if _, _, ok, err := s.Document(ctx, keep); err != nil || !ok {
		t.Errorf("the rate card id's count was swept: ok %v, err %v", ok, err)
	}
	for v := range variants {
		if _, _, ok, _ := s.Document(ctx, optimize.CountDocument("groq", v)); ok {
			t.Fatalf("the count kept under %q survived the sweep", v)
		}
	}
	if _, _, ok, _ := s.Document(ctx, ratecard.OpenRouterDocument); !ok {
		t.Errorf("a document that is not a count was swept")
	}
	if n, err := o.SweepCounts(ctx); err != nil || n != 0 {
		t.Errorf("a second sweep deleted %d (err %v), want 0", n, err)
	}

	// A day on, the canonical count is stale and swept too.
	now = now.Add(24 * time.Hour)
	if n, err := o.SweepCounts(ctx); err != nil || n != 1 {
		t.Errorf("a day later the sweep deleted %d (err %v), want the 1 stale count", n, err)
	}
	if _, _, ok, _ := s.Document(ctx, keep); ok {
		t.Errorf("a count older than a day survived the sweep")
	}
}
