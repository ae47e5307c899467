package admin

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"time"

	gw "github.com/gwlabs/gateway"
)

// ReconLine is one compared figure of a reconciliation (see
// docs/RECONCILIATION.md): the ledger's and the vendor's, their drift
// and the alert it raises.
type ReconLine struct {
	Vendor string `json:"vendor"`
	Day    string `json:"day"`   // YYYY-MM-DD, UTC
	Level  string `json:"level"` // vendor, model, tokens, balance
	Model  string `json:"model,omitempty"`
	// VendorKey is the vendor's key id where its report groups by key.
	VendorKey string `json:"vendor_key,omitempty"`
	// Class is the token class of a tokens line.
	Class string `json:"class,omitempty"`
	// Unit is "usd" (LedgerUSD and ReportedUSD are set) or "tokens"
	// (LedgerTokens and ReportedTokens are).
	Unit           string `json:"unit"`
	LedgerUSD      string `json:"ledger_usd,omitempty"`
	ReportedUSD    string `json:"reported_usd,omitempty"`
	LedgerTokens   *int64 `json:"ledger_tokens,omitempty"`
	ReportedTokens *int64 `json:"reported_tokens,omitempty"`
	// Drift is (ledger - vendor) / max(ledger, vendor) as a decimal
	// fraction ("-0.020100"); DriftPPM the same in parts per million.
	Drift    string `json:"drift"`
	DriftPPM int64  `json:"drift_ppm"`
	Status   string `json:"status"` // match, drift, unreconcilable, error
	Alert    string `json:"alert,omitempty"`
	// OurPriceUSD and ImpliedPriceUSD are per million tokens, on a
	// price_table_stale line.
	OurPriceUSD     string    `json:"our_price_usd_per_mtok,omitempty"`
	ImpliedPriceUSD string    `json:"implied_price_usd_per_mtok,omitempty"`
	Final           bool      `json:"final"`
	CheckedAt       time.Time `json:"checked_at"`
	Note            string    `json:"note,omitempty"`
}

// ReconQuery selects reconciliation lines: Vendor "" for all, Since and
// Until days (YYYY-MM-DD, Until inclusive; "" for no bound), AlertsOnly
// the lines that alert.
type ReconQuery struct {
	Vendor     string
	Since      string
	Until      string
	AlertsOnly bool
}

// Adjustment is an OpenRouter generation whose vendor cost differs from
// what the gateway charged on by more than a micro-cent: the operator
// approves (accepts the vendor's figure, to settle with the customer by
// hand) or dismisses it. Nothing is ever re-billed by it.
type Adjustment struct {
	RequestID    string     `json:"request_id"`
	AccountID    string     `json:"account_id"`
	Vendor       string     `json:"vendor"`
	Model        string     `json:"model"`
	GenerationID string     `json:"generation_id"`
	LedgerUSD    string     `json:"ledger_usd"`   // the vendor cost the gateway computed
	ReportedUSD  string     `json:"reported_usd"` // the vendor's generation record
	DiffUSD      string     `json:"diff_usd"`     // reported - ledger
	ChargeUSD    string     `json:"charge_usd"`   // what the customer was charged
	Status       string     `json:"status"`       // pending, approved, dismissed
	CreatedAt    time.Time  `json:"created_at"`   // the request's time
	DecidedAt    *time.Time `json:"decided_at,omitempty"`
	DecidedBy    string     `json:"decided_by,omitempty"`
}

// Reconciler is the part of Service that shows reconciliation.
type Reconciler interface {
	Reconciliation(ctx context.Context, q ReconQuery) ([]ReconLine, error)
	// Adjustments lists adjustments in status ("" for pending, approved
	// and dismissed), newest first.
	Adjustments(ctx context.Context, status string) ([]Adjustment, error)
	// DecideAdjustment approves or dismisses a pending adjustment
	// (status "approved" or "dismissed").
	DecideAdjustment(ctx context.Context, requestID, status string) (*Adjustment, error)
}

