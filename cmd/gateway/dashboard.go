package main

import (
	"log/slog"
	"net/http"

	gw "github.com/gwlabs/gateway"
	"github.com/gwlabs/gateway/dashboard"
)

// newDashboard returns the /dashboard handler. Sign-in attempts are
// counted per client address by limiter (shared by all instances when it
// is Redis).
func newDashboard(st gw.Store, c *Config, limiter gw.Limiter, log *slog.Logger) (http.Handler, error) {
	return dashboard.New(dashboard.Config{Store: st, AdminToken: c.AdminToken, Logger: log, SignInLimiter: limiter, TrustedProxies: c.TrustedProxies})
}
