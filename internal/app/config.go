package app

import (
	"fmt"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/BurntSushi/toml"

	"github.com/gwlabs/gateway/convstate"
	"github.com/gwlabs/gateway/dashboard"
	"github.com/gwlabs/gateway/internal/billable"
	"github.com/gwlabs/gateway/internal/upstream"
	"github.com/gwlabs/gateway/proxy"
	"github.com/gwlabs/gateway/route"
)

// Config is the gateway's configuration: flags override GATEWAY_*
// environment variables, which override the defaults. Every field has a
// documented zero value; see the configuration table in docs/OPERATIONS.md.
type Config struct {
	Addr         string // GATEWAY_ADDR, default 127.0.0.1:8080
	DatabaseURL  string // GATEWAY_DATABASE_URL: a SQLite path (default ./gateway.db) or postgres://...
	RedisURL     string // GATEWAY_REDIS_URL: redis://...; empty: in-memory rate limits
	FakeVendors  bool   // --fake-vendors: serve all nine vendors in-process
	MaxBodyBytes int64  // GATEWAY_MAX_BODY_BYTES, default 32 MiB
	// Memory bounds (0: the server package's defaults).
	MaxInflightBytes int64 // GATEWAY_MAX_INFLIGHT_BYTES: request body bytes held at once, default 256 MiB
	// GATEWAY_MAX_INFLIGHT_BYTES_PER_ACCOUNT, _PER_KEY: one account's and
	// one key's share of them (default a quarter, at least two of the
	// largest bodies; the key's: the account's).
	MaxInflightBytesPerAccount int64
	MaxInflightBytesPerKey     int64
	BodyReadTimeout            time.Duration // GATEWAY_BODY_READ_TIMEOUT: one request body, default 60s
	MaxResponseBytes           int64         // GATEWAY_MAX_RESPONSE_BYTES: a non-streaming vendor answer, default 16 MiB
	MaxEventBytes              int64         // GATEWAY_MAX_EVENT_BYTES: one line or event of a vendor stream, default 8 MiB
	ShutdownGrace              time.Duration // GATEWAY_SHUTDOWN_GRACE, default 30s
	HTTP                       upstream.Config
	RPM                        int64 // GATEWAY_RPM: default requests per minute per key (0: unlimited)
	// GATEWAY_REFUSED_RECORDS_PER_MINUTE: refused requests of one key
	// recorded one row each per minute (default 60; the rest become one
	// aggregate row); GATEWAY_INCIDENT_TEXTS_PER_MINUTE: incidents of one
	// account per minute that keep their flagged text (default 30).
	RefusedPerMinute int
	// GATEWAY_BLOCKS_PER_MINUTE: blocked requests one key may make a
	// minute before its requests are refused until the minute ends
	// (default 20; 0: no bound).
	BlocksPerMinute int
	// GATEWAY_HOLD_TTL: a hold's lease, renewed by its live process
	// every third of it (default 90s; at least 1s): a killed process's
	// holds lapse within it.
	HoldTTL time.Duration
	// GATEWAY_INSTANCE_NAME: this instance's stable name, unique among
	// the live instances (default the host name with the listening
	// address): its holds carry it with a random id per start, and a
	// restarted instance releases its earlier starts' holds at once.
	InstanceName string
	// GATEWAY_REFUSED_RETENTION, GATEWAY_REFUSED_MAX_PER_ACCOUNT: how
	// long incidents and the records of refused requests (no charge, no
	// cost) are kept, and how many of each one account keeps at most
	// (defaults 30 days, 10000; 0: no bound); swept every few minutes.
	RefusedRetention       time.Duration
	RefusedMaxPerAccount   int64
	IncidentTextsPerMinute int
	CountTokensRPM         int64         // GATEWAY_COUNT_TOKENS_RPM: token counts per minute per key, a bucket of their own (0: the key's RPM)
	CountBytesPerMinute    int64         // GATEWAY_COUNT_BYTES_PER_MINUTE: body bytes one key's token counts may have counted per minute, default 64 MiB (0: unbounded)
	MaxAttempts            int           // GATEWAY_MAX_ATTEMPTS: vendor calls per request, retries and fallbacks together, default 6 (a route may set its own)
	AttemptTimeout         time.Duration // GATEWAY_ATTEMPT_TIMEOUT: the time before the first byte over all of a request's vendor calls, default 60s
	MaxCountBodyBytes      int64         // GATEWAY_MAX_COUNT_BODY_BYTES: a token count's body, default 8 MiB (at most GATEWAY_MAX_BODY_BYTES)
	WriteTimeout           time.Duration // GATEWAY_WRITE_TIMEOUT: writing one non-streaming answer, default 60s
	TPM                    int64         // GATEWAY_TPM: default tokens per minute per key (0: unlimited)
	RedisFailOpen          bool          // GATEWAY_REDIS_FAIL "open": admit while Redis is down
	// GATEWAY_REDIS_FAIL "local" (default): while Redis is down, limit in
	// memory with each limit divided by Instances (GATEWAY_INSTANCES,
	// default 1); "closed": answer 503.
	RedisFailLocal bool
	// RedisTimeout bounds one Redis round trip (zero: the limiter's
	// default, 250 ms). Set by embedders and tests, which run under
	// loads where a round trip can exceed the production budget.
	RedisTimeout time.Duration
	// GATEWAY_OPENAI_FORWARD_ORG=on forwards callers' OpenAI-Organization
	// and OpenAI-Project headers to OpenAI (default off: dropped).
	OpenAIForwardOrg bool
	Instances        int64
	// GATEWAY_SQLITE_SHARED=on keeps a SQLite store's holds in its table,
	// so several gateway processes can serve one file; off (default), the
	// serving process keeps them in memory and has the file to itself.
	SQLiteShared bool

	Guard           bool    // GATEWAY_GUARD: on (default) or off
	GuardThreshold  float64 // GATEWAY_GUARD_THRESHOLD: 0 = the model's
	GuardFailClosed bool    // GATEWAY_GUARD_FAIL: "open" (default) or "closed"
	// GATEWAY_GUARD_TIMEOUT: the first stage's time budget per request
	// (0: the proxy's default, 2s); past it GATEWAY_GUARD_FAIL applies.
	GuardTimeout time.Duration
	GuardSecond  GuardSecondConfig
	// GATEWAY_GUARD_COOLDOWN_INCIDENTS blocked requests of a key or an
	// account within GATEWAY_GUARD_COOLDOWN_WINDOW refuse it for
	// GATEWAY_GUARD_COOLDOWN (429 with Retry-After); 0 incidents: off.
	GuardCooldown proxy.Cooldown
	// GATEWAY_GUARD_ANSWER: the answer-side check, on (default) or off
	// (off only to measure its cost).
	GuardAnswer bool
	// GATEWAY_GUARD_ANSWER_CHARGE: an answer stopped for carrying the
	// system prompt is "charged" (default: cost x 1.09, as any answer the
	// vendor produced) or "waived" (the cost is the operator's).
	GuardAnswerWaive bool
	// GATEWAY_GUARD_CANARY: a random marker, new for each request, after
	// the optimizer's directive (on / off, the default).
	GuardCanary bool

	Optimize bool // GATEWAY_OPTIMIZE: the concise-output directive, on (default) or off

	RateCardFile string // GATEWAY_RATECARD_FILE: override file merged over the embedded card
	// GATEWAY_ALLOW_UNPRICED: comma-separated billable units beyond
	// tokens (web_search, service_tier_priority, ...) let through where
	// the rate card cannot price them for the model (the operator pays);
	// default none. Units the card prices are billed regardless.
	AllowUnpriced []string
	AdminToken    string // GATEWAY_ADMIN_TOKEN: dashboard sign-in for all accounts and the admin API (at least 32 characters)
	// GATEWAY_TRUSTED_PROXIES: comma-separated addresses or CIDR prefixes
	// of reverse proxies whose X-Forwarded-For/-Proto are believed.
	TrustedProxies []netip.Prefix
	MetricsAddr    string // GATEWAY_METRICS_ADDR: serve Prometheus /metrics on this address (empty: off)
	PprofAddr      string // GATEWAY_PPROF_ADDR: serve /debug/pprof/ on this address (empty: off)
	LogLevel       string // GATEWAY_LOG_LEVEL: debug, info (default), warn, error
	LogFormat      string // GATEWAY_LOG_FORMAT: text (default) or json

	Vendors map[string]VendorConfig // GATEWAY_<VENDOR>_BASE_URL, GATEWAY_<VENDOR>_API_KEY, GATEWAY_<VENDOR>_ADMIN_KEY

	ThreadRetention    time.Duration // GATEWAY_THREAD_RETENTION: how long a message thread is kept (default 1h; 0: threads off)
	ThreadMaxBytes     int64         // GATEWAY_THREAD_MAX_BYTES: largest thread kept (default 8 MiB)
	StateMaxBytes      int64         // GATEWAY_STATE_MAX_BYTES: client state (threads, stored responses, reasoning, response owners, markers) one account keeps at once, default 64 MiB
	StateMaxEntries    int64         // GATEWAY_STATE_MAX_ENTRIES: entries one account keeps at once, default 10000
	ReasoningRetention time.Duration // GATEWAY_REASONING_RETENTION: how long DeepSeek reasoning (per tool call) and Gemini text signatures are kept (default 15m; 0: off)

	// Routes are the operator's named routes, from the configuration
	// file's [routes."gw/NAME"] tables; nil: none.
	Routes *route.Table
	// MCP is the configuration file's [mcp] table: the MCP servers
	// behind /mcp; nil: /mcp is off.
	MCP *MCPConfig
	// OTelEnv reads the OpenTelemetry variables (OTEL_*; nil: the
	// process environment): traces are exported over OTLP/HTTP when they
	// name an endpoint (package tracing).
	OTelEnv func(string) string

	// The knobs below are no settings (neither variables nor file keys):
	// the end-to-end tests set them.

	// KeyCacheTTL is how long a live key is cached (0:
	// auth.DefaultCacheTTL); tests set it long to show that changes on
	// the store reach a running instance without waiting for it.
	KeyCacheTTL time.Duration
	// OpenRouterRetry and OpenRouterRetryMax bound the wait between
	// failed reads of OpenRouter's price list (0: 1 s and 30 s); tests
	// shorten them.
	OpenRouterRetry, OpenRouterRetryMax time.Duration
}