// ReconLineOf is a store line in the API's shape.
func ReconLineOf(l gw.ReconLine) ReconLine {
	out := ReconLine{Vendor: l.Vendor, Day: l.Day.UTC().Format(time.DateOnly), Level: l.Level, Model: l.Model,
		VendorKey: l.VendorKey, Class: l.Class, Drift: driftString(l.DriftPPM), DriftPPM: l.DriftPPM,
		Status: l.Status, Alert: l.Alert, Final: l.Final, CheckedAt: l.CheckedAt.UTC(), Note: l.Note}
	if l.Level == gw.ReconTokens {
		led, rep := l.Ledger, l.Reported
		out.Unit, out.LedgerTokens, out.ReportedTokens = "tokens", &led, &rep
	} else {
		out.Unit, out.LedgerUSD, out.ReportedUSD = "usd", gw.Money(l.Ledger).USDString(), gw.Money(l.Reported).USDString()
	}
	if l.Alert == gw.AlertPriceStale {
		out.OurPriceUSD, out.ImpliedPriceUSD = l.OurPrice.USDString(), l.ImpliedPrice.USDString()
	}
	return out
}

// driftString writes parts per million as a decimal fraction.
func driftString(ppm int64) string {
	sign := ""
	if ppm < 0 {
		sign, ppm = "-", -ppm
	}
	frac := strconv.FormatInt(ppm%1_000_000, 10)
	for len(frac) < 6 {
		frac = "0" + frac
	}
	return sign + strconv.FormatInt(ppm/1_000_000, 10) + "." + frac
}

// AdjustmentOf is a store adjustment in the API's shape.
func AdjustmentOf(a gw.Adjustment) Adjustment {
	out := Adjustment{RequestID: a.RequestID, AccountID: a.AccountID, Vendor: a.Vendor, Model: a.Model, GenerationID: a.GenerationID,
		LedgerUSD: a.Ledger.USDString(), ReportedUSD: a.Reported.USDString(), DiffUSD: (a.Reported - a.Ledger).USDString(),
		ChargeUSD: a.Charge.USDString(), Status: a.Status, CreatedAt: a.CreatedAt.UTC(), DecidedBy: a.DecidedBy}
	if !a.DecidedAt.IsZero() {
		t := a.DecidedAt.UTC()
		out.DecidedAt = &t
	}
	return out
}

func (l *Local) reconStore() (gw.ReconcileStore, error) {
	rs, ok := l.Store.(gw.ReconcileStore)
	if !ok {
		return nil, gw.Errorf(gw.CodeNotFound, "this store keeps no reconciliation")
	}
	return rs, nil
}

func parseDay(what, s string) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	d, err := time.Parse(time.DateOnly, s)
	if err != nil {
		return time.Time{}, invalid("%s must be a day, YYYY-MM-DD, not %q", what, s)
	}
	return d, nil
}

// Reconciliation lists the reconciliation lines q selects, newest day
// first.
func (l *Local) Reconciliation(ctx context.Context, q ReconQuery) ([]ReconLine, error) {
	rs, err := l.reconStore()
	if err != nil {
		return nil, err
	}
	since, err := parseDay("since", q.Since)
	if err != nil {
		return nil, err
	}
	until, err := parseDay("until", q.Until)
	if err != nil {
		return nil, err
	}
	if !until.IsZero() {
		until = until.Add(24 * time.Hour)
	}
	lines, err := rs.Recon(ctx, gw.ReconFilter{Vendor: q.Vendor, Since: since, Until: until, AlertsOnly: q.AlertsOnly})
	if err != nil {
		return nil, err
	}
	out := make([]ReconLine, 0, len(lines))
	for _, ln := range lines {
		out = append(out, ReconLineOf(ln))
	}
	return out, nil
}

// Adjustments lists adjustments in status.
func (l *Local) Adjustments(ctx context.Context, status string) ([]Adjustment, error) {
	rs, err := l.reconStore()
	if err != nil {
		return nil, err
	}
	switch status {
	case "", gw.AdjustmentPending, gw.AdjustmentApproved, gw.AdjustmentDismissed:
	default:
		return nil, invalid("status must be pending, approved or dismissed, not %q", status)
	}
	list, err := rs.Adjustments(ctx, status, 1000)
	if err != nil {
		return nil, err
	}
	out := make([]Adjustment, 0, len(list))
	for _, a := range list {
		out = append(out, AdjustmentOf(a))
	}
	return out, nil
}

