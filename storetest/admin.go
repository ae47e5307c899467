package storetest

import (
	"context"
	"errors"
	"testing"
	"time"

	gw "github.com/gwlabs/gateway"
)

// AdminStore is what the admin API needs beyond gw.Store.
type AdminStore interface {
	Accounts(ctx context.Context) ([]gw.Account, error)
	AccountByID(ctx context.Context, id string) (*gw.Account, error)
	EndKeyAt(ctx context.Context, id string, at time.Time) error
	TopUpRef(ctx context.Context, accountID string, amount gw.Money, reference, note string) (gw.LedgerEntry, bool, error)
	Ledger(ctx context.Context, accountID string, before int64, limit int) ([]gw.LedgerEntry, error)
	KeyUsage(ctx context.Context) (map[string]gw.KeyUsage, error)
	SetKeyOptimize(ctx context.Context, id string, off bool) error
	SetKeyModels(ctx context.Context, id string, models []string) error
}

func testAdmin(t *testing.T, s gw.Store) {
	as, ok := s.(AdminStore)
	if !ok {
		t.Fatalf("%T lacks the admin methods", s)
	}
	ctx := t.Context()
	a := account(t, s, "admin-a", 0)
	account(t, s, "admin-0", 0)
	list, err := as.Accounts(ctx)
	if err != nil || len(list) != 2 || list[0].Name != "admin-0" || list[1].ID != a.ID {
		t.Fatalf("Accounts = %+v, %v", list, err)
	}
	if got, err := as.AccountByID(ctx, a.ID); err != nil || got.Name != "admin-a" {
		t.Fatalf("AccountByID = %+v, %v", got, err)
	}
	if _, err := as.AccountByID(ctx, "acct_none"); !errors.Is(err, gw.ErrNotFound) {
		t.Fatalf("AccountByID(unknown) = %v", err)
	}

	// A reference counts once; entries page newest first.
	e1, dup, err := as.TopUpRef(ctx, a.ID, 500, "inv-1", "first")
	if err != nil || dup || e1.Amount != 500 || e1.Reference != "inv-1" {
		t.Fatalf("TopUpRef = %+v, %v, %v", e1, dup, err)
	}
	again, dup, err := as.TopUpRef(ctx, a.ID, 500, "inv-1", "retry")
	if err != nil || !dup || again.ID != e1.ID || again.Note != "first" {
		t.Fatalf("TopUpRef retry = %+v, %v, %v", again, dup, err)
	}
	if _, _, err := as.TopUpRef(ctx, a.ID, 700, "", "no reference"); err != nil {
		t.Fatal(err)
	}
	if _, _, err := as.TopUpRef(ctx, a.ID, 900, "", "no reference either"); err != nil {
		t.Fatal(err)
	}
	if _, _, err := as.TopUpRef(ctx, "acct_none", 1, "x", ""); !errors.Is(err, gw.ErrNotFound) {
		t.Fatalf("TopUpRef(unknown account) = %v", err)
	}
	if b, err := s.Balance(ctx, a.ID); err != nil || b.TopUps != 2100 || b.Balance != 2100 {
		t.Fatalf("balance after top-ups = %+v, %v", b, err)
	}
	page, err := as.Ledger(ctx, a.ID, 0, 2)
	if err != nil || len(page) != 2 || page[0].Amount != 900 || page[1].Amount != 700 {
		t.Fatalf("Ledger page 1 = %+v, %v", page, err)
	}
	rest, err := as.Ledger(ctx, a.ID, page[1].ID, 10)
	if err != nil || len(rest) != 1 || rest[0].ID != e1.ID {
		t.Fatalf("Ledger page 2 = %+v, %v", rest, err)
	}

	// A scheduled end: the key works until then; revoking brings it
	// forward; an earlier end is never pushed back.
	k := &gw.Key{ID: "key_admin", AccountID: a.ID, Hint: "gwk_ad…", Name: "ci"}
	if err := s.CreateKey(ctx, k, hash("admin-secret")); err != nil {
		t.Fatal(err)
	}
	if err := as.EndKeyAt(ctx, k.ID, time.Now().Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if _, err := s.KeyByHash(ctx, hash("admin-secret")); err != nil {
		t.Fatalf("a key ending in an hour stopped working: %v", err)
	}
	keys, _ := s.Keys(ctx)
	if len(keys) != 1 || keys[0].Name != "ci" || keys[0].RevokedAt == nil || !keys[0].Live(time.Now()) {
		t.Fatalf("Keys = %+v", keys)
	}
	if err := as.EndKeyAt(ctx, k.ID, time.Now().Add(2*time.Hour)); err != nil {
		t.Fatal(err)
	}
	if keys, _ := s.Keys(ctx); keys[0].RevokedAt.After(time.Now().Add(90 * time.Minute)) {
		t.Fatal("EndKeyAt pushed an end back")
	}
	if err := s.RevokeKey(ctx, k.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := s.KeyByHash(ctx, hash("admin-secret")); !errors.Is(err, gw.ErrNotFound) {
		t.Fatalf("revoking a key with a scheduled end left it working: %v", err)
	}
	if err := as.EndKeyAt(ctx, "key_none", time.Now()); !errors.Is(err, gw.ErrNotFound) {
		t.Fatalf("EndKeyAt(unknown) = %v", err)
	}

	// A model allow list: stored, read back by Keys and KeyByHash, cleared.
	k2 := &gw.Key{ID: "key_models", AccountID: a.ID, Hint: "gwk_mo…", Models: []string{"openai/*"}}
	if err := s.CreateKey(ctx, k2, hash("models-secret")); err != nil {
		t.Fatal(err)
	}
	if p, err := s.KeyByHash(ctx, hash("models-secret")); err != nil || len(p.Models) != 1 || p.Models[0] != "openai/*" {
		t.Fatalf("KeyByHash models = %+v, %v", p, err)
	}
	if err := as.SetKeyModels(ctx, k2.ID, []string{"anthropic/claude-*", "groq/llama-3"}); err != nil {
		t.Fatal(err)
	}
	for _, k := range mustKeys(t, s) {
		if k.ID == k2.ID && (len(k.Models) != 2 || k.Models[1] != "groq/llama-3") {
			t.Fatalf("Keys models = %v", k.Models)
		}
	}
	if err := as.SetKeyModels(ctx, k2.ID, nil); err != nil {
		t.Fatal(err)
	}
	if p, err := s.KeyByHash(ctx, hash("models-secret")); err != nil || p.Models != nil {
		t.Fatalf("cleared models = %+v, %v", p, err)
	}
	if err := as.SetKeyModels(ctx, "key_none", nil); !errors.Is(err, gw.ErrNotFound) {
		t.Fatalf("SetKeyModels(unknown) = %v", err)
	}

	// Usage per key from the records.
	r := record("req_admin_1", a.ID, 0, time.Now().Add(-time.Minute))
	r.KeyID = "key_admin"
	if err := s.Log(ctx, r); err != nil {
		t.Fatal(err)
	}
	u, err := as.KeyUsage(ctx)
	if err != nil || u["key_admin"].Requests != 1 || u["key_admin"].LastUsed.IsZero() {
		t.Fatalf("KeyUsage = %+v, %v", u, err)
	}
}

func mustKeys(t *testing.T, s gw.Store) []gw.Key {
	t.Helper()
	keys, err := s.Keys(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return keys
}

// generationStore is a store that counts changes to keys and guard
// policies, for the key caches of running instances.
type generationStore interface {
	AdminStore
	gw.GuardStore
	KeyGeneration(ctx context.Context) (int64, error)
}

// testKeyGeneration: every change to a key (revocation, end, allow list,
// optimization switch) or to a guard policy moves the generation;
// reading does not; a key with an end reports it in its principal.
func testKeyGeneration(t *testing.T, s gw.Store) {
	gs, ok := s.(generationStore)
	if !ok {
		t.Fatalf("%T does not count key changes", s)
	}
	ctx := t.Context()
	a := account(t, s, "gen", 0)
	k := &gw.Key{ID: "key_gen", AccountID: a.ID, Hint: "gwk_Gen…", CreatedAt: time.Now().UTC()}
	if err := s.CreateKey(ctx, k, hash("gen-secret")); err != nil {
		t.Fatal(err)
	}
	gen := func() int64 {
		t.Helper()
		g, err := gs.KeyGeneration(ctx)
		if err != nil {
			t.Fatalf("KeyGeneration: %v", err)
		}
		return g
	}
	last := gen()
	if _, err := s.KeyByHash(ctx, hash("gen-secret")); err != nil {
		t.Fatal(err)
	}
	if g := gen(); g != last {
		t.Fatalf("a read moved the generation: %d -> %d", last, g)
	}
	end := time.Now().Add(time.Hour).Truncate(time.Microsecond)
	for _, c := range []struct {
		name   string
		change func() error
	}{
		{"SetKeyModels", func() error { return gs.SetKeyModels(ctx, k.ID, []string{"openai/*"}) }},
		{"SetKeyOptimize", func() error { return gs.SetKeyOptimize(ctx, k.ID, true) }},
		{"SetGuardPolicy(key)", func() error { return gs.SetGuardPolicy(ctx, "key", k.ID, gw.GuardPolicy{Mode: gw.GuardMonitor}) }},
		{"SetGuardPolicy(account)", func() error { return gs.SetGuardPolicy(ctx, "account", a.ID, gw.GuardPolicy{Mode: gw.GuardOff}) }},
		{"EndKeyAt", func() error { return gs.EndKeyAt(ctx, k.ID, end) }},
		{"RevokeKey", func() error { return s.RevokeKey(ctx, k.ID) }},
	} {
		if err := c.change(); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		g := gen()
		if g == last {
			t.Errorf("%s did not move the generation", c.name)
		}
		last = g
		if c.name == "EndKeyAt" {
			p, err := s.KeyByHash(ctx, hash("gen-secret"))
			if err != nil || !p.EndsAt.Equal(end) {
				t.Errorf("a key ending at %v: principal %+v, %v", end, p, err)
			}
		}
	}
}
