package reconcile

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	gw "github.com/gwlabs/gateway"
)

// LeaseName is the store lease the job holds while it runs: one instance
// of a fleet reconciles, the others wait for its lease to lapse.
const LeaseName = "reconcile"

// DefaultFinalAfter is how long after a day's start its final run goes:
// two days after the day.
const DefaultFinalAfter = 72 * time.Hour

// Config is a Job's settings. Zero fields have the defaults given.
type Config struct {
	Store gw.ReconcileStore
	// Sources read the vendors with a daily report (by Vendor()).
	Sources []Source
	// Balances read prepaid balances (DeepSeek).
	Balances []Balances
	// Generations reads OpenRouter's generation records; nil: none.
	Generations Generations
	// GenerationsVendor is the vendor Generations reads (default
	// "openrouter").
	GenerationsVendor string
	// Vendors are every vendor the gateway serves: one without a Source,
	// a Balances or Generations is unreconcilable.
	Vendors []string
	// Holder names this instance in the lease (default: random);
	// LeaseName names the lease (default LeaseName).
	Holder    string
	LeaseName string
	// Every is how often the provisional runs go (default 1h).
	Every time.Duration
	// Poll is how often the job renews or tries its lease (default 1m);
	// LeaseTTL how long a lease outlives its holder (default 5m).
	Poll     time.Duration
	LeaseTTL time.Duration
	// FinalAfter is how long after a day's start its final run goes
	// (default 72h: two days after the day).
	FinalAfter time.Duration
	Now        func() time.Time
	Logger     *slog.Logger
}

// Job reconciles the ledger against the vendors' reports: hourly
// provisional runs of today and yesterday, and a final run of each day
// two days after it, on the one instance holding LeaseName.
type Job struct {
	cfg Config

	mu      sync.Mutex // guards lastRun
	lastRun time.Time
}

// New returns a Job; it validates cfg.
func New(cfg Config) (*Job, error) {
	if cfg.Store == nil {
		return nil, errors.New("reconcile: no store")
	}
	if cfg.GenerationsVendor == "" {
		cfg.GenerationsVendor = "openrouter"
	}
	if cfg.Holder == "" {
		var b [8]byte
		rand.Read(b[:])
		cfg.Holder = hex.EncodeToString(b[:])
	}
	if cfg.LeaseName == "" {
		cfg.LeaseName = LeaseName
	}
	if cfg.Every <= 0 {
		cfg.Every = time.Hour
	}
	if cfg.Poll <= 0 {
		cfg.Poll = time.Minute
	}
	if cfg.LeaseTTL <= 0 {
		cfg.LeaseTTL = 5 * time.Minute
	}
	if cfg.FinalAfter <= 0 {
		cfg.FinalAfter = DefaultFinalAfter
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	return &Job{cfg: cfg}, nil
}

// Day returns 00:00 UTC of t's day.
func Day(t time.Time) time.Time {
	t = t.UTC()
	return time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.UTC)
}

// Run ticks every Poll until ctx ends, then gives its lease up.
func (j *Job) Run(ctx context.Context) {
	t := time.NewTicker(j.cfg.Poll)
	defer t.Stop()
	for {
		if _, err := j.Tick(ctx); err != nil && ctx.Err() == nil {
			j.cfg.Logger.Warn("reconcile", "err", err)
		}
		select {
		case <-ctx.Done():
			dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
			j.cfg.Store.DropLease(dctx, j.cfg.LeaseName, j.cfg.Holder)
			cancel()
			return
		case <-t.C:
		}
	}
}

