package admin

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	gw "github.com/gwlabs/gateway"
	"github.com/gwlabs/gateway/auth"
)

// Store is what Local needs: the gateway's store plus the admin reads and
// writes both stores have.
type Store interface {
	gw.Store
	Accounts(ctx context.Context) ([]gw.Account, error)
	AccountByID(ctx context.Context, id string) (*gw.Account, error)
	EndKeyAt(ctx context.Context, id string, at time.Time) error
	TopUpRef(ctx context.Context, accountID string, amount gw.Money, reference, note string) (gw.LedgerEntry, bool, error)
	Ledger(ctx context.Context, accountID string, before int64, limit int) ([]gw.LedgerEntry, error)
	KeyUsage(ctx context.Context) (map[string]gw.KeyUsage, error)
	SetKeyOptimize(ctx context.Context, id string, off bool) error
	SetKeyModels(ctx context.Context, id string, models []string) error
}

// Limits bound what one call may ask for.
const (
	MaxNameLen     = 200
	MaxNoteLen     = 1000
	MaxLedgerPage  = 1000
	DefaultPage    = 100
	MaxRotateGrace = 30 * 24 * time.Hour
	// DefaultRotateGrace is how long a rotated key keeps working when the
	// caller names no grace period.
	DefaultRotateGrace = time.Hour
)

// Local is the Service on the store itself.
type Local struct {
	Store Store
	// Now is the clock (nil: time.Now).
	Now func() time.Time
	// OnRevoke, when set, hears of every key revoked or ended here, so
	// that a cache of keys can forget it at once.
	OnRevoke func(keyID string)
	// OnPolicy, when set, hears of every guard policy changed here (a
	// key's id, or "" for an account's), so that a cache of policies
	// can forget it.
	OnPolicy func(keyID string)
	// MCPConfigServers are the configuration file's MCP servers (their
	// secrets redacted): listed beside the store's, their names not
	// taken by a stored one.
	MCPConfigServers []MCPServer
	// MCPAdminStdio allows adding stdio MCP servers (a command the
	// gateway runs) through this service: the configuration file's
	// mcp.admin_stdio. Off, only streamable HTTP servers are added.
	MCPAdminStdio bool
}

var _ Service = (*Local)(nil)

func (l *Local) now() time.Time {
	if l.Now != nil {
		return l.Now()
	}
	return time.Now()
}

func invalid(format string, a ...any) error { return gw.Errorf(gw.CodeInvalidRequest, format, a...) }

func notFound(what, id string) error { return gw.Errorf(gw.CodeNotFound, "no %s %q", what, id) }

func validName(what, s string, required bool) error {
	switch {
	case required && strings.TrimSpace(s) == "":
		return invalid("%s is required", what)
	case len(s) > MaxNameLen:
		return invalid("%s is longer than %d bytes", what, MaxNameLen)
	case strings.ContainsAny(s, "\x00\r\n"):
		return invalid("%s must be one line", what)
	}
	return nil
}

func (l *Local) CreateAccount(ctx context.Context, name string) (*Account, error) {
	if err := validName("name", name, true); err != nil {
		return nil, err
	}
	if _, err := l.Store.AccountByName(ctx, name); err == nil {
		return nil, gw.Errorf(gw.CodeConflict, "an account named %q exists", name)
	} else if !errors.Is(err, gw.ErrNotFound) {
		return nil, err
	}
	a, err := l.Store.EnsureAccount(ctx, name)
	if err != nil {
		return nil, err
	}
	return l.withBalance(ctx, a)
}

func (l *Local) withBalance(ctx context.Context, a *gw.Account) (*Account, error) {
	b, err := l.Store.Balance(ctx, a.ID)
	if err != nil {
		return nil, err
	}
	budgets, err := l.accountBudgets(ctx, a.ID)
	if err != nil {
		return nil, err
	}
	return &Account{ID: a.ID, Name: a.Name, CreatedAt: a.CreatedAt, Balance: toBalance(b), Budgets: budgets}, nil
}

