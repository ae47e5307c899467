// Package dashboard serves the gateway's read-only web dashboard under
// /dashboard: a request log (/dashboard/logs, with a detail view per
// request) and an activity view (/dashboard/activity: spend, requests and
// tokens over time, by model and by vendor, and the balance).
//
// The server package mounts a Dashboard at /dashboard and /dashboard/...,
// passing the full path. The dashboard reads only through gw.Store; it
// shows request metadata (gw.Record), which never holds prompt or response
// content.
//
// # Sign-in and sessions
//
// A person signs in with an API key, and then sees only the records and
// balance of that key's account, or with the admin token, and then sees
// every account and picks one with a selector. The key or token is sent
// once, in the POST /dashboard/signin form; it is never put in a cookie.
// The session cookie holds the account id, the key id and an expiry (12
// hours), signed with HMAC-SHA256 under a random secret drawn when New
// runs: restarting the gateway signs everyone out, and a cookie cannot be
// forged or altered without the secret. Every page load re-checks that the
// key is still live, so revoking a key also ends its dashboard sessions.
//
// # Cross-site requests
//
// The dashboard only reads; its two state-changing requests, sign-in and
// sign-out, are POST forms. The cookie is SameSite=Strict (and HttpOnly,
// and Secure on TLS), so a cross-site page can neither read the dashboard
// nor make the browser send the session along; on top of that, the POST
// handlers are wrapped in http.CrossOriginProtection, which refuses
// cross-origin form posts (Sec-Fetch-Site / Origin), so another site
// cannot sign a visitor in or out either. Pages are rendered with
// html/template, which escapes every value, and are served with a strict
// Content-Security-Policy (no scripts, styles from the dashboard only).
package dashboard

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"embed"
	"errors"
	"fmt"
	"html/template"
	"log/slog"
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	gw "github.com/gwlabs/gateway"
	"github.com/gwlabs/gateway/admin"
	"github.com/gwlabs/gateway/auth"
	"github.com/gwlabs/gateway/ratelimit"
)

//go:embed templates/*.html static/style.css
var assets embed.FS

// Defaults.
const (
	sessionTTL = 12 * time.Hour
	// maxSigninBody bounds the sign-in form.
	maxSigninBody = 4 << 10
	// activityPageSize and activityMaxPages bound the records the
	// activity page reads for one view: 25 pages of 1000.
	activityPageSize = 1000
	activityMaxPages = 25
	// logsPageSize is the number of rows per logs page.
	logsPageSize = 50
)

// Config configures a Dashboard.
type Config struct {
	// Store reads keys, records and balances. Required.
	Store gw.Store
	// AdminToken, when not empty, signs in as the administrator, who
	// sees every account. Empty: only API keys sign in.
	AdminToken string
	// Now returns the current time; nil: time.Now.
	Now func() time.Time
	// Logger receives store and rendering failures; nil: discarded.
	Logger *slog.Logger
	// Admin, when set, gives the administrator the accounts page and its
	// forms (accounts, top-ups, keys).
	Admin admin.Service
	// SignInLimiter counts sign-in attempts per client address
	// (SignInPerMinute, default 10); nil: an in-memory one.
	SignInLimiter   gw.Limiter
	SignInPerMinute int64
	// TrustedProxies are the reverse proxies whose X-Forwarded-For
	// (client address, for the sign-in limit) and X-Forwarded-Proto
	// (Secure cookies behind a TLS proxy) are believed.
	TrustedProxies []netip.Prefix
	// Health, when set, reports the vendors' circuit breakers and key
	// pools for the administrator's vendors panel (accounts page).
	Health func() []gw.VendorHealth
}

// Validate reports a missing required field.
func (c *Config) Validate() error {
	if c.Store == nil {
		return errors.New("dashboard: config: Store is required")
	}
	if c.AdminToken != "" && len(c.AdminToken) < MinAdminTokenLen {
		return fmt.Errorf("dashboard: the admin token is %d characters; it must have at least %d (e.g. openssl rand -hex 24)", len(c.AdminToken), MinAdminTokenLen)
	}
	return nil
}