// DecideAdjustment approves or dismisses a pending adjustment; the
// customer's charge is never changed by it.
func (l *Local) DecideAdjustment(ctx context.Context, requestID, status string) (*Adjustment, error) {
	rs, err := l.reconStore()
	if err != nil {
		return nil, err
	}
	if status != gw.AdjustmentApproved && status != gw.AdjustmentDismissed {
		return nil, invalid("an adjustment is approved or dismissed, not %q", status)
	}
	if err := rs.DecideAdjustment(ctx, requestID, status, "admin", l.now()); err != nil {
		if errors.Is(err, gw.ErrNotFound) {
			return nil, notFound("pending adjustment", requestID)
		}
		return nil, err
	}
	list, err := rs.Adjustments(ctx, status, 1000)
	if err != nil {
		return nil, err
	}
	for _, a := range list {
		if a.RequestID == requestID {
			v := AdjustmentOf(a)
			return &v, nil
		}
	}
	return nil, notFound("adjustment", requestID)
}

// reconRoutes are reconciliation's endpoints.
var reconRoutes = []string{
	"GET /admin/v1/reconciliation",
	"GET /admin/v1/reconciliation/adjustments",
	"POST /admin/v1/reconciliation/adjustments/{request_id}/approve",
	"POST /admin/v1/reconciliation/adjustments/{request_id}/dismiss",
}

func (h *Handler) handleRecon(m *http.ServeMux) {
	m.HandleFunc(reconRoutes[0], func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		lines, err := h.svc.Reconciliation(r.Context(), ReconQuery{Vendor: q.Get("vendor"), Since: q.Get("since"), Until: q.Get("until"),
			AlertsOnly: q.Get("alerts") == "true" || q.Get("alerts") == "1"})
		reply(w, http.StatusOK, map[string]any{"data": lines}, err)
	})
	m.HandleFunc(reconRoutes[1], func(w http.ResponseWriter, r *http.Request) {
		list, err := h.svc.Adjustments(r.Context(), r.URL.Query().Get("status"))
		reply(w, http.StatusOK, map[string]any{"data": list}, err)
	})
	for route, status := range map[string]string{reconRoutes[2]: gw.AdjustmentApproved, reconRoutes[3]: gw.AdjustmentDismissed} {
		m.HandleFunc(route, func(w http.ResponseWriter, r *http.Request) {
			a, err := h.svc.DecideAdjustment(r.Context(), r.PathValue("request_id"), status)
			reply(w, http.StatusOK, a, err)
		})
	}
}

// Reconciliation lists reconciliation lines over the API.
func (c *Client) Reconciliation(ctx context.Context, q ReconQuery) ([]ReconLine, error) {
	v := url.Values{}
	for k, s := range map[string]string{"vendor": q.Vendor, "since": q.Since, "until": q.Until} {
		if s != "" {
			v.Set(k, s)
		}
	}
	if q.AlertsOnly {
		v.Set("alerts", "true")
	}
	return list[ReconLine](ctx, c, "/admin/v1/reconciliation", v)
}

// Adjustments lists adjustments over the API.
func (c *Client) Adjustments(ctx context.Context, status string) ([]Adjustment, error) {
	v := url.Values{}
	if status != "" {
		v.Set("status", status)
	}
	return list[Adjustment](ctx, c, "/admin/v1/reconciliation/adjustments", v)
}

// DecideAdjustment approves or dismisses an adjustment over the API.
func (c *Client) DecideAdjustment(ctx context.Context, requestID, status string) (*Adjustment, error) {
	verb := "dismiss"
	if status == gw.AdjustmentApproved {
		verb = "approve"
	} else if status != gw.AdjustmentDismissed {
		return nil, invalid("an adjustment is approved or dismissed, not %q", status)
	}
	return call[Adjustment](ctx, c, http.MethodPost, "/admin/v1/reconciliation/adjustments/"+esc(requestID)+"/"+verb, nil, nil)
}
