package postgres

import gw "github.com/gwlabs/gateway"

// Reconciliation's figures are kept by the shared statements
// (internal/sqlstore/reconcile.go).
var _ gw.ReconcileStore = (*DB)(nil)
