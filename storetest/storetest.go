// Package storetest is the suite every gw.Store implementation passes, in
// the manner of testing/slogtest: an implementation's own test calls Run
// with a function that opens a fresh, empty store, and the suite checks the
// Store contract on it: accounts and keys, the balance identity, holds,
// exactly-once settlement, expiry, money under concurrency, group commit,
// records and incidents. BenchmarkSettle measures the hot path.
package storetest

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"reflect"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	gw "github.com/gwlabs/gateway"
	"github.com/gwlabs/gateway/internal/groupcommit"
)

// LedgerVerifier is implemented by stores that can recompute an account's
// money from its ledger entries. VerifyLedger returns an error when the
// ledger disagrees with the account's stored top-ups, charges or balance.
// The suite calls it after every test that moves money, and fails when the
// store does not implement it.
type LedgerVerifier interface {
	VerifyLedger(ctx context.Context, accountID string) error
}

// Run runs the suite. Each subtest calls open for a fresh, empty store;
// open must register the store's teardown with t.Cleanup (Close must be
// idempotent: one subtest closes its store itself).
func Run(t *testing.T, open func(t *testing.T) gw.Store) {
	tests := []struct {
		name string
		run  func(t *testing.T, s gw.Store)
	}{
		{"EnsureAccountCreatesOnceAndFindsByName", testEnsureAccount},
		{"KeysLifecycleAndRevocation", testKeys},
		{"TopUpKeepsBalanceIdentity", testTopUp},
		{"PlaceHoldChecksAvailableBalance", testPlaceHold},
		{"SettleChargesExactlyOnce", testSettle},
		{"ReleaseFreesExactlyOnce", testRelease},
		{"SettleAboveHoldRecordsRealCharge", testSettleAboveHold},
		{"SettleBoundedByAvailable", testSettleBoundedByAvailable},
		{"RenewHoldKeepsItAlive", testRenewHold},
		{"NeverBelowZero", testNeverBelowZero},
		{"IncidentsOfAccountIndexed", testIncidentsOfAccount},
		{"ExpiredHoldsDoNotCountAndAreSwept", testExpiredHolds},
		{"CutRecordNamesModel", testCutRecordNamesModel},
		{"HeldIsOpenUnexpiredHolds", testHeldIsOpenUnexpiredHolds},
		{"ConcurrentHoldsNeverOvercommit", testConcurrentHolds},
		{"ConcurrentTrafficNeverGoesNegative", testConcurrentTraffic},
		{"GroupCommitIsolatesFailures", testGroupCommit},
		{"RecordsFilterAndOrder", testRecords},
		{"IncidentsNewestFirst", testIncidents},
		{"SpendSumsChargesSince", testSpend},
		{"BudgetHoldsSettlesAndRollover", testBudgetTable},
		{"BudgetOfAccountBoundsItsKeys", testAccountBudget},
		{"BudgetSettingsReachPrincipal", testBudgetSettings},
		{"ConcurrentRequestsNeverPassBudget", testConcurrentBudget},
		{"BudgetNeverPassedUnderRandomInterleavings", testBudgetProperty},
		{"AdminAccountsLedgerAndKeyEnds", testAdmin},
		{"KeyGenerationMovesOnEveryKeyChange", testKeyGeneration},
		{"ClosedStoreRefusesCalls", testClosed},
		{"MCPGrantsPerKeyAndAccount", testMCPGrants},
		{"RecordsByEndpoint", testRecordsByEndpoint},
		{"MCPServersAddReplaceRemove", testMCPServers},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tt.run(t, open(t))
		})
	}
}

// hash is a key's stored hash in the tests.
func hash(secret string) [32]byte { return sha256.Sum256([]byte(secret)) }

// account creates an account with the given top-up.
func account(t *testing.T, s gw.Store, name string, topUp gw.Money) *gw.Account {
	t.Helper()
	a, err := s.EnsureAccount(t.Context(), name)
	if err != nil {
		t.Fatalf("EnsureAccount(%q): %v", name, err)
	}
	if topUp > 0 {
		if err := s.TopUp(t.Context(), a.ID, topUp, "test top-up"); err != nil {
			t.Fatalf("TopUp: %v", err)
		}
	}
	return a
}

func balance(t *testing.T, s gw.Store, accountID string) gw.Balance {
	t.Helper()
	b, err := s.Balance(t.Context(), accountID)
	if err != nil {
		t.Fatalf("Balance: %v", err)
	}
	if b.Balance != b.TopUps-b.Charged {
		t.Errorf("Balance %d != TopUps %d - Charged %d", b.Balance, b.TopUps, b.Charged)
	}
	if b.Available != b.Balance-b.Held {
		t.Errorf("Available %d != Balance %d - Held %d", b.Available, b.Balance, b.Held)
	}
	return b
}

// wantBalance checks an account's money and its ledger.
func wantBalance(t *testing.T, s gw.Store, accountID string, want gw.Balance) {
	t.Helper()
	if got := balance(t, s, accountID); got != want {
		t.Errorf("Balance = %+v, want %+v", got, want)
	}
	verifyLedger(t, s, accountID)
}

func verifyLedger(t *testing.T, s gw.Store, accountID string) {
	t.Helper()
	v, ok := s.(LedgerVerifier)
	if !ok {
		t.Errorf("%T does not implement storetest.LedgerVerifier", s)
		return
	}
	if err := v.VerifyLedger(t.Context(), accountID); err != nil {
		t.Errorf("VerifyLedger: %v", err)
	}
}