// Dashboard is the /dashboard handler. It is safe for concurrent use.
type Dashboard struct {
	store           gw.Store
	adminHash       [32]byte // SHA-256 of the admin token; valid when hasAdmin
	hasAdmin        bool
	now             func() time.Time
	log             *slog.Logger
	seal            sealer
	pages           map[string]*template.Template
	mux             *http.ServeMux
	signInLimiter   gw.Limiter
	signInPerMinute int64
	proxies         proxies
	health          func() []gw.VendorHealth
	signedOut       revocations
	pageSize        int // activity: records per store call
	maxPages        int // activity: store calls per view
	logsPerPage     int
	admin           admin.Service
}

// New returns a Dashboard. It draws the session-signing secret.
func New(cfg Config) (*Dashboard, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	d := &Dashboard{
		store:       cfg.Store,
		now:         cfg.Now,
		log:         cfg.Logger,
		pageSize:    activityPageSize,
		maxPages:    activityMaxPages,
		logsPerPage: logsPageSize,
		admin:       cfg.Admin,
		health:      cfg.Health,
	}
	if d.now == nil {
		d.now = time.Now
	}
	d.signInLimiter, d.signInPerMinute, d.proxies = cfg.SignInLimiter, cfg.SignInPerMinute, cfg.TrustedProxies
	if d.signInPerMinute <= 0 {
		d.signInPerMinute = defaultSignInPerMinute
	}
	if d.signInLimiter == nil {
		// No sweeper goroutine (the dashboard has no Close): idle
		// addresses are dropped as sign-ins arrive.
		mem := ratelimit.NewMemory(ratelimit.MemoryOptions{Now: d.now, SweepInterval: -1})
		d.signInLimiter = sweeping{mem}
	}
	if d.log == nil {
		d.log = slog.New(slog.DiscardHandler)
	}
	if cfg.AdminToken != "" {
		d.adminHash, d.hasAdmin = sha256.Sum256([]byte(cfg.AdminToken)), true
	}
	d.seal.secret = make([]byte, 32)
	if _, err := rand.Read(d.seal.secret); err != nil {
		return nil, fmt.Errorf("dashboard: session secret: %w", err)
	}
	var err error
	if d.pages, err = parsePages(); err != nil {
		return nil, err
	}
	csrf := http.NewCrossOriginProtection()
	m := http.NewServeMux()
	m.HandleFunc("GET /dashboard", d.index)
	m.HandleFunc("GET /dashboard/{$}", d.index)
	m.Handle("POST /dashboard/signin", csrf.Handler(http.HandlerFunc(d.signin)))
	m.Handle("POST /dashboard/signout", csrf.Handler(http.HandlerFunc(d.signout)))
	m.HandleFunc("GET /dashboard/logs", d.signedIn(d.logs))
	m.HandleFunc("GET /dashboard/logs/{id}", d.signedIn(d.detail))
	m.HandleFunc("GET /dashboard/logs.csv", d.signedIn(d.exportCSV))
	m.HandleFunc("GET /dashboard/activity", d.signedIn(d.activity))
	m.HandleFunc("GET /dashboard/incidents", d.signedIn(d.incidents))
	m.HandleFunc("GET /dashboard/runs", d.signedIn(d.runs))
	m.HandleFunc("GET /dashboard/runs/{id}", d.signedIn(d.runOrCSV))
	if d.admin != nil {
		m.HandleFunc("GET /dashboard/accounts", d.signedIn(d.adminOnly(d.accounts)))
		for pattern, f := range map[string]func(context.Context, *http.Request, *accountsPage) error{
			"POST /dashboard/accounts":               d.createAccount,
			"POST /dashboard/accounts/{id}/topup":    d.topUp,
			"POST /dashboard/accounts/{id}/keys":     d.createKey,
			"POST /dashboard/keys/{id}/rotate":       d.rotateKey,
			"POST /dashboard/keys/{id}/revoke":       d.revokeKey,
			"POST /dashboard/keys/{id}/budget":       d.setKeyBudget,
			"POST /dashboard/accounts/{id}/budget":   d.setAccountBudget,
			"POST /dashboard/accounts/{id}/mcp":      d.setMCPGrant,
			"POST /dashboard/keys/{id}/run-defaults": d.setRunDefaults,
		} {
			m.Handle(pattern, csrf.Handler(d.signedIn(d.adminForm(f))))
		}
		m.HandleFunc("GET /dashboard/reconciliation", d.signedIn(d.adminOnly(d.reconciliation)))
		m.Handle("POST /dashboard/reconciliation/adjustments/{id}/approve", csrf.Handler(d.signedIn(d.adminOnly(d.decideAdjustment(gw.AdjustmentApproved)))))
		m.Handle("POST /dashboard/reconciliation/adjustments/{id}/dismiss", csrf.Handler(d.signedIn(d.adminOnly(d.decideAdjustment(gw.AdjustmentDismissed)))))
	}
	m.Handle("POST /dashboard/incidents/{id}/review", csrf.Handler(d.signedIn(d.reviewIncident)))
	m.HandleFunc("GET /dashboard/static/style.css", stylesheet)
	m.HandleFunc("/dashboard/", d.notFound)
	d.mux = m
	return d, nil
}