func (l *Local) Accounts(ctx context.Context) ([]Account, error) {
	list, err := l.Store.Accounts(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]Account, 0, len(list))
	for i := range list {
		a, err := l.withBalance(ctx, &list[i])
		if err != nil {
			return nil, err
		}
		out = append(out, *a)
	}
	return out, nil
}

// account finds an account by id, then by name.
func (l *Local) account(ctx context.Context, idOrName string) (*gw.Account, error) {
	a, err := l.Store.AccountByID(ctx, idOrName)
	if errors.Is(err, gw.ErrNotFound) {
		a, err = l.Store.AccountByName(ctx, idOrName)
	}
	if errors.Is(err, gw.ErrNotFound) {
		return nil, notFound("account", idOrName)
	}
	return a, err
}

func (l *Local) Account(ctx context.Context, idOrName string) (*Account, error) {
	a, err := l.account(ctx, idOrName)
	if err != nil {
		return nil, err
	}
	return l.withBalance(ctx, a)
}

func (l *Local) TopUp(ctx context.Context, account string, req TopUpRequest) (*TopUpResult, error) {
	amount, err := gw.ParseUSD(req.AmountUSD)
	if err != nil || amount <= 0 {
		return nil, invalid("amount_usd must be a positive amount of US dollars, not %q", req.AmountUSD)
	}
	if err := validName("reference", req.Reference, false); err != nil {
		return nil, err
	}
	if len(req.Note) > MaxNoteLen {
		return nil, invalid("note is longer than %d bytes", MaxNoteLen)
	}
	a, err := l.account(ctx, account)
	if err != nil {
		return nil, err
	}
	e, dup, err := l.Store.TopUpRef(ctx, a.ID, amount, req.Reference, req.Note)
	if err != nil {
		return nil, err
	}
	acct, err := l.withBalance(ctx, a)
	if err != nil {
		return nil, err
	}
	return &TopUpResult{Entry: toEntry(e), Duplicate: dup, Account: *acct}, nil
}

func (l *Local) Ledger(ctx context.Context, account string, before int64, limit int) (*LedgerPage, error) {
	if limit <= 0 {
		limit = DefaultPage
	}
	if limit > MaxLedgerPage {
		return nil, invalid("limit is at most %d", MaxLedgerPage)
	}
	a, err := l.account(ctx, account)
	if err != nil {
		return nil, err
	}
	list, err := l.Store.Ledger(ctx, a.ID, before, limit+1)
	if err != nil {
		return nil, err
	}
	page := &LedgerPage{Data: []LedgerEntry{}}
	if len(list) > limit {
		list = list[:limit]
		page.NextBefore = list[limit-1].ID
	}
	for _, e := range list {
		page.Data = append(page.Data, toEntry(e))
	}
	return page, nil
}

func (l *Local) CreateKey(ctx context.Context, req KeyRequest) (*CreatedKey, error) {
	if err := validName("name", req.Name, false); err != nil {
		return nil, err
	}
	if req.RPM < 0 || req.TPM < 0 {
		return nil, invalid("rpm and tpm must not be negative")
	}
	if req.ExpiresAt != nil && !req.ExpiresAt.After(l.now()) {
		return nil, invalid("expires_at must be in the future")
	}
	off, err := optimizeOff(req.Optimize, false)
	if err != nil {
		return nil, err
	}
	models, err := validModels(req.Models)
	if err != nil {
		return nil, err
	}
	var budget gw.Budget
	if req.DailyBudgetUSD != "" || req.MonthlyBudgetUSD != "" {
		d, m := &req.DailyBudgetUSD, &req.MonthlyBudgetUSD
		if *d == "" {
			d = nil
		}
		if *m == "" {
			m = nil
		}
		if budget, _, err = budgetUpdate(d, m, gw.Budget{}); err != nil {
			return nil, err
		}
	}
	if req.Guard != nil {
		if err := validPolicy(req.Guard); err != nil {
			return nil, err
		}
	}
	if strings.TrimSpace(req.Account) == "" {
		return nil, invalid("account is required")
	}
	a, err := l.account(ctx, req.Account)
	if err != nil {
		return nil, err
	}
	k, err := l.issue(ctx, a, req.Name, gw.Limit{RPM: req.RPM, TPM: req.TPM}, req.ExpiresAt, off, budget)
	if err != nil {
		return nil, err
	}
	if len(models) > 0 {
		if err := l.Store.SetKeyModels(ctx, k.ID, models); err != nil {
			return nil, err
		}
		k.Models = models
	}
	if req.Guard != nil {
		if err := l.Store.SetGuardPolicy(ctx, "key", k.ID, req.Guard.gw()); err != nil {
			return nil, fmt.Errorf("key %s created, but its guard policy was not set: %w", k.ID, err)
		}
	}
	if k.Guard, err = l.effectivePolicy(ctx, k.ID, a.ID); err != nil {
		return nil, err
	}
	return k, nil
}