func hold(id, accountID string, amount gw.Money) gw.Hold {
	return gw.Hold{ID: id, AccountID: accountID, KeyID: "key_1", Amount: amount, ExpiresAt: time.Now().Add(time.Hour)}
}

func wantNotFound(t *testing.T, what string, err error) {
	t.Helper()
	if !errors.Is(err, gw.ErrNotFound) {
		t.Errorf("%s: err = %v, want ErrNotFound", what, err)
	}
}

func wantInsufficient(t *testing.T, what string, err error) {
	t.Helper()
	var e *gw.Error
	if !errors.As(err, &e) || e.Code != gw.CodeInsufficientBalance {
		t.Errorf("%s: err = %v, want *gw.Error with %s", what, err, gw.CodeInsufficientBalance)
	}
}

// record returns a record with every field set, at a microsecond time.
func record(id, accountID string, charge gw.Money, at time.Time) *gw.Record {
	return &gw.Record{
		RequestID: id,
		AccountID: accountID,
		KeyID:     "key_1",
		Endpoint:  gw.ShapeM,
		Vendor:    "anthropic",
		Model:     "claude-x",
		Stream:    true,
		Status:    200,
		Usage: gw.Usage{
			InputTokens: 11, CacheReadTokens: 12, CacheWrite5mTokens: 13, CacheWrite1hTokens: 14,
			OutputTokens: 15, ReasoningTokens: 6, OptimizerTokens: 7,
			Reported: true, ReportedCost: 1234, HasReportedCost: true,
		},
		Cost:      charge * 100 / 109,
		Charge:    charge,
		Latency:   1500 * time.Millisecond,
		TTFB:      250 * time.Microsecond,
		Guard:     "pass",
		Note:      "usage_missing",
		CreatedAt: at.Truncate(time.Microsecond).UTC(),
	}
}

func wantRecord(t *testing.T, s gw.Store, want *gw.Record) {
	t.Helper()
	got, err := s.Record(t.Context(), want.RequestID)
	if err != nil {
		t.Errorf("Record(%q): %v", want.RequestID, err)
		return
	}
	w := *want
	w.CreatedAt = w.CreatedAt.Truncate(time.Microsecond).UTC()
	if !reflect.DeepEqual(*got, w) {
		t.Errorf("Record(%q) =\n%+v\nwant\n%+v", want.RequestID, *got, w)
	}
}

func testEnsureAccount(t *testing.T, s gw.Store) {
	ctx := t.Context()
	a, err := s.EnsureAccount(ctx, "acme")
	if err != nil {
		t.Fatalf("EnsureAccount: %v", err)
	}
	if a.ID == "" || a.Name != "acme" || a.CreatedAt.IsZero() {
		t.Errorf("EnsureAccount = %+v, want id, name acme and a creation time", a)
	}
	again, err := s.EnsureAccount(ctx, "acme")
	if err != nil {
		t.Fatalf("EnsureAccount again: %v", err)
	}
	if *again != *a {
		t.Errorf("EnsureAccount again = %+v, want the same account %+v", again, a)
	}
	other, err := s.EnsureAccount(ctx, "globex")
	if err != nil {
		t.Fatalf("EnsureAccount(globex): %v", err)
	}
	if other.ID == a.ID {
		t.Errorf("two accounts share id %q", a.ID)
	}
	byName, err := s.AccountByName(ctx, "acme")
	if err != nil {
		t.Fatalf("AccountByName: %v", err)
	}
	if *byName != *a {
		t.Errorf("AccountByName = %+v, want %+v", byName, a)
	}
	_, err = s.AccountByName(ctx, "nobody")
	wantNotFound(t, "AccountByName(unknown)", err)
	if _, err := s.EnsureAccount(ctx, ""); err == nil {
		t.Error("EnsureAccount(\"\") succeeded, want an error")
	}
	wantBalance(t, s, a.ID, gw.Balance{})
}