// sweeping drops idle addresses from an in-memory limiter as it is used.
type sweeping struct{ *ratelimit.Memory }

func (s sweeping) Allow(ctx context.Context, key string, l gw.Limit, tokens int64) (gw.LimitDecision, error) {
	s.Sweep()
	return s.Memory.Allow(ctx, key, l, tokens)
}

// parsePages parses each page template together with the layout.
func parsePages() (map[string]*template.Template, error) {
	pages := map[string]*template.Template{}
	for _, name := range []string{"signin", "logs", "detail", "activity", "incidents", "accounts", "error", "runs", "run", "reconciliation"} {
		files := []string{"templates/layout.html", "templates/" + name + ".html"}
		if name == "accounts" {
			files = append(files, "templates/vendors.html", "templates/mcpservers.html")
		}
		t, err := template.New("layout.html").ParseFS(assets, files...)
		if err != nil {
			return nil, fmt.Errorf("dashboard: parse %s template: %w", name, err)
		}
		pages[name] = t
	}
	return pages, nil
}

// stylesheet serves the dashboard's CSS, cacheable for an hour.
func stylesheet(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "public, max-age=3600")
	http.ServeFileFS(w, r, assets, "static/style.css")
}

// ServeHTTP serves /dashboard and the paths below it.
func (d *Dashboard) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Security-Policy", "default-src 'none'; style-src 'self'; img-src 'self' data:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", "same-origin")
	d.mux.ServeHTTP(w, r)
}

// viewer is the signed-in person, resolved for one request.
type viewer struct {
	admin       bool
	accountID   string // key sessions: the only account shown
	accountName string
	// keys maps key ids to the stored keys, for hints and the admin's
	// account list.
	keys map[string]gw.Key
	// accounts lists the accounts that own keys, by name (admin only).
	accounts []accountOption
	// accountsPage: the administrator, with the accounts page available.
	accountsPage bool
}

// accountOption is one entry of the admin's account selector.
type accountOption struct {
	ID, Name string
	Selected bool
}

// label names the viewer in the header.
func (v *viewer) label() string {
	if v.admin {
		return "Administrator"
	}
	if v.accountName != "" {
		return v.accountName
	}
	return v.accountID
}

// scope returns the account a page shows: the viewer's own, or for the
// admin the one chosen in the query ("" = all accounts).
func (v *viewer) scope(q url.Values) string {
	if v.admin {
		return strings.TrimSpace(q.Get("account"))
	}
	return v.accountID
}