// effectivePolicy is the policy a key runs under (nil when the store
// keeps none).
func (l *Local) effectivePolicy(ctx context.Context, keyID, accountID string) (*GuardPolicy, error) {
	kp, ap, err := l.Store.GuardPolicies(ctx, keyID, accountID)
	if err != nil {
		return nil, err
	}
	return toGuardPolicy(gw.EffectiveGuardPolicy(kp, ap)), nil
}

// validPolicy checks a policy's names and thresholds.
func validPolicy(p *GuardPolicy) error {
	switch p.Mode {
	case "", gw.GuardBlock, gw.GuardMonitor, gw.GuardOff:
	default:
		return invalid("guard.mode must be block, monitor or off, not %q", p.Mode)
	}
	switch p.Scope {
	case "", "user", "tools", "all":
	default:
		return invalid("guard.scope must be user, tools or all, not %q", p.Scope)
	}
	for _, t := range []struct {
		name string
		v    float64
	}{{"user_threshold", p.UserThreshold}, {"tool_threshold", p.ToolThreshold}, {"assistant_threshold", p.AssistantThreshold}} {
		if t.v < 0 || t.v >= 1 {
			return invalid("guard.%s must be in (0, 1) (0: the guard's), not %v", t.name, t.v)
		}
	}
	return nil
}

// mergePolicy lays the set fields of over on base (nil: none yet).
func mergePolicy(base *gw.GuardPolicy, over gw.GuardPolicy) gw.GuardPolicy {
	if base == nil {
		return over
	}
	return base.With(&over)
}

// MaxModels bounds a key's allow list.
const MaxModels = 100

// validModels checks an allow list: prefixed ids or patterns ending in
// "*", no commas, at most MaxModels entries.
func validModels(models []string) ([]string, error) {
	if len(models) > MaxModels {
		return nil, invalid("models: at most %d entries", MaxModels)
	}
	out := make([]string, 0, len(models))
	for _, m := range models {
		m = strings.TrimSpace(m)
		switch {
		case m == "":
			continue
		case strings.ContainsAny(m, ", \t\n"), len(m) > 256, m != "*" && !strings.Contains(m, "/"):
			return nil, invalid("models: %q is not a prefixed model id (openai/gpt-6-sol) or a pattern ending in * (openai/*)", m)
		}
		out = append(out, m)
	}
	return out, nil
}

// optimizeOff reads an "on"/"off" switch; "" keeps def.
func optimizeOff(s string, def bool) (bool, error) {
	switch s {
	case "":
		return def, nil
	case "on":
		return false, nil
	case "off":
		return true, nil
	}
	return false, invalid("optimize must be on or off, not %q", s)
}