func testKeys(t *testing.T, s gw.Store) {
	ctx := t.Context()
	a := account(t, s, "acme", 0)
	b := account(t, s, "globex", 0)
	t0 := time.Now().Add(-time.Hour).Truncate(time.Microsecond).UTC()
	k1 := &gw.Key{ID: "key_1", AccountID: a.ID, Hint: "gwk_AbCd…", RPM: 60, TPM: 1000, CreatedAt: t0}
	k2 := &gw.Key{ID: "key_2", AccountID: b.ID, Hint: "gwk_EfGh…", CreatedAt: t0.Add(time.Minute), OptimizeOff: true}
	if err := s.CreateKey(ctx, k1, hash("secret1")); err != nil {
		t.Fatalf("CreateKey(k1): %v", err)
	}
	if err := s.CreateKey(ctx, k2, hash("secret2")); err != nil {
		t.Fatalf("CreateKey(k2): %v", err)
	}

	p, err := s.KeyByHash(ctx, hash("secret1"))
	if err != nil {
		t.Fatalf("KeyByHash: %v", err)
	}
	want := gw.Principal{KeyID: "key_1", AccountID: a.ID, AccountName: "acme", RPM: 60, TPM: 1000}
	if !reflect.DeepEqual(*p, want) {
		t.Errorf("KeyByHash = %+v, want %+v", *p, want)
	}
	_, err = s.KeyByHash(ctx, hash("unknown"))
	wantNotFound(t, "KeyByHash(unknown)", err)

	keys, err := s.Keys(ctx)
	if err != nil {
		t.Fatalf("Keys: %v", err)
	}
	wantKeys := []gw.Key{
		{ID: "key_2", AccountID: b.ID, AccountName: "globex", Hint: "gwk_EfGh…", CreatedAt: t0.Add(time.Minute), OptimizeOff: true},
		{ID: "key_1", AccountID: a.ID, AccountName: "acme", Hint: "gwk_AbCd…", RPM: 60, TPM: 1000, CreatedAt: t0},
	}
	if !reflect.DeepEqual(keys, wantKeys) {
		t.Errorf("Keys =\n%+v\nwant\n%+v", keys, wantKeys)
	}

	if err := s.RevokeKey(ctx, "key_1"); err != nil {
		t.Fatalf("RevokeKey: %v", err)
	}
	_, err = s.KeyByHash(ctx, hash("secret1"))
	wantNotFound(t, "KeyByHash(revoked)", err)
	if p, err := s.KeyByHash(ctx, hash("secret2")); err != nil {
		t.Errorf("KeyByHash(other key) after revoking key_1: %v", err)
	} else if !p.OptimizeOff {
		t.Errorf("KeyByHash(key_2).OptimizeOff = false, want the key's setting")
	}
	// Both stores can switch a key's optimization layer (gateway keys
	// update --optimize).
	if ks, ok := s.(interface {
		SetKeyOptimize(ctx context.Context, id string, off bool) error
	}); !ok {
		t.Error("store cannot switch a key's optimization layer")
	} else {
		if err := ks.SetKeyOptimize(ctx, "key_2", false); err != nil {
			t.Fatalf("SetKeyOptimize: %v", err)
		}
		if p, err := s.KeyByHash(ctx, hash("secret2")); err != nil || p.OptimizeOff {
			t.Errorf("after SetKeyOptimize(on): %+v, %v", p, err)
		}
		wantNotFound(t, "SetKeyOptimize(unknown)", ks.SetKeyOptimize(ctx, "key_none", true))
	}
	keys, err = s.Keys(ctx)
	if err != nil {
		t.Fatalf("Keys: %v", err)
	}
	if len(keys) != 2 || keys[1].ID != "key_1" || keys[1].RevokedAt == nil || keys[0].RevokedAt != nil {
		t.Fatalf("Keys after revoking key_1 = %+v, want key_1 revoked and key_2 live", keys)
	}
	revokedAt := *keys[1].RevokedAt
	if err := s.RevokeKey(ctx, "key_1"); err != nil {
		t.Errorf("RevokeKey twice: %v", err)
	}
	if keys, err := s.Keys(ctx); err != nil || len(keys) != 2 || keys[1].RevokedAt == nil || !keys[1].RevokedAt.Equal(revokedAt) {
		t.Errorf("second RevokeKey moved the revocation time: %+v, %v", keys, err)
	}
	wantNotFound(t, "RevokeKey(unknown)", s.RevokeKey(ctx, "key_nope"))

	if err := s.CreateKey(ctx, &gw.Key{ID: "key_3", AccountID: a.ID}, hash("secret1")); err == nil {
		t.Error("CreateKey with a duplicate hash succeeded")
	}
	if err := s.CreateKey(ctx, &gw.Key{ID: "key_1", AccountID: a.ID}, hash("secret4")); err == nil {
		t.Error("CreateKey with a duplicate id succeeded")
	}
	wantNotFound(t, "CreateKey(unknown account)", s.CreateKey(ctx, &gw.Key{ID: "key_5", AccountID: "acct_nope"}, hash("secret5")))
	if keys, err := s.Keys(ctx); err != nil || len(keys) != 2 {
		t.Errorf("failed CreateKey calls left keys: %+v, %v", keys, err)
	}
}

func testTopUp(t *testing.T, s gw.Store) {
	ctx := t.Context()
	a := account(t, s, "acme", 0)
	for _, m := range []gw.Money{5 * gw.USD, 1, 3*gw.Cent + 7} {
		if err := s.TopUp(ctx, a.ID, m, "card"); err != nil {
			t.Fatalf("TopUp(%d): %v", m, err)
		}
	}
	total := 5*gw.USD + 1 + 3*gw.Cent + 7
	wantBalance(t, s, a.ID, gw.Balance{TopUps: total, Balance: total, Available: total})

	tests := []struct {
		name    string
		account string
		amount  gw.Money
		missing bool
	}{
		{"unknown account", "acct_nope", gw.USD, true},
		{"zero amount", a.ID, 0, false},
		{"negative amount", a.ID, -gw.USD, false},
	}
	for _, tt := range tests {
		err := s.TopUp(ctx, tt.account, tt.amount, "bad")
		if tt.missing {
			wantNotFound(t, "TopUp("+tt.name+")", err)
		} else if err == nil {
			t.Errorf("TopUp(%s) succeeded, want an error", tt.name)
		}
	}
	wantBalance(t, s, a.ID, gw.Balance{TopUps: total, Balance: total, Available: total})
	_, err := s.Balance(ctx, "acct_nope")
	wantNotFound(t, "Balance(unknown)", err)
}

