package dashboard

import (
	"cmp"
	"context"
	"errors"
	"slices"
	"sync"
	"time"

	gw "github.com/gwlabs/gateway"
)

// errUnused is returned by the fake store's methods the dashboard never
// calls.
var errUnused = errors.New("fake store: not used by the dashboard")

// fakeStore is an in-memory gw.Store holding keys, records and balances.
// Records follows the store contract: newest first, ties by request id
// descending, Before as a strict cursor, Limit defaulting to 100 and
// capped at 1000.
type fakeStore struct {
	mu         sync.Mutex
	principals map[[32]byte]gw.Principal // by key hash; live keys only
	keys       []gw.Key
	records    []gw.Record
	incidents  []gw.Incident // newest first
	balances   map[string]gw.Balance
	// fail, when set, is returned by every read.
	fail error
	// recordsCalls counts Records calls.
	recordsCalls int
}

func newFakeStore() *fakeStore {
	return &fakeStore{principals: map[[32]byte]gw.Principal{}, balances: map[string]gw.Balance{}}
}

// addKey registers a key; a revoked key is listed but does not resolve.
func (s *fakeStore) addKey(k gw.Key, hash [32]byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.keys = append(s.keys, k)
	if k.RevokedAt == nil {
		s.principals[hash] = gw.Principal{KeyID: k.ID, AccountID: k.AccountID, AccountName: k.AccountName}
	}
}

// revoke marks key id revoked.
func (s *fakeStore) revoke(id string, at time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := range s.keys {
		if s.keys[i].ID == id {
			s.keys[i].RevokedAt = &at
		}
	}
	for h, p := range s.principals {
		if p.KeyID == id {
			delete(s.principals, h)
		}
	}
}

func (s *fakeStore) add(rs ...gw.Record) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.records = append(s.records, rs...)
}

func (s *fakeStore) Ping(context.Context) error { return nil }
func (s *fakeStore) Close() error               { return nil }
func (s *fakeStore) EnsureAccount(context.Context, string) (*gw.Account, error) {
	return nil, errUnused
}
func (s *fakeStore) AccountByName(context.Context, string) (*gw.Account, error) {
	return nil, errUnused
}
func (s *fakeStore) CreateKey(context.Context, *gw.Key, [32]byte) error { return errUnused }
func (s *fakeStore) RevokeKey(context.Context, string) error            { return errUnused }
func (s *fakeStore) TopUp(context.Context, string, gw.Money, string) error {
	return errUnused
}
func (s *fakeStore) SetGuardPolicy(context.Context, string, string, gw.GuardPolicy) error {
	return errUnused
}
func (s *fakeStore) GuardPolicies(context.Context, string, string) (*gw.GuardPolicy, *gw.GuardPolicy, error) {
	return nil, nil, nil
}
func (s *fakeStore) SetIncidentText(context.Context, gw.IncidentText) error { return errUnused }
func (s *fakeStore) SetMCPGrant(context.Context, string, string, *gw.MCPGrant) error {
	return errUnused
}
func (s *fakeStore) MCPGrants(context.Context, string, string) (*gw.MCPGrant, *gw.MCPGrant, error) {
	return nil, nil, nil
}
func (s *fakeStore) ReviewIncident(context.Context, gw.IncidentReview) error { return errUnused }
func (s *fakeStore) IncidentReviews(context.Context, []string) (map[string]gw.IncidentReview, error) {
	return map[string]gw.IncidentReview{}, nil
}
func (s *fakeStore) ReviewedIncidents(context.Context) ([]gw.ReviewedIncident, error) {
	return nil, nil
}
func (s *fakeStore) GuardAllowed(context.Context, string, [32]byte) (bool, error) { return false, nil }
func (s *fakeStore) BudgetUse(context.Context, string, string, time.Time) (gw.BudgetUse, error) {
	return gw.BudgetUse{}, nil
}
func (s *fakeStore) SetKeyBudget(context.Context, string, gw.Budget) error     { return errUnused }
func (s *fakeStore) SetAccountBudget(context.Context, string, gw.Budget) error { return errUnused }
func (s *fakeStore) AccountBudget(context.Context, string) (gw.Budget, error) {
	return gw.Budget{}, nil
}
func (s *fakeStore) PlaceHold(context.Context, gw.Hold) error            { return errUnused }
func (s *fakeStore) Settle(context.Context, string, *gw.Record) error    { return errUnused }
func (s *fakeStore) Release(context.Context, string, *gw.Record) error   { return errUnused }
func (s *fakeStore) ExpireHolds(context.Context, time.Time) (int, error) { return 0, errUnused }
func (s *fakeStore) Log(context.Context, *gw.Record) error               { return errUnused }
func (s *fakeStore) CreateIncident(_ context.Context, in *gw.Incident) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.incidents = append(s.incidents, *in)
	slices.SortFunc(s.incidents, func(a, b gw.Incident) int { return b.CreatedAt.Compare(a.CreatedAt) })
	return nil
}