func (l *Local) issue(ctx context.Context, a *gw.Account, name string, lim gw.Limit, ends *time.Time, optimizeOff bool, budget gw.Budget) (*CreatedKey, error) {
	secret, id, hash, err := auth.NewKey()
	if err != nil {
		return nil, err
	}
	k := &gw.Key{ID: id, AccountID: a.ID, AccountName: a.Name, Name: name, Hint: auth.Hint(secret), CreatedAt: l.now(), RPM: lim.RPM, TPM: lim.TPM, RevokedAt: ends, OptimizeOff: optimizeOff,
		Budget: budget}
	if err := l.Store.CreateKey(ctx, k, hash); err != nil {
		return nil, err
	}
	out := &CreatedKey{Key: toKey(k, gw.KeyUsage{}, l.now()), Secret: secret}
	if out.Budgets, err = l.keyBudgets(ctx, k); err != nil {
		return nil, err
	}
	return out, nil
}

func (l *Local) Keys(ctx context.Context) ([]Key, error) {
	keys, err := l.Store.Keys(ctx)
	if err != nil {
		return nil, err
	}
	usage, err := l.Store.KeyUsage(ctx)
	if err != nil {
		return nil, err
	}
	now := l.now()
	out := make([]Key, 0, len(keys))
	for i := range keys {
		k := toKey(&keys[i], usage[keys[i].ID], now)
		if k.Budgets, err = l.keyBudgets(ctx, &keys[i]); err != nil {
			return nil, err
		}
		out = append(out, k)
	}
	return out, nil
}

func (l *Local) key(ctx context.Context, id string) (*gw.Key, error) {
	keys, err := l.Store.Keys(ctx)
	if err != nil {
		return nil, err
	}
	for i := range keys {
		if keys[i].ID == id {
			return &keys[i], nil
		}
	}
	return nil, notFound("key", id)
}

// RotateKey issues a new secret with the old key's account, name and
// limits; the old key keeps working for grace, then ends.
func (l *Local) RotateKey(ctx context.Context, id string, grace time.Duration) (*CreatedKey, error) {
	if grace < 0 || grace > MaxRotateGrace {
		return nil, invalid("the grace period must be between 0 and %s", MaxRotateGrace)
	}
	old, err := l.key(ctx, id)
	if err != nil {
		return nil, err
	}
	now := l.now()
	if !old.Live(now) {
		return nil, gw.Errorf(gw.CodeConflict, "key %s is revoked; create a new one instead", id)
	}
	a, err := l.account(ctx, old.AccountID)
	if err != nil {
		return nil, err
	}
	created, err := l.issue(ctx, a, old.Name, gw.Limit{RPM: old.RPM, TPM: old.TPM}, old.RevokedAt, old.OptimizeOff, old.Budget)
	if err != nil {
		return nil, err
	}
	if len(old.Models) > 0 {
		if err := l.Store.SetKeyModels(ctx, created.ID, old.Models); err != nil {
			return nil, err
		}
		created.Models = old.Models
	}
	if err := l.Store.EndKeyAt(ctx, id, now.Add(grace)); err != nil {
		return nil, err
	}
	if l.OnRevoke != nil {
		l.OnRevoke(id)
	}
	if old, err = l.key(ctx, id); err != nil {
		return nil, err
	}
	if created.Replaces, err = l.withUse(ctx, old); err != nil {
		return nil, err
	}
	if created.Guard, err = l.effectivePolicy(ctx, created.ID, created.AccountID); err != nil {
		return nil, err
	}
	return created, nil
}

func (l *Local) RevokeKey(ctx context.Context, id string) (*Key, error) {
	if err := l.Store.RevokeKey(ctx, id); err != nil {
		if errors.Is(err, gw.ErrNotFound) {
			return nil, notFound("key", id)
		}
		return nil, err
	}
	if l.OnRevoke != nil {
		l.OnRevoke(id)
	}
	k, err := l.key(ctx, id)
	if err != nil {
		return nil, err
	}
	return l.withUse(ctx, k)
}