func testPlaceHold(t *testing.T, s gw.Store) {
	ctx := t.Context()
	a := account(t, s, "acme", 1000)
	if err := s.PlaceHold(ctx, hold("req_1", a.ID, 600)); err != nil {
		t.Fatalf("PlaceHold(600 of 1000): %v", err)
	}
	wantBalance(t, s, a.ID, gw.Balance{TopUps: 1000, Balance: 1000, Held: 600, Available: 400})

	wantInsufficient(t, "PlaceHold(401 of 400 available)", s.PlaceHold(ctx, hold("req_2", a.ID, 401)))
	wantNotFound(t, "PlaceHold(unknown account)", s.PlaceHold(ctx, hold("req_3", "acct_nope", 1)))
	if err := s.PlaceHold(ctx, hold("req_1", a.ID, 1)); err == nil {
		t.Error("PlaceHold with a duplicate id succeeded")
	}
	wantBalance(t, s, a.ID, gw.Balance{TopUps: 1000, Balance: 1000, Held: 600, Available: 400})

	if err := s.PlaceHold(ctx, hold("req_4", a.ID, 400)); err != nil {
		t.Fatalf("PlaceHold(exactly the available 400): %v", err)
	}
	if err := s.PlaceHold(ctx, hold("req_5", a.ID, 0)); err != nil {
		t.Errorf("PlaceHold(0) with nothing available: %v", err)
	}
	wantInsufficient(t, "PlaceHold(1 of 0 available)", s.PlaceHold(ctx, hold("req_6", a.ID, 1)))
	wantBalance(t, s, a.ID, gw.Balance{TopUps: 1000, Balance: 1000, Held: 1000, Available: 0})
}

func testSettle(t *testing.T, s gw.Store) {
	ctx := t.Context()
	a := account(t, s, "acme", 10*gw.Cent)
	if err := s.PlaceHold(ctx, hold("req_1", a.ID, 4*gw.Cent)); err != nil {
		t.Fatalf("PlaceHold: %v", err)
	}
	r := record("req_1", a.ID, 3*gw.Cent+17, time.Now())
	if err := s.Settle(ctx, "req_1", r); err != nil {
		t.Fatalf("Settle: %v", err)
	}
	after := gw.Balance{TopUps: 10 * gw.Cent, Charged: 3*gw.Cent + 17, Balance: 7*gw.Cent - 17, Available: 7*gw.Cent - 17}
	wantBalance(t, s, a.ID, after)
	wantRecord(t, s, r)

	r2 := record("req_1", a.ID, gw.Cent, time.Now())
	wantNotFound(t, "Settle twice", s.Settle(ctx, "req_1", r2))
	wantNotFound(t, "Release after Settle", s.Release(ctx, "req_1", r2))
	wantNotFound(t, "Settle(unknown hold)", s.Settle(ctx, "req_nope", record("req_nope", a.ID, gw.Cent, time.Now())))
	_, err := s.Record(ctx, "req_nope")
	wantNotFound(t, "Record after a failed Settle", err)
	wantBalance(t, s, a.ID, after)
	wantRecord(t, s, r)

	// The hold fills in the record's account and key when the caller
	// leaves them empty.
	if err := s.PlaceHold(ctx, hold("req_2", a.ID, gw.Cent)); err != nil {
		t.Fatalf("PlaceHold: %v", err)
	}
	bare := &gw.Record{Status: 200, Charge: 5, CreatedAt: time.Now().Truncate(time.Microsecond).UTC()}
	if err := s.Settle(ctx, "req_2", bare); err != nil {
		t.Fatalf("Settle(bare record): %v", err)
	}
	wantRecord(t, s, &gw.Record{RequestID: "req_2", AccountID: a.ID, KeyID: "key_1", Status: 200, Charge: 5, CreatedAt: bare.CreatedAt})
	after.Charged += 5
	after.Balance -= 5
	after.Available -= 5
	wantBalance(t, s, a.ID, after)
}

func testRelease(t *testing.T, s gw.Store) {
	ctx := t.Context()
	a := account(t, s, "acme", 1000)
	for _, id := range []string{"req_1", "req_2"} {
		if err := s.PlaceHold(ctx, hold(id, a.ID, 300)); err != nil {
			t.Fatalf("PlaceHold(%s): %v", id, err)
		}
	}
	r := record("req_1", a.ID, 250, time.Now())
	r.Status, r.ErrorCode = 502, gw.CodeUpstream
	if err := s.Release(ctx, "req_1", r); err != nil {
		t.Fatalf("Release: %v", err)
	}
	logged := *r
	logged.Charge = 0
	wantRecord(t, s, &logged)
	if err := s.Release(ctx, "req_2", nil); err != nil {
		t.Fatalf("Release(nil record): %v", err)
	}
	_, err := s.Record(ctx, "req_2")
	wantNotFound(t, "Record after Release(nil)", err)
	wantBalance(t, s, a.ID, gw.Balance{TopUps: 1000, Balance: 1000, Available: 1000})

	wantNotFound(t, "Release twice", s.Release(ctx, "req_1", nil))
	wantNotFound(t, "Settle after Release", s.Settle(ctx, "req_2", record("req_2", a.ID, 100, time.Now())))
	wantNotFound(t, "Release(unknown)", s.Release(ctx, "req_nope", nil))
	wantBalance(t, s, a.ID, gw.Balance{TopUps: 1000, Balance: 1000, Available: 1000})
	wantRecord(t, s, &logged)
}

