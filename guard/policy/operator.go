package policy

import (
	"context"
	"log/slog"
	"net/http"
	"time"

	gw "github.com/gwlabs/gateway"
	"github.com/gwlabs/gateway/billing"
	"github.com/gwlabs/gateway/internal/id"
)

// OperatorAccount books the second stage's vendor cost: records of this
// account carry the cost and no charge, and no key spends from it.
const OperatorAccount = "gateway-operator"

// OperatorBook logs each second-stage call's vendor cost as a record of
// the operator's account, with no charge: the cost shows on the admin
// dashboard beside the requests, and no caller pays it.
type OperatorBook struct {
	Store  gw.Store
	Biller *billing.Biller // nil: the cost is not priced
	Vendor string
	Logger *slog.Logger
}

// Record logs one second-stage call's usage on model.
func (b *OperatorBook) Record(model string, u gw.Usage) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	acct, err := b.Store.EnsureAccount(ctx, OperatorAccount)
	if err != nil {
		b.Logger.Error("guard second stage: operator account", "err", err)
		return
	}
	r := &gw.Record{
		RequestID: id.New("req_", time.Now()), AccountID: acct.ID, KeyID: "guard-second-stage", Endpoint: gw.ShapeM,
		Vendor: b.Vendor, Model: model, Status: http.StatusOK, Usage: u, Guard: "off", Note: "guard second stage", CreatedAt: time.Now(),
	}
	if b.Biller != nil {
		if q, err := b.Biller.Price(b.Vendor, model, u); err == nil {
			r.Cost = q.Cost
		} else {
			r.Note += ": " + err.Error()
		}
	}
	if err := b.Store.Log(ctx, r); err != nil {
		b.Logger.Error("guard second stage: log cost", "err", err)
	}
}
