package postgres

import gw "github.com/gwlabs/gateway"

// Runs are kept by the shared statements (internal/sqlstore/runs.go):
// a step's admission locks the run's chain in one transaction.
var _ gw.RunStore = (*DB)(nil)
