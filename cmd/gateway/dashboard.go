package main

import (
	"log/slog"
	"net/http"

	gw "github.com/gwlabs/gateway"
)

// newDashboard returns the /dashboard handler.
func newDashboard(st gw.Store, adminToken string, log *slog.Logger) http.Handler { return nil }