// VendorConfig is one vendor's endpoint and key.
type VendorConfig struct {
	BaseURL string
	APIKey  string
	// AdminKey is the operator's admin credential for the vendor's usage
	// and cost reports (GATEWAY_<VENDOR>_ADMIN_KEY; OpenAI, Anthropic,
	// OpenRouter and DeepSeek only): never used to serve a request and
	// never shown. Empty: the vendor is unreconcilable.
	AdminKey string
}

// AdminKeyVendors are the vendors whose reports the gateway reads with
// an admin key (package reconcile/vendorreport).
var AdminKeyVendors = []string{"openai", "anthropic", "openrouter", "deepseek"}

// ConfigFromEnv reads the defaults and the environment.
func ConfigFromEnv(getenv func(string) string) (Config, error) {
	c := Config{
		Addr:          "127.0.0.1:8080",
		DatabaseURL:   "./gateway.db",
		MaxBodyBytes:  32 << 20,
		ShutdownGrace: 30 * time.Second,
		RPM:           600,
		TPM:           2_000_000,
		Guard:         true,
		GuardAnswer:   true,
		GuardCooldown: proxy.Cooldown{Incidents: 5, Window: 10 * time.Minute, Period: 15 * time.Minute},
		Optimize:      true,
		// A count of the largest body (8 MiB) takes most of a CPU
		// second: eight of them a minute per key.
		CountBytesPerMinute: 64 << 20,
		LogLevel:            "info",
		LogFormat:           "text",
		Vendors:             map[string]VendorConfig{},

		ThreadRetention:      convstate.DefaultThreadTTL,
		RefusedRetention:     30 * 24 * time.Hour,
		RefusedMaxPerAccount: 10000,
		ThreadMaxBytes:       convstate.DefaultThreadMaxBytes,
		ReasoningRetention:   convstate.DefaultReasoningTTL,
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
	num("GATEWAY_MAX_INFLIGHT_BYTES_PER_ACCOUNT", &c.MaxInflightBytesPerAccount)
	num("GATEWAY_MAX_INFLIGHT_BYTES_PER_KEY", &c.MaxInflightBytesPerKey)
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
	dur("GATEWAY_RETRY_BUDGET", &c.HTTP.RetryBudget)
	dur("GATEWAY_RETRY_BASE", &c.HTTP.RetryBase)
	var breaker int64 = -1
	num("GATEWAY_BREAKER_FAILURES", &breaker)
	if breaker == 0 {
		c.HTTP.BreakerFailures = -1
	} else if breaker > 0 {
		c.HTTP.BreakerFailures = int(breaker)
	}
	dur("GATEWAY_BREAKER_INTERVAL", &c.HTTP.BreakerInterval)
	var accounts int64 = -1
	num("GATEWAY_BREAKER_ACCOUNTS", &accounts)
	if accounts > 0 {
		c.HTTP.BreakerAccounts = int(min(accounts, 1<<20))
	}
	dur("GATEWAY_KEY_REST_MAX", &c.HTTP.KeyRestMax)
	var attempts int64 = -1
	num("GATEWAY_MAX_ATTEMPTS", &attempts)
	if attempts == 0 {
		errs = append(errs, "GATEWAY_MAX_ATTEMPTS must be at least 1")
	} else if attempts > 0 {
		c.MaxAttempts = int(min(attempts, 1<<10))
	}
	dur("GATEWAY_ATTEMPT_TIMEOUT", &c.AttemptTimeout)
	num("GATEWAY_COUNT_BYTES_PER_MINUTE", &c.CountBytesPerMinute)
	num("GATEWAY_RPM", &c.RPM)
	num("GATEWAY_TPM", &c.TPM)
	num("GATEWAY_COUNT_TOKENS_RPM", &c.CountTokensRPM)
	num("GATEWAY_MAX_COUNT_BODY_BYTES", &c.MaxCountBodyBytes)
	var blocks int64 = -1
	num("GATEWAY_BLOCKS_PER_MINUTE", &blocks)
	if blocks >= 0 {
		c.BlocksPerMinute = int(min(blocks, 1<<31-1))
		if blocks == 0 {
			c.BlocksPerMinute = -1 // 0 in the setting: no bound
		}
	}
	num("GATEWAY_REFUSED_MAX_PER_ACCOUNT", &c.RefusedMaxPerAccount)
	dur("GATEWAY_HOLD_TTL", &c.HoldTTL)
	str("GATEWAY_INSTANCE_NAME", &c.InstanceName)
	if c.HoldTTL != 0 && c.HoldTTL < time.Second {
		errs = append(errs, "GATEWAY_HOLD_TTL must be at least 1s")
	}
	dur("GATEWAY_REFUSED_RETENTION", &c.RefusedRetention)
	var refused, texts int64 = -1, -1
	num("GATEWAY_REFUSED_RECORDS_PER_MINUTE", &refused)
	num("GATEWAY_INCIDENT_TEXTS_PER_MINUTE", &texts)
	if refused >= 0 {
		c.RefusedPerMinute = int(min(refused, 1<<31-1))
		if refused == 0 {
			c.RefusedPerMinute = -1 // 0 in the setting: every refusal gets its row
		}
	}
	if texts > 0 {
		c.IncidentTextsPerMinute = int(min(texts, 1<<31-1))
	}
	dur("GATEWAY_WRITE_TIMEOUT", &c.WriteTimeout)
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
	onOff("GATEWAY_SQLITE_SHARED", "on", "off", &c.SQLiteShared)
	onOff("GATEWAY_GUARD", "on", "off", &c.Guard)
	onOff("GATEWAY_GUARD_ANSWER", "on", "off", &c.GuardAnswer)
	answerCharged := !c.GuardAnswerWaive
	onOff("GATEWAY_GUARD_ANSWER_CHARGE", "charged", "waived", &answerCharged)
	c.GuardAnswerWaive = !answerCharged
	onOff("GATEWAY_GUARD_CANARY", "on", "off", &c.GuardCanary)
	onOff("GATEWAY_OPTIMIZE", "on", "off", &c.Optimize)
	var failOpen = true
	onOff("GATEWAY_GUARD_FAIL", "open", "closed", &failOpen)
	c.GuardFailClosed = !failOpen
	dur("GATEWAY_GUARD_TIMEOUT", &c.GuardTimeout)
	if v := getenv("GATEWAY_GUARD_THRESHOLD"); v != "" {
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || f <= 0 || f >= 1 {
			errs = append(errs, "GATEWAY_GUARD_THRESHOLD must be a number between 0 and 1")
		}
		c.GuardThreshold = f
	}
	errs = append(errs, c.GuardSecond.read(getenv)...)
	var coolN = int64(c.GuardCooldown.Incidents)
	num("GATEWAY_GUARD_COOLDOWN_INCIDENTS", &coolN)
	c.GuardCooldown.Incidents = int(min(coolN, 1<<20))
	dur("GATEWAY_GUARD_COOLDOWN_WINDOW", &c.GuardCooldown.Window)
	dur("GATEWAY_GUARD_COOLDOWN", &c.GuardCooldown.Period)
	if c.GuardCooldown.Incidents > 0 && (c.GuardCooldown.Window <= 0 || c.GuardCooldown.Period <= 0) {
		errs = append(errs, "GATEWAY_GUARD_COOLDOWN_WINDOW and GATEWAY_GUARD_COOLDOWN must be positive durations while GATEWAY_GUARD_COOLDOWN_INCIDENTS is above 0")
	}
	str("GATEWAY_RATECARD_FILE", &c.RateCardFile)
	for _, v := range strings.Split(getenv("GATEWAY_ALLOW_UNPRICED"), ",") {
		if v = strings.TrimSpace(v); v == "" {
			continue
		}
		if !slices.Contains(billable.Units, v) {
			errs = append(errs, fmt.Sprintf("GATEWAY_ALLOW_UNPRICED: %q is not a billable unit (%s)", v, strings.Join(billable.Units, ", ")))
			continue
		}
		c.AllowUnpriced = append(c.AllowUnpriced, v)
	}
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
	oneOf := func(name string, dst *string, values ...string) {
		if v := getenv(name); v != "" {
			if !slices.Contains(values, strings.ToLower(v)) {
				errs = append(errs, fmt.Sprintf("%s must be one of %s, not %q", name, strings.Join(values, ", "), v))
				return
			}
			*dst = strings.ToLower(v)
		}
	}
	oneOf("GATEWAY_KEY_SPREAD", &c.HTTP.Spread, upstream.SpreadWeighted, upstream.SpreadLeastInFlight)
	oneOf("GATEWAY_LOG_LEVEL", &c.LogLevel, "debug", "info", "warn", "error")
	oneOf("GATEWAY_LOG_FORMAT", &c.LogFormat, "text", "json")
	dur("GATEWAY_THREAD_RETENTION", &c.ThreadRetention)
	num("GATEWAY_THREAD_MAX_BYTES", &c.ThreadMaxBytes)
	num("GATEWAY_STATE_MAX_BYTES", &c.StateMaxBytes)
	num("GATEWAY_STATE_MAX_ENTRIES", &c.StateMaxEntries)
	dur("GATEWAY_REASONING_RETENTION", &c.ReasoningRetention)
	str("GATEWAY_PPROF_ADDR", &c.PprofAddr)
	for _, v := range route.Vendors() {
		up := strings.ToUpper(v)
		key := getenv("GATEWAY_" + up + "_API_KEY")
		if _, err := upstream.ParseKeys(key); err != nil {
			errs = append(errs, "GATEWAY_"+up+"_API_KEY: "+err.Error())
		}
		vc := VendorConfig{BaseURL: getenv("GATEWAY_" + up + "_BASE_URL"), APIKey: key}
		if slices.Contains(AdminKeyVendors, v) {
			vc.AdminKey = strings.TrimSpace(getenv("GATEWAY_" + up + "_ADMIN_KEY"))
			if vc.AdminKey != "" && slices.ContainsFunc(strings.Split(key, ","), func(k string) bool {
				k, _, _ = strings.Cut(k, "@")
				return strings.TrimSpace(k) == vc.AdminKey
			}) {
				errs = append(errs, "GATEWAY_"+up+"_ADMIN_KEY: the admin key must not be one of GATEWAY_"+up+"_API_KEY's keys (admin credentials never serve requests)")
			}
		}
		c.Vendors[v] = vc
	}
	if len(errs) > 0 {
		return c, fmt.Errorf("configuration: %s", strings.Join(errs, "; "))
	}
	return c, nil
}

// SettingNames lists every GATEWAY_* variable the configuration reads,
// in the order ConfigFromEnv reads them.
func SettingNames() []string {
	var names []string
	_, _ = ConfigFromEnv(func(name string) string {
		if !slices.Contains(names, name) {
			names = append(names, name)
		}
		return ""
	})
	return names
}

// fileKey is a setting's name in the configuration file: the variable's
// name without GATEWAY_, in lower case ("rpm", "openai_api_key").
func fileKey(env string) string { return strings.ToLower(strings.TrimPrefix(env, "GATEWAY_")) }

// setting is one configuration value and where it came from.
type Setting struct {
	Name   string `json:"name"`
	Value  string `json:"value"`  // "" when the default applies; secrets redacted by the caller
	Source string `json:"source"` // "environment", "file" or "default"
	// Effective is the value in force: Value, or the default.
	Effective string `json:"effective"`
	Default   string `json:"default"` // the default, as docs/OPERATIONS.md's table gives it
}

// settingDefault is each setting's default as text (a new setting needs
// its line in settingDefaults: TestConfigCheckShowsDefaults says so) ("" in the map: no
// value, shown as "(none)"); vendor settings are looked up by suffix.
func settingDefault(name string) string {
	if d, ok := settingDefaults[name]; ok {
		if d == "" {
			return "(none)"
		}
		return d
	}
	switch {
	case strings.HasSuffix(name, "_BASE_URL"):
		return "(the vendor's public API)"
	case strings.HasSuffix(name, "_API_KEY"):
		return "(none)"
	case strings.HasSuffix(name, "_ADMIN_KEY"):
		return "(none: the vendor is unreconcilable)"
	}
	return "?"
}

var settingDefaults = map[string]string{
	"GATEWAY_ADDR":                           "127.0.0.1:8080",
	"GATEWAY_DATABASE_URL":                   "./gateway.db",
	"GATEWAY_REDIS_URL":                      "(none: limits in memory)",
	"GATEWAY_MAX_BODY_BYTES":                 "33554432",
	"GATEWAY_SHUTDOWN_GRACE":                 "30s",
	"GATEWAY_MAX_INFLIGHT_BYTES":             "268435456",
	"GATEWAY_MAX_INFLIGHT_BYTES_PER_ACCOUNT": "67108866",
	"GATEWAY_MAX_INFLIGHT_BYTES_PER_KEY":     "67108866",
	"GATEWAY_BODY_READ_TIMEOUT":              "60s",
	"GATEWAY_MAX_RESPONSE_BYTES":             "16777216",
	"GATEWAY_MAX_EVENT_BYTES":                "8388608",
	"GATEWAY_CONNECT_TIMEOUT":                "10s",
	"GATEWAY_FIRST_BYTE_TIMEOUT":             "5m",
	"GATEWAY_STREAM_IDLE_TIMEOUT":            "2m",
	"GATEWAY_MAX_RETRIES":                    "2",
	"GATEWAY_RETRY_BUDGET":                   "30s",
	"GATEWAY_RETRY_BASE":                     "250ms",
	"GATEWAY_BREAKER_FAILURES":               "5",
	"GATEWAY_BREAKER_INTERVAL":               "10s",
	"GATEWAY_BREAKER_ACCOUNTS":               "3",
	"GATEWAY_KEY_REST_MAX":                   "60s",
	"GATEWAY_MAX_ATTEMPTS":                   "6",
	"GATEWAY_ATTEMPT_TIMEOUT":                "60s",
	"GATEWAY_COUNT_BYTES_PER_MINUTE":         "67108864",
	"GATEWAY_KEY_SPREAD":                     "weighted",
	"GATEWAY_RPM":                            "600",
	"GATEWAY_TPM":                            "2000000",
	"GATEWAY_REDIS_FAIL":                     "local",
	"GATEWAY_INSTANCES":                      "1",
	"GATEWAY_SQLITE_SHARED":                  "off",
	"GATEWAY_COUNT_TOKENS_RPM":               "0",
	"GATEWAY_MAX_COUNT_BODY_BYTES":           "8388608",
	"GATEWAY_REFUSED_RECORDS_PER_MINUTE":     "60",
	"GATEWAY_BLOCKS_PER_MINUTE":              "20",
	"GATEWAY_HOLD_TTL":                       "90s",
	"GATEWAY_INSTANCE_NAME":                  "(host name/address)",
	"GATEWAY_REFUSED_RETENTION":              "720h",
	"GATEWAY_REFUSED_MAX_PER_ACCOUNT":        "10000",
	"GATEWAY_INCIDENT_TEXTS_PER_MINUTE":      "30",
	"GATEWAY_WRITE_TIMEOUT":                  "60s",
	"GATEWAY_ALLOW_UNPRICED":                 "",
	"GATEWAY_OPENAI_FORWARD_ORG":             "off",
	"GATEWAY_GUARD":                          "on",
	"GATEWAY_OPTIMIZE":                       "on",
	"GATEWAY_GUARD_FAIL":                     "open",
	"GATEWAY_GUARD_ANSWER":                   "on",
	"GATEWAY_GUARD_ANSWER_CHARGE":            "charged",
	"GATEWAY_GUARD_CANARY":                   "off",
	"GATEWAY_GUARD_TIMEOUT":                  "2s",
	"GATEWAY_GUARD_THRESHOLD":                "(the model's)",
	"GATEWAY_GUARD_SECOND":                   "(none: no second stage)",
	"GATEWAY_GUARD_SECOND_TOKEN":             "",
	"GATEWAY_GUARD_SECOND_PROMPT":            "(built in)",
	"GATEWAY_GUARD_SECOND_THRESHOLD":         "0.5",
	"GATEWAY_GUARD_SECOND_TIMEOUT":           "1s",
	"GATEWAY_GUARD_COOLDOWN_INCIDENTS":       "5",
	"GATEWAY_GUARD_COOLDOWN_WINDOW":          "10m",
	"GATEWAY_GUARD_COOLDOWN":                 "15m",
	"GATEWAY_RATECARD_FILE":                  "(none: the embedded card)",
	"GATEWAY_ADMIN_TOKEN":                    "(none: no admin sign-in or API)",
	"GATEWAY_TRUSTED_PROXIES":                "",
	"GATEWAY_METRICS_ADDR":                   "(none: off)",
	"GATEWAY_LOG_LEVEL":                      "info",
	"GATEWAY_LOG_FORMAT":                     "text",
	"GATEWAY_THREAD_RETENTION":               "1h",
	"GATEWAY_THREAD_MAX_BYTES":               "8388608",
	"GATEWAY_STATE_MAX_BYTES":                "67108864",
	"GATEWAY_STATE_MAX_ENTRIES":              "10000",
	"GATEWAY_REASONING_RETENTION":            "15m",
	"GATEWAY_PPROF_ADDR":                     "(none: off)",
}

// EnvTypos names the GATEWAY_* variables of env that are no setting but
// look like one ("GATEWAY_RMP is not a setting; did you mean
// GATEWAY_RPM?"): a variable close to no setting (GATEWAY_KEY, the
// tests' own) is left alone.
func EnvTypos(env []string) []string {
	names := SettingNames()
	short := make([]string, len(names))
	for i, n := range names {
		short[i] = strings.TrimPrefix(n, "GATEWAY_")
	}
	var out []string
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		if !strings.HasPrefix(name, "GATEWAY_") || slices.Contains(names, name) || name == "GATEWAY_CONFIG" || name == "GATEWAY_ADMIN_URL" {
			continue
		}
		if sug := suggest(strings.TrimPrefix(name, "GATEWAY_"), short); sug != "" {
			out = append(out, fmt.Sprintf("%s is not a setting; did you mean GATEWAY_%s?", name, sug))
		}
	}
	slices.Sort(out)
	return out
}