// Tick takes or renews the lease and, holding it, runs what is due: the
// provisional runs of today and yesterday when Every has passed since
// the last, and the final run of the day that began FinalAfter ago when
// it has none. It reports whether it ran.
func (j *Job) Tick(ctx context.Context) (bool, error) {
	now := j.cfg.Now()
	ok, err := j.cfg.Store.TakeLease(ctx, j.cfg.LeaseName, j.cfg.Holder, now, j.cfg.LeaseTTL)
	if err != nil || !ok {
		return false, err
	}
	today := Day(now)
	j.mu.Lock()
	last := j.lastRun
	j.mu.Unlock()
	if last.IsZero() {
		// Newly holding the lease: the last run is the store's, whoever
		// made it.
		lines, err := j.cfg.Store.Recon(ctx, gw.ReconFilter{Since: today.Add(-24 * time.Hour)})
		if err != nil {
			return false, err
		}
		for _, l := range lines {
			if !l.Final && l.CheckedAt.After(last) {
				last = l.CheckedAt
			}
		}
	}
	ran := false
	var errs []error
	if last.IsZero() || now.Sub(last) >= j.cfg.Every {
		for _, d := range []time.Time{today.Add(-24 * time.Hour), today} {
			if _, err := j.Reconcile(ctx, d, "", false); err != nil {
				errs = append(errs, err)
			}
		}
		ran = true
		j.mu.Lock()
		j.lastRun = now
		j.mu.Unlock()
	} else {
		j.mu.Lock()
		j.lastRun = last
		j.mu.Unlock()
	}
	// The day whose final run is due: the one that began FinalAfter ago.
	finalDay := Day(now.Add(-j.cfg.FinalAfter))
	done, err := j.finalDone(ctx, finalDay)
	if err != nil {
		return ran, err
	}
	if !done {
		if _, err := j.Reconcile(ctx, finalDay, "", true); err != nil {
			errs = append(errs, err)
		}
		ran = true
	}
	return ran, errors.Join(errs...)
}

// finalDone reports whether day already has its final run.
func (j *Job) finalDone(ctx context.Context, day time.Time) (bool, error) {
	lines, err := j.cfg.Store.Recon(ctx, gw.ReconFilter{Since: day, Until: day.Add(24 * time.Hour)})
	if err != nil {
		return false, err
	}
	for _, l := range lines {
		if l.Final {
			return true, nil
		}
	}
	return false, nil
}

// vendors lists every vendor the job knows, in order.
func (j *Job) vendors() []string {
	var vs []string
	add := func(v string) {
		if v != "" && !slices.Contains(vs, v) {
			vs = append(vs, v)
		}
	}
	for _, v := range j.cfg.Vendors {
		add(v)
	}
	for _, s := range j.cfg.Sources {
		add(s.Vendor())
	}
	for _, b := range j.cfg.Balances {
		add(b.Vendor())
	}
	if j.cfg.Generations != nil {
		add(j.cfg.GenerationsVendor)
	}
	slices.Sort(vs)
	return vs
}

// Reconcile runs the comparison of day for vendor ("" for every vendor),
// stores its lines (replacing the vendor-day's earlier ones), logs its
// alerts and returns its lines. It takes no lease: the command line runs
// it by hand. A vendor whose report fails is noted as a report_error
// line and its error returned with the others'.
func (j *Job) Reconcile(ctx context.Context, day time.Time, vendor string, final bool) ([]gw.ReconLine, error) {
	day = Day(day)
	now := j.cfg.Now()
	var out []gw.ReconLine
	var errs []error
	for _, v := range j.vendors() {
		if vendor != "" && v != vendor {
			continue
		}
		lines, err := j.vendorDay(ctx, v, day, final, now)
		if err != nil {
			errs = append(errs, fmt.Errorf("reconcile %s %s: %w", v, day.Format(time.DateOnly), err))
		}
		if lines == nil {
			continue
		}
		if err := j.cfg.Store.SaveRecon(ctx, v, day, lines); err != nil {
			errs = append(errs, err)
			continue
		}
		for _, l := range lines {
			if l.Alert != "" {
				j.cfg.Logger.Warn("reconcile alert", "alert", l.Alert, "vendor", l.Vendor, "day", l.Day.Format(time.DateOnly),
					"level", l.Level, "model", l.Model, "class", l.Class, "ledger", l.Ledger, "reported", l.Reported,
					"drift_ppm", l.DriftPPM, "our_price", int64(l.OurPrice), "implied_price", int64(l.ImpliedPrice), "final", l.Final, "note", l.Note)
			}
		}
		out = append(out, lines...)
	}
	if vendor != "" && !slices.Contains(j.vendors(), vendor) {
		errs = append(errs, fmt.Errorf("reconcile: unknown vendor %q", vendor))
	}
	return out, errors.Join(errs...)
}