// UpdateKey changes a key's settings.
func (l *Local) UpdateKey(ctx context.Context, id string, u KeyUpdate) (*Key, error) {
	k, err := l.key(ctx, id)
	if err != nil {
		return nil, err
	}
	off, err := optimizeOff(u.Optimize, k.OptimizeOff)
	if err != nil {
		return nil, err
	}
	var models []string
	if u.Models != nil {
		if models, err = validModels(*u.Models); err != nil {
			return nil, err
		}
	}
	budget, budgetChanged, err := budgetUpdate(u.DailyBudgetUSD, u.MonthlyBudgetUSD, k.Budget)
	if err != nil {
		return nil, err
	}
	lim, limitsChanged := gw.Limit{RPM: k.RPM, TPM: k.TPM}, u.RPM != nil || u.TPM != nil
	var ls limitStore
	if limitsChanged {
		if u.RPM != nil {
			lim.RPM = *u.RPM
		}
		if u.TPM != nil {
			lim.TPM = *u.TPM
		}
		if lim.RPM < 0 || lim.TPM < 0 {
			return nil, invalid("rpm and tpm must not be negative (0: the gateway's defaults)")
		}
		var ok bool
		if ls, ok = l.Store.(limitStore); !ok {
			return nil, invalid("this store cannot change a key's limits")
		}
	}
	if limitsChanged {
		if err := ls.SetKeyLimits(ctx, id, lim); err != nil {
			return nil, err
		}
		k.RPM, k.TPM = lim.RPM, lim.TPM
		if l.OnRevoke != nil {
			l.OnRevoke(id) // the cached principal carries the old limits
		}
	}
	if budgetChanged {
		if err := l.Store.SetKeyBudget(ctx, id, budget); err != nil {
			return nil, err
		}
		k.Budget = budget
		if l.OnRevoke != nil {
			l.OnRevoke(id) // the cached principal carries the old budget
		}
	}
	if u.Guard != nil {
		if err := validPolicy(u.Guard); err != nil {
			return nil, err
		}
		cur, _, err := l.Store.GuardPolicies(ctx, id, "")
		if err != nil {
			return nil, err
		}
		if err := l.Store.SetGuardPolicy(ctx, "key", id, mergePolicy(cur, u.Guard.gw())); err != nil {
			return nil, err
		}
		if l.OnPolicy != nil {
			l.OnPolicy(id)
		}
	}
	if off != k.OptimizeOff {
		if err := l.Store.SetKeyOptimize(ctx, id, off); err != nil {
			return nil, err
		}
		k.OptimizeOff = off
	}
	if u.Models != nil {
		if err := l.Store.SetKeyModels(ctx, id, models); err != nil {
			return nil, err
		}
		k.Models = models
		if l.OnRevoke != nil {
			l.OnRevoke(id) // the cached principal carries the old list
		}
	}
	return l.withUse(ctx, k)
}

// limitStore changes a key's rate limits (the SQLite and PostgreSQL
// stores).
type limitStore interface {
	SetKeyLimits(ctx context.Context, id string, lim gw.Limit) error
}

// withUse is a key as answered alone: with its use, spend and effective
// guard policy.
func (l *Local) withUse(ctx context.Context, k *gw.Key) (*Key, error) {
	usage, err := l.Store.KeyUsage(ctx)
	if err != nil {
		return nil, err
	}
	out := toKey(k, usage[k.ID], l.now())
	if out.Guard, err = l.effectivePolicy(ctx, k.ID, k.AccountID); err != nil {
		return nil, err
	}
	if out.Budgets, err = l.keyBudgets(ctx, k); err != nil {
		return nil, err
	}
	return &out, nil
}

// Key is one key with its use, spend and effective guard policy.
func (l *Local) Key(ctx context.Context, id string) (*Key, error) {
	k, err := l.key(ctx, id)
	if err != nil {
		return nil, err
	}
	return l.withUse(ctx, k)
}