// nameOf returns the display name of an account ("" when unknown).
func (v *viewer) nameOf(accountID string) string {
	for _, a := range v.accounts {
		if a.ID == accountID {
			return a.Name
		}
	}
	if accountID == v.accountID {
		return v.accountName
	}
	return ""
}

// options returns the account selector with selected marked.
func (v *viewer) options(selected string) []accountOption {
	out := slices.Clone(v.accounts)
	for i := range out {
		out[i].Selected = out[i].ID == selected
	}
	return out
}

// accountLister is a store that lists every account (both stores do).
type accountLister interface {
	Accounts(ctx context.Context) ([]gw.Account, error)
}

// errNoSession says the request carries no valid session.
var errNoSession = errors.New("no valid session")

// resolve returns the viewer of r's session cookie. It fails with
// errNoSession when the cookie is missing, forged, expired, or names a
// key that was revoked since.
func (d *Dashboard) resolve(r *http.Request) (*viewer, error) {
	c, err := r.Cookie(cookieName)
	if err != nil {
		return nil, errNoSession
	}
	ss, err := d.seal.open(c.Value, d.now())
	if err != nil || d.signedOut.revoked(ss.ID) {
		return nil, errNoSession
	}
	keys, err := d.store.Keys(r.Context())
	if err != nil {
		return nil, fmt.Errorf("list keys: %w", err)
	}
	v := &viewer{admin: ss.Admin, keys: make(map[string]gw.Key, len(keys)), accountsPage: ss.Admin && d.admin != nil}
	names := map[string]string{}
	for _, k := range keys {
		v.keys[k.ID] = k
		if _, ok := names[k.AccountID]; !ok || k.AccountName != "" {
			names[k.AccountID] = k.AccountName
		}
	}
	if ss.Admin {
		if !d.hasAdmin {
			return nil, errNoSession
		}
		// Every account, when the store lists them (accounts without keys
		// too, such as the guard's operator account); else those that own
		// keys.
		if ls, ok := d.store.(accountLister); ok {
			list, err := ls.Accounts(r.Context())
			if err != nil {
				return nil, fmt.Errorf("list accounts: %w", err)
			}
			for _, a := range list {
				names[a.ID] = a.Name
			}
		}
		for id, name := range names {
			v.accounts = append(v.accounts, accountOption{ID: id, Name: name})
		}
		slices.SortFunc(v.accounts, func(a, b accountOption) int {
			if c := strings.Compare(strings.ToLower(a.Name), strings.ToLower(b.Name)); c != 0 {
				return c
			}
			return strings.Compare(a.ID, b.ID)
		})
		return v, nil
	}
	k, ok := v.keys[ss.KeyID]
	if !ok || !k.Live(d.now()) || k.AccountID != ss.AccountID {
		return nil, errNoSession
	}
	v.accountID, v.accountName = ss.AccountID, k.AccountName
	return v, nil
}

// signedIn wraps a page that needs a session: without one the browser
// goes to the sign-in page.
func (d *Dashboard) signedIn(h func(http.ResponseWriter, *http.Request, *viewer)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		v, err := d.resolve(r)
		if errors.Is(err, errNoSession) {
			d.clearCookie(w, r)
			http.Redirect(w, r, "/dashboard", http.StatusSeeOther)
			return
		}
		if err != nil {
			d.fail(w, r, nil, err)
			return
		}
		h(w, r, v)
	}
}

// index shows the sign-in form, or sends a signed-in person to the logs.
func (d *Dashboard) index(w http.ResponseWriter, r *http.Request) {
	if _, err := d.resolve(r); err == nil {
		http.Redirect(w, r, "/dashboard/logs", http.StatusSeeOther)
		return
	}
	d.render(w, r, http.StatusOK, "signin", &signinPage{basePage: basePage{Title: "Sign in"}})
}

// signinPage is the sign-in form's data.
type signinPage struct {
	basePage
	Error string
}