// suggest is the known name closest to s, for "did you mean"; "" when
// none is close (an edit distance of at most a third of s, and 3).
func suggest(s string, known []string) string {
	best, bestD := "", min(3, max(1, len(s)/3))+1
	for _, k := range known {
		if d := editDistance(s, k); d < bestD {
			best, bestD = k, d
		}
	}
	return best
}

// editDistance is the optimal-string-alignment distance between a and
// b: insertions, deletions, substitutions and swaps of neighbours each
// count one ("rmp" is one from "rpm").
func editDistance(a, b string) int {
	d := make([][]int, len(a)+1)
	for i := range d {
		d[i] = make([]int, len(b)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(a); i++ {
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(a)][len(b)]
}

// ReadSettings resolves every setting from getenv, then the TOML file at
// path (if any). A key of the file that names no setting is an error
// naming it, as is a value that is not a string, number or boolean.
func ReadSettings(path string, getenv func(string) string) ([]Setting, error) {
	file := map[string]string{}
	if path != "" {
		var raw map[string]any
		if _, err := toml.DecodeFile(path, &raw); err != nil {
			return nil, fmt.Errorf("configuration file %s: %w", path, err)
		}
		known := map[string]string{}
		var keys []string
		for _, name := range SettingNames() {
			known[fileKey(name)] = name
			keys = append(keys, fileKey(name))
		}
		var errs []string
		for k, v := range raw {
			if k == "routes" || k == "mcp" {
				continue // readRoutes, readMCP
			}
			name, ok := known[k]
			if !ok {
				msg := fmt.Sprintf("unknown setting %q", k)
				if sug := suggest(strings.ToLower(k), keys); sug != "" {
					msg += fmt.Sprintf(" (did you mean %q?)", sug)
				}
				errs = append(errs, msg)
				continue
			}
			switch v := v.(type) {
			case string:
				file[name] = v
			case int64, float64, bool:
				file[name] = fmt.Sprint(v)
			default:
				errs = append(errs, fmt.Sprintf("%s must be a string, number or boolean", k))
			}
		}
		if len(errs) > 0 {
			slices.Sort(errs)
			return nil, fmt.Errorf("configuration file %s: %s", path, strings.Join(errs, "; "))
		}
	}
	var out []Setting
	for _, name := range SettingNames() {
		s := Setting{Name: name, Source: "default", Default: settingDefault(name)}
		switch {
		case getenv(name) != "":
			s.Value, s.Source = getenv(name), "environment"
		case file[name] != "":
			s.Value, s.Source = file[name], "file"
		}
		s.Effective = s.Value
		if s.Value == "" {
			s.Effective = s.Default
		}
		out = append(out, s)
	}
	return out, nil
}

// ConfigFromFile reads the configuration: the defaults, then the TOML
// file at path (if any), then getenv.
func ConfigFromFile(path string, getenv func(string) string) (Config, error) {
	settings, err := ReadSettings(path, getenv)
	if err != nil {
		return Config{}, err
	}
	values := make(map[string]string, len(settings))
	for _, s := range settings {
		values[s.Name] = s.Value
	}
	c, err := ConfigFromEnv(func(name string) string { return values[name] })
	if err != nil {
		return c, err
	}
	if c.Routes, err = readRoutes(path); err != nil {
		return c, err
	}
	if c.MCP, err = readMCP(path, getenv); err != nil {
		return c, err
	}
	return c, nil
}

// routeFile is a route as the configuration file writes it:
//
//	[routes."gw/sonnet"]
//	models = ["anthropic/claude-sonnet-5-5", "openrouter/anthropic/claude-sonnet-5-5"]
//	weights = [3, 1]   # optional: the first model tried is drawn by weight
//	max_attempts = 4   # optional: vendor calls per request (default GATEWAY_MAX_ATTEMPTS)
type routeFile struct {
	Models      []string `toml:"models"`
	Weights     []int    `toml:"weights"`
	MaxAttempts int      `toml:"max_attempts"`
}

// readRoutes reads the [routes] tables of the TOML file at path (none
// without a file).
func readRoutes(path string) (*route.Table, error) {
	if path == "" {
		return nil, nil
	}
	var f struct {
		Routes map[string]routeFile `toml:"routes"`
	}
	md, err := toml.DecodeFile(path, &f)
	if err != nil {
		return nil, fmt.Errorf("configuration file %s: %w", path, err)
	}
	for _, k := range md.Undecoded() {
		if len(k) > 1 && k[0] == "routes" {
			return nil, fmt.Errorf("configuration file %s: unknown route setting %q (a route has models, weights and max_attempts)", path, k.String())
		}
	}
	var routes []route.Route
	for name, rf := range f.Routes {
		members, err := route.ParseMembers(name, rf.Models)
		if err != nil {
			return nil, fmt.Errorf("configuration file %s: %w", path, err)
		}
		routes = append(routes, route.Route{Name: name, Members: members, Weights: rf.Weights, MaxAttempts: rf.MaxAttempts})
	}
	if len(routes) == 0 {
		return nil, nil
	}
	t, err := route.NewTable(routes)
	if err != nil {
		return nil, fmt.Errorf("configuration file %s: %w", path, err)
	}
	return t, nil
}

// SecretSetting reports whether a setting's value must not be printed.
func SecretSetting(name string) bool {
	return strings.HasSuffix(name, "_API_KEY") || strings.HasSuffix(name, "_ADMIN_KEY") || strings.HasSuffix(name, "_TOKEN")
}
