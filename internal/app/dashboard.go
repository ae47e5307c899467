package app

import (
	"log/slog"
	"net/http"

	gw "github.com/gwlabs/gateway"
	"github.com/gwlabs/gateway/admin"
	"github.com/gwlabs/gateway/dashboard"
)

// newDashboard returns the /dashboard handler. Sign-in attempts are
// counted per client address by limiter (shared by all instances when it
// is Redis); svc, when not nil, gives the administrator the accounts page.
func newDashboard(st gw.Store, c *Config, limiter gw.Limiter, svc admin.Service, log *slog.Logger, health func() []gw.VendorHealth) (http.Handler, error) {
	return dashboard.New(dashboard.Config{Store: st, AdminToken: c.AdminToken, Admin: svc, Logger: log, SignInLimiter: limiter, TrustedProxies: c.TrustedProxies, Health: health})
}