// testSettleAboveHold: the charge is settled in full even when it exceeds
// the hold (the money was spent upstream).
func testSettleAboveHold(t *testing.T, s gw.Store) {
	ctx := t.Context()
	a := account(t, s, "acme", 1000)
	if err := s.PlaceHold(ctx, hold("req_1", a.ID, 100)); err != nil {
		t.Fatalf("PlaceHold: %v", err)
	}
	if err := s.Settle(ctx, "req_1", record("req_1", a.ID, 130, time.Now())); err != nil {
		t.Fatalf("Settle(130 on a hold of 100): %v", err)
	}
	wantBalance(t, s, a.ID, gw.Balance{TopUps: 1000, Charged: 130, Balance: 870, Available: 870})
}

func testExpiredHolds(t *testing.T, s gw.Store) {
	ctx := t.Context()
	a := account(t, s, "acme", 1000)
	past := time.Now().Add(-time.Second)
	live := hold("req_live", a.ID, 100)
	stale := gw.Hold{ID: "req_stale", AccountID: a.ID, Amount: 500, ExpiresAt: past}
	late := gw.Hold{ID: "req_late", AccountID: a.ID, KeyID: "key_1", Amount: 200, ExpiresAt: past}
	for _, h := range []gw.Hold{live, stale, late} {
		if err := s.PlaceHold(ctx, h); err != nil {
			t.Fatalf("PlaceHold(%s): %v", h.ID, err)
		}
	}
	// Expired holds do not count: 900 is available, not 200.
	wantBalance(t, s, a.ID, gw.Balance{TopUps: 1000, Balance: 1000, Held: 100, Available: 900})

	// An expired hold that was not swept yet still settles: its request
	// finished.
	if err := s.Settle(ctx, "req_late", record("req_late", a.ID, 150, time.Now())); err != nil {
		t.Fatalf("Settle(expired, unswept hold): %v", err)
	}
	n, err := s.ExpireHolds(ctx, time.Now())
	if err != nil || n != 1 {
		t.Errorf("ExpireHolds = %d, %v; want 1 (req_stale)", n, err)
	}
	wantNotFound(t, "Release(swept hold)", s.Release(ctx, "req_stale", nil))
	if n, err := s.ExpireHolds(ctx, time.Now()); err != nil || n != 0 {
		t.Errorf("ExpireHolds again = %d, %v; want 0", n, err)
	}
	wantBalance(t, s, a.ID, gw.Balance{TopUps: 1000, Charged: 150, Balance: 850, Held: 100, Available: 750})
	if n, err := s.ExpireHolds(ctx, time.Now().Add(2*time.Hour)); err != nil || n != 1 {
		t.Errorf("ExpireHolds(in two hours) = %d, %v; want 1 (req_live)", n, err)
	}
	wantNotFound(t, "Settle(swept hold)", s.Settle(ctx, "req_live", record("req_live", a.ID, 1, time.Now())))
	wantBalance(t, s, a.ID, gw.Balance{TopUps: 1000, Charged: 150, Balance: 850, Available: 850})
}

// testConcurrentHolds: 200 callers race for holds of which 20 fit; exactly
// 20 win, and settling them leaves balance = top-ups - charges >= 0.
func testConcurrentHolds(t *testing.T, s gw.Store) {
	const (
		callers = 200
		fit     = 20
		amount  = 5 * gw.Cent
	)
	ctx := t.Context()
	a := account(t, s, "acme", fit*amount)
	var (
		wg         sync.WaitGroup
		mu         sync.Mutex
		won        []string
		refused    atomic.Int64
		unexpected atomic.Int64
	)
	start := make(chan struct{})
	for i := range callers {
		wg.Go(func() {
			<-start
			id := fmt.Sprintf("req_%03d", i)
			err := s.PlaceHold(ctx, hold(id, a.ID, amount))
			var e *gw.Error
			switch {
			case err == nil:
				mu.Lock()
				won = append(won, id)
				mu.Unlock()
			case errors.As(err, &e) && e.Code == gw.CodeInsufficientBalance:
				refused.Add(1)
			default:
				unexpected.Add(1)
				t.Errorf("PlaceHold(%s): %v", id, err)
			}
		})
	}
	close(start)
	wg.Wait()
	if len(won) != fit || refused.Load() != callers-fit {
		t.Fatalf("holds placed = %d, refused = %d (unexpected %d); want %d and %d",
			len(won), refused.Load(), unexpected.Load(), fit, callers-fit)
	}
	wantBalance(t, s, a.ID, gw.Balance{TopUps: fit * amount, Balance: fit * amount, Held: fit * amount})

	var charged atomic.Int64
	for i, id := range won {
		wg.Go(func() {
			charge := amount - gw.Money(i)*1000
			if err := s.Settle(ctx, id, record(id, a.ID, charge, time.Now())); err != nil {
				t.Errorf("Settle(%s): %v", id, err)
				return
			}
			charged.Add(int64(charge))
		})
	}
	wg.Wait()
	c := gw.Money(charged.Load())
	want := gw.Balance{TopUps: fit * amount, Charged: c, Balance: fit*amount - c, Available: fit*amount - c}
	wantBalance(t, s, a.ID, want)
	if want.Balance < 0 {
		t.Errorf("balance %d went below zero", want.Balance)
	}
}