// signin checks a key or the admin token and starts a session.
func (d *Dashboard) signin(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, maxSigninBody)
	if err := r.ParseForm(); err != nil {
		d.render(w, r, http.StatusBadRequest, "signin", &signinPage{basePage: basePage{Title: "Sign in"}, Error: "The sign-in form could not be read."})
		return
	}
	// The key is checked first: the throttle counts and slows the failed
	// sign-ins of an address, never a valid key or the admin token
	// (whoever else fails from the same address, or behind the same
	// proxy).
	secret := strings.TrimSpace(r.PostForm.Get("key"))
	ss, err := d.authenticate(r.Context(), secret)
	if errors.Is(err, errNoSession) {
		if ok, retry := d.throttle(r.Context(), d.proxies.client(r)); !ok {
			d.log.InfoContext(r.Context(), "dashboard sign-in throttled", "remote", d.proxies.client(r))
			w.Header().Set("Retry-After", strconv.Itoa(int(max(retry, time.Second).Round(time.Second)/time.Second)))
			d.render(w, r, http.StatusTooManyRequests, "signin", &signinPage{basePage: basePage{Title: "Sign in"}, Error: "Too many sign-in attempts from your address; wait a minute and try again."})
			return
		}
		d.log.InfoContext(r.Context(), "dashboard sign-in refused", "remote", r.RemoteAddr)
		d.render(w, r, http.StatusUnauthorized, "signin", &signinPage{basePage: basePage{Title: "Sign in"}, Error: "That key is not valid, or it has been revoked."})
		return
	}
	if err != nil {
		d.fail(w, r, nil, err)
		return
	}
	if ss.ID, err = newSessionID(); err != nil {
		d.fail(w, r, nil, err)
		return
	}
	value, err := d.seal.seal(ss)
	if err != nil {
		d.fail(w, r, nil, err)
		return
	}
	http.SetCookie(w, &http.Cookie{
		Name:     cookieName,
		Value:    value,
		Path:     "/dashboard",
		MaxAge:   int(sessionTTL / time.Second),
		HttpOnly: true,
		Secure:   d.proxies.overTLS(r),
		SameSite: http.SameSiteStrictMode,
	})
	http.Redirect(w, r, "/dashboard/logs", http.StatusSeeOther)
}

// authenticate returns the session for an API key or the admin token;
// errNoSession when it is neither.
func (d *Dashboard) authenticate(ctx context.Context, secret string) (session, error) {
	exp := d.now().Add(sessionTTL).Unix()
	if secret == "" {
		return session{}, errNoSession
	}
	// Compare hashes so that the comparison takes the same time whatever
	// the lengths.
	h := sha256.Sum256([]byte(secret))
	if d.hasAdmin && subtle.ConstantTimeCompare(h[:], d.adminHash[:]) == 1 {
		return session{Admin: true, Expires: exp}, nil
	}
	if !auth.WellFormed(secret) {
		return session{}, errNoSession
	}
	p, err := d.store.KeyByHash(ctx, auth.Hash(secret))
	if errors.Is(err, gw.ErrNotFound) {
		return session{}, errNoSession
	}
	if err != nil {
		return session{}, fmt.Errorf("look up key: %w", err)
	}
	if p.AccountID == "" {
		return session{}, errNoSession
	}
	return session{AccountID: p.AccountID, KeyID: p.KeyID, Expires: exp}, nil
}

// signout ends the session, here and in the browser.
func (d *Dashboard) signout(w http.ResponseWriter, r *http.Request) {
	if c, err := r.Cookie(cookieName); err == nil {
		if ss, err := d.seal.open(c.Value, d.now()); err == nil {
			d.signedOut.revoke(ss.ID, ss.Expires, d.now())
		}
	}
	d.clearCookie(w, r)
	http.Redirect(w, r, "/dashboard", http.StatusSeeOther)
}

