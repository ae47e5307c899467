package server

import (
	"context"
	"errors"
	"net/http"
	"time"

	gw "github.com/gwlabs/gateway"
	"github.com/gwlabs/gateway/internal/id"
)

// spender is the store's sum of an account's charges since a time (both
// stores have it).
type spender interface {
	Spend(ctx context.Context, accountID string, since time.Time) (gw.Money, error)
}

// BalanceResponse is the body of GET /v1/balance: the calling key's
// account and limits. Amounts are exact decimal US dollars (8 decimals);
// the day and month are UTC.
type BalanceResponse struct {
	Object         string     `json:"object"` // "balance"
	AccountID      string     `json:"account_id"`
	AccountName    string     `json:"account_name"`
	Currency       string     `json:"currency"` // "usd"
	Balance        string     `json:"balance"`  // top_ups - charged
	Held           string     `json:"held"`     // reserved by requests in flight
	Available      string     `json:"available"`
	TopUps         string     `json:"top_ups"`
	Charged        string     `json:"charged"`
	SpendToday     string     `json:"spend_today"`
	SpendThisMonth string     `json:"spend_this_month"`
	Key            BalanceKey `json:"key"`
}

// BalanceKey is the calling key and the limits in force for it (0:
// unlimited).
type BalanceKey struct {
	ID  string `json:"id"`
	RPM int64  `json:"rpm"`
	TPM int64  `json:"tpm"`
}

// balance serves GET /v1/balance for the key in Authorization (or
// x-api-key).
func (s *Server) balance(w http.ResponseWriter, r *http.Request) {
	now := s.cfg.Now()
	rid := id.New("req_", now)
	w.Header().Set(HeaderRequestID, rid)
	w.Header().Set("Cache-Control", "no-store")
	fail := func(err error) { writeError(w, gw.ShapeC, rid, gw.AsError(err)) }
	authz := r.Header.Get("Authorization")
	if k := r.Header.Get("X-Api-Key"); authz == "" && k != "" {
		authz = "Bearer " + k
	}
	gwy := s.cfg.Gateway
	p, err := gwy.Authenticate(r.Context(), authz)
	if err != nil {
		fail(err)
		return
	}
	store := gwy.Store()
	bal, err := store.Balance(r.Context(), p.AccountID)
	if err != nil {
		fail(&gw.Error{Code: gw.CodeInternal, Message: "could not read the balance", Err: err})
		return
	}
	lim := gwy.Limits(p)
	out := BalanceResponse{
		Object: "balance", AccountID: p.AccountID, AccountName: p.AccountName, Currency: "usd",
		Balance: bal.Balance.USDString(), Held: bal.Held.USDString(), Available: bal.Available.USDString(),
		TopUps: bal.TopUps.USDString(), Charged: bal.Charged.USDString(),
		Key: BalanceKey{ID: p.KeyID, RPM: lim.RPM, TPM: lim.TPM},
	}
	if sp, ok := store.(spender); ok {
		utc := now.UTC()
		day := time.Date(utc.Year(), utc.Month(), utc.Day(), 0, 0, 0, 0, time.UTC)
		month := time.Date(utc.Year(), utc.Month(), 1, 0, 0, 0, 0, time.UTC)
		today, err1 := sp.Spend(r.Context(), p.AccountID, day)
		thisMonth, err2 := sp.Spend(r.Context(), p.AccountID, month)
		if err := errors.Join(err1, err2); err != nil {
			fail(&gw.Error{Code: gw.CodeInternal, Message: "could not read the spend", Err: err})
			return
		}
		out.SpendToday, out.SpendThisMonth = today.USDString(), thisMonth.USDString()
	}
	writeJSON(w, http.StatusOK, out)
}
