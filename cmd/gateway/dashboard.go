package main

import (
	"log/slog"
	"net/http"

	gw "github.com/gwlabs/gateway"
	"github.com/gwlabs/gateway/admin"
	"github.com/gwlabs/gateway/dashboard"
)

// newDashboard returns the /dashboard handler; svc, when not nil, gives
// the administrator the accounts page.
func newDashboard(st gw.Store, adminToken string, svc admin.Service, log *slog.Logger) (http.Handler, error) {
	return dashboard.New(dashboard.Config{Store: st, AdminToken: adminToken, Admin: svc, Logger: log})
}