// vendorDay compares one vendor-day; lines nil: nothing to store.
func (j *Job) vendorDay(ctx context.Context, v string, day time.Time, final bool, now time.Time) ([]gw.ReconLine, error) {
	until := day.Add(24 * time.Hour)
	ledger, err := j.cfg.Store.LedgerSums(ctx, v, day, until)
	if err != nil {
		return nil, err
	}
	for _, s := range j.cfg.Sources {
		if s.Vendor() != v {
			continue
		}
		rep, err := s.Day(ctx, day)
		switch {
		case errors.Is(err, ErrNoCredentials):
			return []gw.ReconLine{Unreconcilable(v, day, ledger, err.Error(), final, now)}, nil
		case err != nil:
			l := Unreconcilable(v, day, ledger, err.Error(), final, now)
			l.Status, l.Alert = gw.ReconError, gw.AlertReportError
			return []gw.ReconLine{l}, err
		}
		rep.Vendor, rep.Day = v, day
		lines := Compare(rep, ledger, final, now)
		if final && !rep.Complete {
			lines[0].Note = gw.JoinNote(lines[0].Note, "final run on an incomplete report")
		}
		return lines, nil
	}
	for _, b := range j.cfg.Balances {
		if b.Vendor() == v {
			return j.balanceDay(ctx, b, day, final, now)
		}
	}
	if j.cfg.Generations != nil && v == j.cfg.GenerationsVendor {
		return j.generationsDay(ctx, v, day, ledger, final, now)
	}
	return []gw.ReconLine{Unreconcilable(v, day, ledger, "the vendor publishes no report to reconcile against", final, now)}, nil
}

// balanceDay reads the balance (on a run of the day in progress), stores
// the reading, and compares the balance's fall between the day's readings
// (and the last one before it) with the ledger's cost between them.
func (j *Job) balanceDay(ctx context.Context, b Balances, day time.Time, final bool, now time.Time) ([]gw.ReconLine, error) {
	v := b.Vendor()
	until := day.Add(24 * time.Hour)
	var readErr error
	if !now.Before(day) && now.Before(until) {
		bal, err := b.Balance(ctx)
		switch {
		case errors.Is(err, ErrNoCredentials):
			ledger, lerr := j.cfg.Store.LedgerSums(ctx, v, day, until)
			if lerr != nil {
				return nil, lerr
			}
			return []gw.ReconLine{Unreconcilable(v, day, ledger, err.Error(), final, now)}, nil
		case err != nil:
			readErr = err
		default:
			if err := j.cfg.Store.AddBalanceReading(ctx, gw.BalanceReading{Vendor: v, At: now, Balance: bal}); err != nil {
				return nil, err
			}
		}
	}
	readings, err := j.cfg.Store.BalanceReadings(ctx, v, 1000)
	if err != nil {
		return nil, err
	}
	// Newest first: keep the day's readings and the last one before it.
	var rs []gw.BalanceReading
	for _, r := range readings {
		if !r.At.Before(until) {
			continue
		}
		rs = append(rs, r)
		if r.At.Before(day) {
			break
		}
	}
	slices.Reverse(rs)
	var spans []BalanceSpan
	for i := 1; i < len(rs); i++ {
		sums, err := j.cfg.Store.LedgerSums(ctx, v, rs[i-1].At, rs[i].At)
		if err != nil {
			return nil, err
		}
		var cost gw.Money
		for _, s := range sums {
			cost += s.Cost
		}
		spans = append(spans, BalanceSpan{From: rs[i-1], To: rs[i], Ledger: cost})
	}
	l := CompareBalance(v, day, spans, final, now)
	if readErr != nil {
		l.Note = gw.JoinNote(l.Note, "balance not read this run: "+readErr.Error())
	}
	return []gw.ReconLine{l}, readErr
}

