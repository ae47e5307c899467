package main

import (
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/gwlabs/gateway/internal/upstream"
	"github.com/gwlabs/gateway/route"
)

// Config is the gateway's configuration: flags override GATEWAY_*
// environment variables, which override the defaults. Every field has a
// documented zero value; see the README's configuration table.
type Config struct {
	Addr          string        // GATEWAY_ADDR, default 127.0.0.1:8080
	DatabaseURL   string        // GATEWAY_DATABASE_URL: a SQLite path (default ./gateway.db) or postgres://...
	RedisURL      string        // GATEWAY_REDIS_URL: redis://...; empty: in-memory rate limits
	FakeVendors   bool          // --fake-vendors: serve all nine vendors in-process
	MaxBodyBytes  int64         // GATEWAY_MAX_BODY_BYTES, default 32 MiB
	ShutdownGrace time.Duration // GATEWAY_SHUTDOWN_GRACE, default 30s
	HTTP          upstream.Config
	RPM           int64 // GATEWAY_RPM: default requests per minute per key (0: unlimited)
	TPM           int64 // GATEWAY_TPM: default tokens per minute per key (0: unlimited)
	RedisFailOpen bool  // GATEWAY_REDIS_FAIL: "open" (default) or "closed"

	Guard           bool    // GATEWAY_GUARD: on (default) or off
	GuardThreshold  float64 // GATEWAY_GUARD_THRESHOLD: 0 = the model's
	GuardFailClosed bool    // GATEWAY_GUARD_FAIL: "open" (default) or "closed"
	GuardSecond     GuardSecondConfig

	RateCardFile string // GATEWAY_RATECARD_FILE: override file merged over the embedded card
	AdminToken   string // GATEWAY_ADMIN_TOKEN: dashboard sign-in for all accounts
	MetricsAddr  string // GATEWAY_METRICS_ADDR: serve Prometheus /metrics on this address (empty: off)
	LogLevel     string // GATEWAY_LOG_LEVEL: debug, info (default), warn, error

	Vendors map[string]VendorConfig // GATEWAY_<VENDOR>_BASE_URL, GATEWAY_<VENDOR>_API_KEY
}

// VendorConfig is one vendor's endpoint and key.
type VendorConfig struct {
	BaseURL string
	APIKey  string
}

// envConfig reads the defaults and the environment.
func envConfig(getenv func(string) string) (Config, error) {
	c := Config{
		Addr:          "127.0.0.1:8080",
		DatabaseURL:   "./gateway.db",
		MaxBodyBytes:  32 << 20,
		ShutdownGrace: 30 * time.Second,
		RPM:           600,
		TPM:           2_000_000,
		Guard:         true,
		RedisFailOpen: true,
		LogLevel:      "info",
		Vendors:       map[string]VendorConfig{},
	}
	var errs []string
	str := func(name string, dst *string) {
		if v := getenv(name); v != "" {
			*dst = v
		}
	}
	num := func(name string, dst *int64) {
		if v := getenv(name); v != "" {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil || n < 0 {
				errs = append(errs, name+" must be a non-negative integer")
				return
			}
			*dst = n
		}
	}
	dur := func(name string, dst *time.Duration) {
		if v := getenv(name); v != "" {
			d, err := time.ParseDuration(v)
			if err != nil || d < 0 {
				errs = append(errs, name+" must be a duration like 30s")
				return
			}
			*dst = d
		}
	}
	onOff := func(name, on, off string, dst *bool) {
		switch v := strings.ToLower(getenv(name)); v {
		case "":
		case on:
			*dst = true
		case off:
			*dst = false
		default:
			errs = append(errs, fmt.Sprintf("%s must be %q or %q", name, on, off))
		}
	}
	str("GATEWAY_ADDR", &c.Addr)
	str("GATEWAY_DATABASE_URL", &c.DatabaseURL)
	str("GATEWAY_REDIS_URL", &c.RedisURL)
	num("GATEWAY_MAX_BODY_BYTES", &c.MaxBodyBytes)
	dur("GATEWAY_SHUTDOWN_GRACE", &c.ShutdownGrace)
	dur("GATEWAY_CONNECT_TIMEOUT", &c.HTTP.ConnectTimeout)
	dur("GATEWAY_FIRST_BYTE_TIMEOUT", &c.HTTP.FirstByteTimeout)
	dur("GATEWAY_STREAM_IDLE_TIMEOUT", &c.HTTP.IdleTimeout)
	var retries int64 = -1
	num("GATEWAY_MAX_RETRIES", &retries)
	if retries == 0 {
		c.HTTP.MaxRetries = -1
	} else if retries > 0 {
		c.HTTP.MaxRetries = int(retries)
	}
	num("GATEWAY_RPM", &c.RPM)
	num("GATEWAY_TPM", &c.TPM)
	onOff("GATEWAY_REDIS_FAIL", "open", "closed", &c.RedisFailOpen)
	onOff("GATEWAY_GUARD", "on", "off", &c.Guard)
	var failOpen = true
	onOff("GATEWAY_GUARD_FAIL", "open", "closed", &failOpen)
	c.GuardFailClosed = !failOpen
	if v := getenv("GATEWAY_GUARD_THRESHOLD"); v != "" {
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || f <= 0 || f >= 1 {
			errs = append(errs, "GATEWAY_GUARD_THRESHOLD must be a number between 0 and 1")
		}
		c.GuardThreshold = f
	}
	errs = append(errs, c.GuardSecond.read(getenv)...)
	str("GATEWAY_RATECARD_FILE", &c.RateCardFile)
	str("GATEWAY_ADMIN_TOKEN", &c.AdminToken)
	str("GATEWAY_METRICS_ADDR", &c.MetricsAddr)
	str("GATEWAY_LOG_LEVEL", &c.LogLevel)
	for _, v := range route.Vendors() {
		up := strings.ToUpper(v)
		c.Vendors[v] = VendorConfig{BaseURL: getenv("GATEWAY_" + up + "_BASE_URL"), APIKey: getenv("GATEWAY_" + up + "_API_KEY")}
	}
	if len(errs) > 0 {
		return c, fmt.Errorf("configuration: %s", strings.Join(errs, "; "))
	}
	return c, nil
}

// dbFlag adds --db to a command's flags.
func dbFlag(fs *flag.FlagSet, c *Config) {
	fs.StringVar(&c.DatabaseURL, "db", c.DatabaseURL, "SQLite file or postgres:// URL (env GATEWAY_DATABASE_URL)")
}

// loadConfig reads the environment of this process.
func loadConfig() (Config, error) { return envConfig(os.Getenv) }