// testConcurrentTraffic: many callers place, settle and release holds while
// a reader watches the balance; it never goes below zero, holds never
// exceed it, and the end state matches the charges the callers saw.
func testConcurrentTraffic(t *testing.T, s gw.Store) {
	const (
		callers = 40
		rounds  = 10
		topUp   = 2000
	)
	ctx := t.Context()
	a := account(t, s, "acme", topUp)
	var (
		wg      sync.WaitGroup
		charged atomic.Int64
		stop    = make(chan struct{})
		watched = make(chan error, 1)
	)
	go func() {
		var bad error
		for {
			select {
			case <-stop:
				watched <- bad
				return
			default:
			}
			b, err := s.Balance(ctx, a.ID)
			if err == nil && (b.Balance < 0 || b.Available < 0) && bad == nil {
				bad = fmt.Errorf("balance seen at %+v", b)
			}
			time.Sleep(time.Millisecond)
		}
	}()
	for c := range callers {
		wg.Go(func() {
			for r := range rounds {
				id := fmt.Sprintf("req_%d_%d", c, r)
				amount := gw.Money(10 + (c*7+r*13)%50)
				err := s.PlaceHold(ctx, hold(id, a.ID, amount))
				if err != nil {
					var e *gw.Error
					if !errors.As(err, &e) || e.Code != gw.CodeInsufficientBalance {
						t.Errorf("PlaceHold(%s): %v", id, err)
					}
					continue
				}
				if r%3 == 2 {
					if err := s.Release(ctx, id, nil); err != nil {
						t.Errorf("Release(%s): %v", id, err)
					}
					continue
				}
				charge := amount - gw.Money(r%4)
				if err := s.Settle(ctx, id, record(id, a.ID, charge, time.Now())); err != nil {
					t.Errorf("Settle(%s): %v", id, err)
					continue
				}
				charged.Add(int64(charge))
			}
		})
	}
	wg.Wait()
	close(stop)
	if err := <-watched; err != nil {
		t.Error(err)
	}
	c := gw.Money(charged.Load())
	if c == 0 || c > topUp {
		t.Errorf("charged %d, want between 1 and the top-up %d", c, topUp)
	}
	wantBalance(t, s, a.ID, gw.Balance{TopUps: topUp, Charged: c, Balance: topUp - c, Available: topUp - c})
}

// testGroupCommit: calls that arrive together are committed together, and
// one failing call (a duplicate record, an unknown hold) fails alone.
func testGroupCommit(t *testing.T, s gw.Store) {
	const n = 60
	ctx := t.Context()
	a := account(t, s, "acme", n*100)
	if err := s.Log(ctx, record("req_dup", a.ID, 0, time.Now())); err != nil {
		t.Fatalf("Log: %v", err)
	}
	for i := range n {
		if err := s.PlaceHold(ctx, hold(fmt.Sprintf("req_s%02d", i), a.ID, 100)); err != nil {
			t.Fatalf("PlaceHold: %v", err)
		}
	}
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		settle := fmt.Sprintf("req_s%02d", i)
		logged := fmt.Sprintf("req_l%02d", i)
		wg.Go(func() {
			<-start
			if err := s.Settle(ctx, settle, record(settle, a.ID, 90, time.Now())); err != nil {
				t.Errorf("Settle(%s): %v", settle, err)
			}
		})
		wg.Go(func() {
			<-start
			if err := s.Log(ctx, record(logged, a.ID, 0, time.Now())); err != nil {
				t.Errorf("Log(%s): %v", logged, err)
			}
		})
		if i%10 == 0 {
			wg.Go(func() {
				<-start
				if err := s.Log(ctx, record("req_dup", a.ID, 0, time.Now())); err == nil {
					t.Error("Log of a duplicate request id succeeded")
				}
			})
			wg.Go(func() {
				<-start
				err := s.Settle(ctx, "req_none", record("req_none", a.ID, 5, time.Now()))
				wantNotFound(t, "Settle(unknown hold) in a batch", err)
			})
		}
	}
	close(start)
	wg.Wait()
	for i := range n {
		for _, id := range []string{fmt.Sprintf("req_s%02d", i), fmt.Sprintf("req_l%02d", i)} {
			if _, err := s.Record(ctx, id); err != nil {
				t.Errorf("Record(%s): %v", id, err)
			}
		}
	}
	_, err := s.Record(ctx, "req_none")
	wantNotFound(t, "Record(req_none)", err)
	wantBalance(t, s, a.ID, gw.Balance{TopUps: n * 100, Charged: n * 90, Balance: n * 10, Available: n * 10})
}