// clearCookie tells the browser to drop the session cookie.
func (d *Dashboard) clearCookie(w http.ResponseWriter, r *http.Request) {
	if _, err := r.Cookie(cookieName); err != nil {
		return
	}
	http.SetCookie(w, &http.Cookie{
		Name:     cookieName,
		Value:    "",
		Path:     "/dashboard",
		MaxAge:   -1,
		HttpOnly: true,
		Secure:   d.proxies.overTLS(r),
		SameSite: http.SameSiteStrictMode,
	})
}

// basePage holds what the layout shows on every page.
type basePage struct {
	Title string
	// Nav is the current section: "logs" or "activity".
	Nav string
	// Who names the signed-in person; empty on the sign-in page.
	Who   string
	Admin bool
	// LogsURL, ActivityURL and IncidentsURL keep the admin's account
	// choice.
	LogsURL, ActivityURL, IncidentsURL string
	// RunsURL keeps it for the runs page.
	RunsURL string
	// AccountsPage says the accounts page exists (the admin, with the
	// admin service configured).
	AccountsPage bool
	Notices      []string
}

// base fills the layout's fields for a signed-in page.
func base(v *viewer, title, nav, account string) basePage {
	q := url.Values{}
	if v.admin && account != "" {
		q.Set("account", account)
	}
	return basePage{
		Title:        title,
		Nav:          nav,
		Who:          v.label(),
		Admin:        v.admin,
		LogsURL:      withQuery("/dashboard/logs", q),
		ActivityURL:  withQuery("/dashboard/activity", q),
		IncidentsURL: withQuery("/dashboard/incidents", q),
		RunsURL:      withQuery("/dashboard/runs", q),
		AccountsPage: v.accountsPage,
	}
}

// adminOnly answers "not found" to anyone but the administrator.
func (d *Dashboard) adminOnly(h func(http.ResponseWriter, *http.Request, *viewer)) func(http.ResponseWriter, *http.Request, *viewer) {
	return func(w http.ResponseWriter, r *http.Request, v *viewer) {
		if !v.admin {
			d.notFound(w, r)
			return
		}
		h(w, r, v)
	}
}

// withQuery appends q to path when q is not empty.
func withQuery(path string, q url.Values) string {
	if len(q) == 0 {
		return path
	}
	return path + "?" + q.Encode()
}

// errorPage is the error page's data.
type errorPage struct {
	basePage
	Heading, Message string
}

// render executes a page into a buffer, then writes it, so that a
// template failure becomes a clean 500 rather than half a page.
func (d *Dashboard) render(w http.ResponseWriter, r *http.Request, status int, page string, data any) {
	var buf bytes.Buffer
	if err := d.pages[page].ExecuteTemplate(&buf, "layout", data); err != nil {
		d.log.ErrorContext(r.Context(), "dashboard render", "page", page, "err", err)
		http.Error(w, "The page could not be rendered.", http.StatusInternalServerError)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	w.Write(buf.Bytes())
}

// fail logs err and shows a generic error page; the cause stays in the
// log.
func (d *Dashboard) fail(w http.ResponseWriter, r *http.Request, v *viewer, err error) {
	d.log.ErrorContext(r.Context(), "dashboard", "path", r.URL.Path, "err", err)
	p := &errorPage{basePage: basePage{Title: "Error"}, Heading: "Something went wrong", Message: "The dashboard could not load this page. Try again in a moment."}
	if v != nil {
		p.basePage = base(v, "Error", "", v.scope(r.URL.Query()))
	}
	d.render(w, r, http.StatusInternalServerError, "error", p)
}

// notFound answers paths the dashboard does not serve.
func (d *Dashboard) notFound(w http.ResponseWriter, r *http.Request) {
	p := &errorPage{basePage: basePage{Title: "Not found"}, Heading: "Page not found", Message: "There is no dashboard page at this address."}
	if v, err := d.resolve(r); err == nil {
		p.basePage = base(v, "Not found", "", "")
	}
	d.render(w, r, http.StatusNotFound, "error", p)
}
