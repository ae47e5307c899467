package main

import (
	"flag"
	"fmt"
	"net/netip"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/gwlabs/gateway/dashboard"
	"github.com/gwlabs/gateway/internal/upstream"
	"github.com/gwlabs/gateway/route"
)

// Config is the gateway's configuration: flags override GATEWAY_*
// environment variables, which override the defaults. Every field has a
// documented zero value; see the README's configuration table.
type Config struct {
	Addr         string // GATEWAY_ADDR, default 127.0.0.1:8080
	DatabaseURL  string // GATEWAY_DATABASE_URL: a SQLite path (default ./gateway.db) or postgres://...
	RedisURL     string // GATEWAY_REDIS_URL: redis://...; empty: in-memory rate limits
	FakeVendors  bool   // --fake-vendors: serve all nine vendors in-process
	MaxBodyBytes int64  // GATEWAY_MAX_BODY_BYTES, default 32 MiB
	// Memory bounds (0: the server package's defaults).
	MaxInflightBytes int64         // GATEWAY_MAX_INFLIGHT_BYTES: request body bytes held at once, default 256 MiB
	BodyReadTimeout  time.Duration // GATEWAY_BODY_READ_TIMEOUT: one request body, default 60s
	MaxResponseBytes int64         // GATEWAY_MAX_RESPONSE_BYTES: a non-streaming vendor answer, default 16 MiB
	MaxEventBytes    int64         // GATEWAY_MAX_EVENT_BYTES: one line or event of a vendor stream, default 8 MiB
	ShutdownGrace    time.Duration // GATEWAY_SHUTDOWN_GRACE, default 30s
	HTTP             upstream.Config
	RPM              int64 // GATEWAY_RPM: default requests per minute per key (0: unlimited)
	TPM              int64 // GATEWAY_TPM: default tokens per minute per key (0: unlimited)
	RedisFailOpen    bool  // GATEWAY_REDIS_FAIL "open": admit while Redis is down
	// GATEWAY_REDIS_FAIL "local" (default): while Redis is down, limit in
	// memory with each limit divided by Instances (GATEWAY_INSTANCES,
	// default 1); "closed": answer 503.
	RedisFailLocal bool
	// GATEWAY_OPENAI_FORWARD_ORG=on forwards callers' OpenAI-Organization
	// and OpenAI-Project headers to OpenAI (default off: dropped).
	OpenAIForwardOrg bool
	Instances        int64

	Guard           bool    // GATEWAY_GUARD: on (default) or off
	GuardThreshold  float64 // GATEWAY_GUARD_THRESHOLD: 0 = the model's
	GuardFailClosed bool    // GATEWAY_GUARD_FAIL: "open" (default) or "closed"

	RateCardFile string // GATEWAY_RATECARD_FILE: override file merged over the embedded card
	AdminToken   string // GATEWAY_ADMIN_TOKEN: dashboard sign-in for all accounts (at least 32 characters)
	// GATEWAY_TRUSTED_PROXIES: comma-separated addresses or CIDR prefixes
	// of reverse proxies whose X-Forwarded-For/-Proto are believed.
	TrustedProxies []netip.Prefix
	MetricsAddr    string // GATEWAY_METRICS_ADDR: serve Prometheus /metrics on this address (empty: off)
	LogLevel       string // GATEWAY_LOG_LEVEL: debug, info (default), warn, error

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
	num("GATEWAY_MAX_INFLIGHT_BYTES", &c.MaxInflightBytes)
	dur("GATEWAY_BODY_READ_TIMEOUT", &c.BodyReadTimeout)
	num("GATEWAY_MAX_RESPONSE_BYTES", &c.MaxResponseBytes)
	num("GATEWAY_MAX_EVENT_BYTES", &c.MaxEventBytes)
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
	switch v := strings.ToLower(getenv("GATEWAY_REDIS_FAIL")); v {
	case "", "local":
		c.RedisFailLocal, c.RedisFailOpen = true, false
	case "open", "closed":
		c.RedisFailLocal, c.RedisFailOpen = false, v == "open"
	default:
		errs = append(errs, `GATEWAY_REDIS_FAIL must be "local", "open" or "closed"`)
	}
	num("GATEWAY_INSTANCES", &c.Instances)
	onOff("GATEWAY_OPENAI_FORWARD_ORG", "on", "off", &c.OpenAIForwardOrg)
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
	str("GATEWAY_RATECARD_FILE", &c.RateCardFile)
	str("GATEWAY_ADMIN_TOKEN", &c.AdminToken)
	if n := len(c.AdminToken); n > 0 && n < dashboard.MinAdminTokenLen {
		errs = append(errs, fmt.Sprintf("GATEWAY_ADMIN_TOKEN is %d characters; it must have at least %d (e.g. openssl rand -hex 24)", n, dashboard.MinAdminTokenLen))
	}
	for _, v := range strings.Split(getenv("GATEWAY_TRUSTED_PROXIES"), ",") {
		if v = strings.TrimSpace(v); v == "" {
			continue
		}
		p, err := netip.ParsePrefix(v)
		if err != nil {
			a, aerr := netip.ParseAddr(v)
			if aerr != nil {
				errs = append(errs, fmt.Sprintf("GATEWAY_TRUSTED_PROXIES: %q is not an address or a CIDR prefix", v))
				continue
			}
			p = netip.PrefixFrom(a, a.BitLen())
		}
		c.TrustedProxies = append(c.TrustedProxies, p.Masked())
	}
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