func testRecords(t *testing.T, s gw.Store) {
	ctx := t.Context()
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	mk := func(id, account, vendor, model string, status int, at time.Duration) *gw.Record {
		r := record(id, account, 0, t0.Add(at))
		r.Vendor, r.Model, r.Status = vendor, model, status
		return r
	}
	all := []*gw.Record{
		mk("req_01", "acct_a", "openai", "gpt-x", 200, 0),
		mk("req_02", "acct_a", "anthropic", "claude-x", 200, time.Second),
		mk("req_03", "acct_b", "openai", "gpt-x", 429, 2*time.Second),
		mk("req_04", "acct_a", "openai", "gpt-y", 200, 3*time.Second),
		// Same time as req_04: ties order by request id, descending.
		mk("req_05", "acct_a", "openai", "gpt-x", 502, 3*time.Second),
		mk("req_06", "acct_b", "google", "gemini-x", 200, 4*time.Second),
	}
	all[1].KeyID, all[3].KeyID = "key_2", "key_2"
	for _, i := range []int{3, 0, 5, 1, 4, 2} { // not in time order
		if err := s.Log(ctx, all[i]); err != nil {
			t.Fatalf("Log(%s): %v", all[i].RequestID, err)
		}
	}
	tests := []struct {
		name string
		f    gw.RecordFilter
		want []string
	}{
		{"no filter is newest first", gw.RecordFilter{}, []string{"req_06", "req_05", "req_04", "req_03", "req_02", "req_01"}},
		{"account", gw.RecordFilter{AccountID: "acct_b"}, []string{"req_06", "req_03"}},
		{"model", gw.RecordFilter{Model: "gpt-x"}, []string{"req_05", "req_03", "req_01"}},
		{"vendor and account", gw.RecordFilter{Vendor: "openai", AccountID: "acct_a"}, []string{"req_05", "req_04", "req_01"}},
		{"status", gw.RecordFilter{Status: 200}, []string{"req_06", "req_04", "req_02", "req_01"}},
		{"since is inclusive", gw.RecordFilter{Since: t0.Add(3 * time.Second)}, []string{"req_06", "req_05", "req_04"}},
		{"until is exclusive", gw.RecordFilter{Until: t0.Add(3 * time.Second)}, []string{"req_03", "req_02", "req_01"}},
		{"limit", gw.RecordFilter{Limit: 2}, []string{"req_06", "req_05"}},
		{"cursor between equal times", gw.RecordFilter{Before: "req_05", Limit: 2}, []string{"req_04", "req_03"}},
		{"cursor with filter", gw.RecordFilter{Before: "req_04", AccountID: "acct_a"}, []string{"req_02", "req_01"}},
		{"cursor at the oldest", gw.RecordFilter{Before: "req_01"}, nil},
		{"unknown cursor", gw.RecordFilter{Before: "req_nope"}, nil},
		{"no match", gw.RecordFilter{Vendor: "mistral"}, nil},
		{"key", gw.RecordFilter{KeyID: "key_2"}, []string{"req_04", "req_02"}},
		{"status class 2xx", gw.RecordFilter{StatusClass: 2, AccountID: "acct_a"}, []string{"req_04", "req_02", "req_01"}},
		{"status class 4xx", gw.RecordFilter{StatusClass: 4}, []string{"req_03"}},
		{"status class 5xx", gw.RecordFilter{StatusClass: 5}, []string{"req_05"}},
	}
	for _, tt := range tests {
		got, err := s.Records(ctx, tt.f)
		if err != nil {
			t.Errorf("Records(%s): %v", tt.name, err)
			continue
		}
		var ids []string
		for _, r := range got {
			ids = append(ids, r.RequestID)
		}
		if !reflect.DeepEqual(ids, tt.want) {
			t.Errorf("Records(%s) = %v, want %v", tt.name, ids, tt.want)
		}
	}
	page, err := s.Records(ctx, gw.RecordFilter{Limit: 1})
	if err != nil || len(page) != 1 {
		t.Fatalf("Records(limit 1) = %v, %v", page, err)
	}
	want := *all[5]
	if !reflect.DeepEqual(page[0], want) {
		t.Errorf("Records row =\n%+v\nwant\n%+v", page[0], want)
	}
	for _, r := range all {
		wantRecord(t, s, r)
	}
	_, err = s.Record(ctx, "req_nope")
	wantNotFound(t, "Record(unknown)", err)
	if err := s.Log(ctx, all[0]); err == nil {
		t.Error("Log of an existing request id succeeded")
	}
}

func testIncidents(t *testing.T, s gw.Store) {
	ctx := t.Context()
	t0 := time.Now().Add(-time.Hour).Truncate(time.Microsecond).UTC()
	ins := []*gw.Incident{
		{ID: "inc_1", RequestID: "req_1", AccountID: "acct_a", KeyID: "key_1", Kind: "extraction", Score: 0.93, Reason: "asked for the system prompt", Excerpt: "ignore previous…", CreatedAt: t0},
		{ID: "inc_2", RequestID: "req_2", AccountID: "acct_a", KeyID: "key_1", Kind: "jailbreak", Score: 0.5, Reason: "r2", Excerpt: "e2", CreatedAt: t0.Add(time.Minute)},
		{RequestID: "req_3", AccountID: "acct_b", KeyID: "key_2", Kind: "injection", Score: 1, Reason: "r3", Excerpt: "e3"},
	}
	for _, in := range ins {
		if err := s.CreateIncident(ctx, in); err != nil {
			t.Fatalf("CreateIncident: %v", err)
		}
	}
	if ins[2].ID == "" || ins[2].CreatedAt.IsZero() {
		t.Fatalf("CreateIncident did not fill in id and time: %+v", ins[2])
	}
	got, err := s.Incidents(ctx, 2)
	if err != nil {
		t.Fatalf("Incidents: %v", err)
	}
	if len(got) != 2 || got[0].ID != ins[2].ID || got[1].ID != "inc_2" {
		t.Errorf("Incidents(2) = %+v, want %s then inc_2", got, ins[2].ID)
	}
	if all, err := s.Incidents(ctx, 0); err != nil || len(all) != 3 {
		t.Errorf("Incidents(0) = %d incidents, %v; want all 3", len(all), err)
	}
	one, err := s.Incident(ctx, "inc_1")
	if err != nil {
		t.Fatalf("Incident: %v", err)
	}
	if !reflect.DeepEqual(*one, *ins[0]) {
		t.Errorf("Incident =\n%+v\nwant\n%+v", *one, *ins[0])
	}
	_, err = s.Incident(ctx, "inc_nope")
	wantNotFound(t, "Incident(unknown)", err)
	if err := s.CreateIncident(ctx, &gw.Incident{ID: "inc_1", Kind: "x"}); err == nil {
		t.Error("CreateIncident with a duplicate id succeeded")
	}
}