// UpdateAccount changes an account's guard policy and budgets.
func (l *Local) UpdateAccount(ctx context.Context, account string, u AccountUpdate) (*Account, error) {
	budgetGiven := u.DailyBudgetUSD != nil || u.MonthlyBudgetUSD != nil
	if u.Guard == nil && !budgetGiven {
		return nil, invalid("nothing to change: give guard, daily_budget_usd or monthly_budget_usd")
	}
	// Everything is checked before anything changes.
	if budgetGiven {
		if _, _, err := budgetUpdate(u.DailyBudgetUSD, u.MonthlyBudgetUSD, gw.Budget{}); err != nil {
			return nil, err
		}
	}
	if u.Guard != nil {
		if err := validPolicy(u.Guard); err != nil {
			return nil, err
		}
	}
	a, err := l.account(ctx, account)
	if err != nil {
		return nil, err
	}
	if budgetGiven {
		if err := l.setAccountBudget(ctx, a.ID, u); err != nil {
			return nil, err
		}
	}
	var guard *GuardPolicy
	if u.Guard != nil {
		_, cur, err := l.Store.GuardPolicies(ctx, "", a.ID)
		if err != nil {
			return nil, err
		}
		p := mergePolicy(cur, u.Guard.gw())
		if err := l.Store.SetGuardPolicy(ctx, "account", a.ID, p); err != nil {
			return nil, err
		}
		if l.OnPolicy != nil {
			l.OnPolicy("")
		}
		guard = toGuardPolicy(p)
	}
	out, err := l.withBalance(ctx, a)
	if err != nil {
		return nil, err
	}
	out.Guard = guard
	return out, nil
}

func (l *Local) Incidents(ctx context.Context, limit int) ([]Incident, error) {
	if limit <= 0 {
		limit = DefaultPage
	}
	if limit > MaxLedgerPage {
		return nil, invalid("limit is at most %d", MaxLedgerPage)
	}
	list, err := l.Store.Incidents(ctx, limit)
	if err != nil {
		return nil, err
	}
	out := make([]Incident, 0, len(list))
	ids := make([]string, 0, len(list))
	for i := range list {
		out = append(out, toIncident(&list[i]))
		ids = append(ids, list[i].ID)
	}
	return out, l.addReviews(ctx, out, ids)
}

// addReviews fills in the reviews of incidents.
func (l *Local) addReviews(ctx context.Context, list []Incident, ids []string) error {
	if len(ids) == 0 {
		return nil
	}
	reviews, err := l.Store.IncidentReviews(ctx, ids)
	if err != nil {
		return fmt.Errorf("incident reviews: %w", err)
	}
	for i := range list {
		if r, ok := reviews[list[i].ID]; ok {
			list[i].Review = &Review{Verdict: r.Verdict, Note: r.Note, ReviewedAt: r.ReviewedAt}
		}
	}
	return nil
}

// ReviewIncident records a review and answers the incident with it.
func (l *Local) ReviewIncident(ctx context.Context, id string, r ReviewRequest) (*Incident, error) {
	if r.Verdict != gw.ReviewFalsePositive && r.Verdict != gw.ReviewConfirmed {
		return nil, invalid("verdict must be false-positive or confirmed, not %q", r.Verdict)
	}
	if len(r.Note) > MaxNoteLen {
		return nil, invalid("note is longer than %d bytes", MaxNoteLen)
	}
	if err := l.Store.ReviewIncident(ctx, gw.IncidentReview{IncidentID: id, Verdict: r.Verdict, Note: r.Note, ReviewedAt: l.now()}); err != nil {
		if errors.Is(err, gw.ErrNotFound) {
			return nil, notFound("incident", id)
		}
		return nil, err
	}
	return l.Incident(ctx, id)
}

func (l *Local) Incident(ctx context.Context, id string) (*Incident, error) {
	in, err := l.Store.Incident(ctx, id)
	if errors.Is(err, gw.ErrNotFound) {
		return nil, notFound("incident", id)
	}
	if err != nil {
		return nil, fmt.Errorf("incident: %w", err)
	}
	out := []Incident{toIncident(in)}
	if err := l.addReviews(ctx, out, []string{id}); err != nil {
		return nil, err
	}
	return &out[0], nil
}