// generationsDay checks the day's unchecked generations against the
// vendor's own records: one differing by more than a micro-cent becomes a
// pending adjustment for the operator (never a new charge). The vendor-day
// line compares the checked generations' ledger cost with the vendor's.
func (j *Job) generationsDay(ctx context.Context, v string, day time.Time, ledger []gw.LedgerSum, final bool, now time.Time) ([]gw.ReconLine, error) {
	until := day.Add(24 * time.Hour)
	var errs []error
	pendingLater := 0
	for {
		recs, err := j.cfg.Store.UncheckedRecords(ctx, v, day, until, 500)
		if err != nil {
			return nil, err
		}
		added := 0
		for _, r := range recs {
			cost, ok, err := j.cfg.Generations.GenerationCost(ctx, r.VendorResponseID)
			if errors.Is(err, ErrNoCredentials) {
				return []gw.ReconLine{Unreconcilable(v, day, ledger, err.Error(), final, now)}, nil
			}
			if err != nil {
				errs = append(errs, fmt.Errorf("generation %s: %w", r.VendorResponseID, err))
				continue
			}
			if !ok { // not settled at the vendor yet: the next run retries
				pendingLater++
				continue
			}
			a := gw.Adjustment{RequestID: r.RequestID, AccountID: r.AccountID, Vendor: v, Model: r.Model,
				GenerationID: r.VendorResponseID, Ledger: r.Cost, Reported: cost, Charge: r.Charge,
				Status: gw.AdjustmentMatched, CreatedAt: r.CreatedAt}
			if absDiff(int64(r.Cost), int64(cost)) > 1 {
				a.Status = gw.AdjustmentPending
				j.cfg.Logger.Warn("reconcile adjustment", "vendor", v, "request_id", r.RequestID, "generation", r.VendorResponseID,
					"ledger", int64(r.Cost), "reported", int64(cost), "charge", int64(r.Charge))
			}
			if err := j.cfg.Store.AddAdjustment(ctx, a); err != nil {
				return nil, err
			}
			added++
		}
		if len(recs) < 500 || added == 0 {
			break
		}
	}
	g, err := j.cfg.Store.GenerationSums(ctx, v, day, until)
	if err != nil {
		return nil, err
	}
	var requests int64
	for _, s := range ledger {
		requests += s.Requests
	}
	l := gw.ReconLine{Vendor: v, Day: day, Level: gw.ReconVendor, Ledger: int64(g.Ledger), Reported: int64(g.Reported),
		DriftPPM: DriftPPM(int64(g.Ledger), int64(g.Reported)), Status: gw.ReconMatch, Final: final, CheckedAt: now,
		Note: fmt.Sprintf("%d of %d requests' generations checked, %d adjustments", g.Checked, requests, g.Adjustments)}
	switch {
	case g.Checked == 0 && requests > 0:
		l.Status, l.Alert = gw.ReconUnreconcilable, gw.AlertUnreconcilable
		l.Note = "no generation checked yet"
	case g.Checked == 0:
		l.Status = gw.ReconUnreconcilable
	case beyond(l.Ledger, l.Reported, VendorDriftPct, 100) && absDiff(l.Ledger, l.Reported) > int64(VendorDriftMin):
		l.Status, l.Alert = gw.ReconDrift, gw.AlertVendorDrift
	case g.Adjustments > 0:
		l.Status, l.Alert = gw.ReconDrift, gw.AlertGenerationDrift
	}
	if pendingLater > 0 {
		l.Note = gw.JoinNote(l.Note, fmt.Sprintf("%d generations not available yet", pendingLater))
	}
	return []gw.ReconLine{l}, errors.Join(errs...)
}