func testClosed(t *testing.T, s gw.Store) {
	ctx := t.Context()
	a := account(t, s, "acme", 100)
	if err := s.PlaceHold(ctx, hold("req_1", a.ID, 10)); err != nil {
		t.Fatalf("PlaceHold: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := s.Settle(ctx, "req_1", record("req_1", a.ID, 5, time.Now())); err == nil {
		t.Error("Settle after Close succeeded")
	}
	if err := s.Log(ctx, record("req_2", a.ID, 0, time.Now())); err == nil {
		t.Error("Log after Close succeeded")
	}
	if err := s.PlaceHold(ctx, hold("req_3", a.ID, 10)); err == nil {
		t.Error("PlaceHold after Close succeeded")
	}
	if err := s.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

// BenchmarkSettle measures the hot path of a billed request, PlaceHold then
// Settle, from many goroutines at once (16 per GOMAXPROCS), on store s. It
// reports settles/s.
func BenchmarkSettle(b *testing.B, s gw.Store) {
	ctx := b.Context()
	a, err := s.EnsureAccount(ctx, "bench")
	if err != nil {
		b.Fatalf("EnsureAccount: %v", err)
	}
	if err := s.TopUp(ctx, a.ID, 1_000_000*gw.USD, "bench"); err != nil {
		b.Fatalf("TopUp: %v", err)
	}
	var seq atomic.Int64
	at := time.Now()
	b.SetParallelism(16)
	cpu := startCPU(b)
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			id := fmt.Sprintf("req_%012d", seq.Add(1))
			if err := s.PlaceHold(ctx, hold(id, a.ID, gw.Cent)); err != nil {
				b.Errorf("PlaceHold: %v", err)
				return
			}
			if err := s.Settle(ctx, id, record(id, a.ID, gw.Cent/2, at)); err != nil {
				b.Errorf("Settle: %v", err)
				return
			}
		}
	})
	cpu.report()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "settles/s")
}

// CommitIsolation drives one hand-made batch through a store's group
// committer c: a call that breaks the transaction (a duplicate record)
// makes the batch retry each call alone, and every other call gets its
// own, correct answer; the money comes out exact.
func CommitIsolation(t *testing.T, s gw.Store, c *groupcommit.Committer) {

	ctx := t.Context()
	a, err := s.EnsureAccount(ctx, "acme")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.TopUp(ctx, a.ID, 1000, "t"); err != nil {
		t.Fatal(err)
	}
	exp := time.Now().Add(time.Hour)
	if err := s.PlaceHold(ctx, gw.Hold{ID: "req_h", AccountID: a.ID, Amount: 500, ExpiresAt: exp}); err != nil {
		t.Fatal(err)
	}
	if err := s.Log(ctx, &gw.Record{RequestID: "req_dup", Status: 200}); err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	batch := []*groupcommit.Op{
		{Kind: groupcommit.Log, Rec: &gw.Record{RequestID: "req_a", Status: 200, CreatedAt: now}},
		{Kind: groupcommit.Log, Rec: &gw.Record{RequestID: "req_dup", Status: 200, CreatedAt: now}},
		{Kind: groupcommit.Settle, ID: "req_none", Rec: &gw.Record{RequestID: "req_none", Charge: 5, CreatedAt: now}},
		{Kind: groupcommit.Hold, Hold: gw.Hold{ID: "req_b", AccountID: a.ID, Amount: 400, ExpiresAt: exp}},
		{Kind: groupcommit.Hold, Hold: gw.Hold{ID: "req_c", AccountID: a.ID, Amount: 200, ExpiresAt: exp}},
		{Kind: groupcommit.Settle, ID: "req_h", Rec: &gw.Record{RequestID: "req_h", Charge: 450, CreatedAt: now}},
	}
	before := c.Stats()
	results := c.Commit(batch)
	if got := c.Stats().Retried - before.Retried; got != int64(len(batch)) {
		t.Errorf("retried %d calls, want the whole batch of %d", got, len(batch))
	}
	check := []struct {
		name string
		ok   func(error) bool
	}{
		{"log", func(err error) bool { return err == nil }},
		{"duplicate log", func(err error) bool { return err != nil && !errors.Is(err, gw.ErrNotFound) }},
		{"settle unknown hold", func(err error) bool { return errors.Is(err, gw.ErrNotFound) }},
		{"hold that fits", func(err error) bool { return err == nil }},
		{"hold that does not fit", func(err error) bool { return gw.ErrorCode(err) == gw.CodeInsufficientBalance }},
		{"settle", func(err error) bool { return err == nil }},
	}
	for i, c := range check {
		if err := results[i]; !c.ok(err) {
			t.Errorf("%s: unexpected result %v", c.name, err)
		}
	}
	b, err := s.Balance(ctx, a.ID)
	if err != nil {
		t.Fatal(err)
	}
	if want := (gw.Balance{TopUps: 1000, Charged: 450, Balance: 550, Held: 400, Available: 150}); b != want {
		t.Errorf("Balance = %+v, want %+v", b, want)
	}
	if v, ok := s.(LedgerVerifier); ok {
		if err := v.VerifyLedger(ctx, a.ID); err != nil {
			t.Error(err)
		}
	}
}