func (s *fakeStore) Incidents(_ context.Context, limit int) ([]gw.Incident, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.incidents[:min(limit, len(s.incidents))]), nil
}
func (s *fakeStore) Incident(context.Context, string) (*gw.Incident, error) { return nil, errUnused }
func (s *fakeStore) RenewHold(context.Context, string, time.Time) error     { return errUnused }

// IncidentsOf is Incidents narrowed to one account.
func (s *fakeStore) IncidentsOf(ctx context.Context, accountID string, limit int) ([]gw.Incident, error) {
	all, err := s.Incidents(ctx, 1<<30)
	if err != nil {
		return nil, err
	}
	var out []gw.Incident
	for _, in := range all {
		if in.AccountID == accountID && len(out) < limit {
			out = append(out, in)
		}
	}
	return out, nil
}

func (s *fakeStore) Keys(context.Context) ([]gw.Key, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.fail != nil {
		return nil, s.fail
	}
	return slices.Clone(s.keys), nil
}

func (s *fakeStore) KeyByHash(_ context.Context, hash [32]byte) (*gw.Principal, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.fail != nil {
		return nil, s.fail
	}
	p, ok := s.principals[hash]
	if !ok {
		return nil, gw.ErrNotFound
	}
	return &p, nil
}

func (s *fakeStore) Balance(_ context.Context, accountID string) (gw.Balance, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.fail != nil {
		return gw.Balance{}, s.fail
	}
	return s.balances[accountID], nil
}

func (s *fakeStore) Record(_ context.Context, id string) (*gw.Record, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.fail != nil {
		return nil, s.fail
	}
	for _, r := range s.records {
		if r.RequestID == id {
			return &r, nil
		}
	}
	return nil, gw.ErrNotFound
}

// newer orders records newest first, ties by request id descending.
func newer(a, b gw.Record) int {
	if c := b.CreatedAt.Compare(a.CreatedAt); c != 0 {
		return c
	}
	return cmp.Compare(b.RequestID, a.RequestID)
}

func (s *fakeStore) Records(_ context.Context, f gw.RecordFilter) ([]gw.Record, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.recordsCalls++
	if s.fail != nil {
		return nil, s.fail
	}
	all := slices.Clone(s.records)
	slices.SortFunc(all, newer)
	var cursor *gw.Record
	if f.Before != "" {
		for i := range all {
			if all[i].RequestID == f.Before {
				cursor = &all[i]
			}
		}
		if cursor == nil {
			return nil, nil
		}
	}
	limit := f.Limit
	if limit <= 0 {
		limit = 100
	}
	limit = min(limit, 1000)
	var out []gw.Record
	for _, r := range all {
		switch {
		case f.AccountID != "" && r.AccountID != f.AccountID,
			f.Model != "" && r.Model != f.Model,
			f.Vendor != "" && r.Vendor != f.Vendor,
			f.Status != 0 && r.Status != f.Status,
			f.KeyID != "" && r.KeyID != f.KeyID,
			f.StatusClass != 0 && r.Status/100 != f.StatusClass,
			!f.Since.IsZero() && r.CreatedAt.Before(f.Since),
			!f.Until.IsZero() && !r.CreatedAt.Before(f.Until),
			cursor != nil && newer(*cursor, r) >= 0:
			continue
		}
		out = append(out, r)
		if len(out) == limit {
			break
		}
	}
	return out, nil
}

var _ gw.Store = (*fakeStore)(nil)
