package main

import (
	"log/slog"
	"net/http"

	gw "github.com/gwlabs/gateway"
	"github.com/gwlabs/gateway/dashboard"
)

// newDashboard returns the /dashboard handler.
func newDashboard(st gw.Store, adminToken string, log *slog.Logger) (http.Handler, error) {
	return dashboard.New(dashboard.Config{Store: st, AdminToken: adminToken, Logger: log})
}
