// Package vendorreport reads what each vendor says it charged: one reader
// per vendor report (OpenAI's organization usage and costs, Anthropic's
// usage and cost reports, OpenRouter's generation records and key usage,
// DeepSeek's balance), each with the operator's admin credentials.
//
// Admin credentials are kept apart from inference keys: they are never
// used to serve a request, and a Secret prints as "[redacted]" in logs,
// errors, JSON and templates. A vendor without admin credentials, or
// without a report at all, answers reconcile.ErrNoCredentials or
// reconcile.ErrNoReport: it is unreconcilable, never an empty report
// that would read as matching.
//
// Money is exact: vendors' decimal amounts (USD numbers, cent strings)
// are parsed as decimals, never as floats, summed exactly per row and
// rounded once to the micro-cent.
package vendorreport

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/big"
	"net/http"
	"regexp"
	"strings"
	"time"

	gw "github.com/gwlabs/gateway"
	"github.com/gwlabs/gateway/reconcile"
)

// Secret is an admin credential. It formats as "[redacted]" everywhere
// (fmt, slog, JSON, text marshalling); only the readers read its value.
type Secret string

const redacted = "[redacted]"

// String returns "[redacted]".
func (Secret) String() string { return redacted }

// GoString returns "[redacted]".
func (Secret) GoString() string { return redacted }

// LogValue returns "[redacted]".
func (Secret) LogValue() slog.Value { return slog.StringValue(redacted) }

// MarshalText returns "[redacted]" (JSON included).
func (Secret) MarshalText() ([]byte, error) { return []byte(redacted), nil }

// Config is one vendor's report settings.
type Config struct {
	// BaseURL is the vendor's configured base URL, the one its inference
	// calls use ("" : the vendor's public API); the report paths are
	// relative to it, so a gateway pointed at a fake reads the fake's
	// reports.
	BaseURL string
	// AdminKey is the operator's admin credential ("": none, and the
	// reader answers reconcile.ErrNoCredentials).
	AdminKey Secret
	// Client makes the calls (nil: http.DefaultClient).
	Client *http.Client
	// Canonical maps a vendor's model name to the ledger's spelling
	// (billing.Biller.CanonicalModel fits); nil, or a name it does not
	// know, keeps the vendor's name with a dated snapshot suffix
	// ("-2025-04-14", "-20250929") dropped when that is known to it.
	Canonical func(vendor, model string) (string, bool)
	// Now is the clock (nil: time.Now).
	Now func() time.Time
	// Settle is how long after a day's end the vendor may still add to
	// it: Report.Complete is true only after (default 6h).
	Settle time.Duration
}

func (c Config) client() *http.Client {
	if c.Client != nil {
		return c.Client
	}
	return http.DefaultClient
}

func (c Config) now() time.Time {
	if c.Now != nil {
		return c.Now()
	}
	return time.Now()
}

func (c Config) complete(day time.Time) bool {
	settle := c.Settle
	if settle == 0 {
		settle = 6 * time.Hour
	}
	return !c.now().Before(day.Add(24*time.Hour + settle))
}

func (c Config) base(def string) string {
	if c.BaseURL == "" {
		return def
	}
	return strings.TrimRight(c.BaseURL, "/")
}

var dated = regexp.MustCompile(`-(\d{4}-\d{2}-\d{2}|\d{8})$`)

// model maps vendor's model name to the ledger's spelling.
func (c Config) model(vendor, m string) string {
	if c.Canonical == nil || m == "" {
		return m
	}
	if id, ok := c.Canonical(vendor, m); ok {
		return id
	}
	if base := dated.ReplaceAllString(m, ""); base != m {
		if id, ok := c.Canonical(vendor, base); ok {
			return id
		}
	}
	return m
}

// ErrAdminKeyRefused is what a reader returns when the vendor refuses the
// configured admin key (HTTP 401 or 403): a wrong key, or an inference key
// given where an admin key belongs.
var ErrAdminKeyRefused = errors.New("vendorreport: the vendor refused the admin key")

// maxBody bounds a report page.
const maxBody = 32 << 20

// get calls url with the headers and decodes a 200 answer into v. It
// returns the status for a 404 the caller handles (notFound true).
func (c Config) get(ctx context.Context, vendor, url string, header http.Header, v any) (status int, err error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0, fmt.Errorf("%s report: %w", vendor, err)
	}
	for k, vs := range header {
		req.Header[k] = vs
	}
	resp, err := c.client().Do(req)
	if err != nil {
		return 0, fmt.Errorf("%s report: %w", vendor, c.scrub(err))
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxBody+1))
	if err != nil {
		return resp.StatusCode, fmt.Errorf("%s report: read: %w", vendor, c.scrub(err))
	}
	if len(body) > maxBody {
		return resp.StatusCode, fmt.Errorf("%s report: answer above %d bytes", vendor, maxBody)
	}
	switch {
	case resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden:
		return resp.StatusCode, fmt.Errorf("%s report: HTTP %d: %w", vendor, resp.StatusCode, ErrAdminKeyRefused)
	case resp.StatusCode != http.StatusOK:
		return resp.StatusCode, fmt.Errorf("%s report: HTTP %d: %s", vendor, resp.StatusCode, c.snippet(body))
	}
	if err := json.Unmarshal(body, v); err != nil {
		return resp.StatusCode, fmt.Errorf("%s report: decode: %w", vendor, err)
	}
	return resp.StatusCode, nil
}

// snippet is the start of an error body with the admin key blanked out,
// should a vendor echo it.
func (c Config) snippet(body []byte) string {
	s := string(body)
	if len(s) > 300 {
		s = s[:300] + "..."
	}
	if c.AdminKey != "" {
		s = strings.ReplaceAll(s, string(c.AdminKey), redacted)
	}
	return s
}

type scrubbed struct {
	msg string
	err error
}

func (e *scrubbed) Error() string { return e.msg }
func (e *scrubbed) Unwrap() error { return e.err }

// scrub blanks the admin key out of an error's text, keeping it wrapped.
func (c Config) scrub(err error) error {
	if c.AdminKey == "" || !strings.Contains(err.Error(), string(c.AdminKey)) {
		return err
	}
	return &scrubbed{msg: strings.ReplaceAll(err.Error(), string(c.AdminKey), redacted), err: err}
}

// dayStart checks day is a UTC day's start.
func dayStart(day time.Time) (time.Time, error) {
	d := day.UTC()
	if !d.Equal(d.Truncate(24 * time.Hour)) {
		return d, fmt.Errorf("vendorreport: day %s is not 00:00 UTC", day.Format(time.RFC3339))
	}
	return d, nil
}

// maxPages bounds the pages one report read follows.
const maxPages = 1000

// Decimal amounts.

// decimal is an exact amount as a vendor wrote it: a JSON number or a
// JSON string holding one.
type decimal struct {
	r   *big.Rat
	set bool
}

func (d *decimal) UnmarshalJSON(b []byte) error {
	s := strings.TrimSpace(string(b))
	if s == "null" {
		*d = decimal{}
		return nil
	}
	if strings.HasPrefix(s, `"`) {
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		s = strings.TrimSpace(s)
	}
	r, err := parseDecimal(s)
	if err != nil {
		return err
	}
	*d = decimal{r: r, set: true}
	return nil
}

// parseDecimal parses a plain decimal ("123.45", "-0.1", "1e-3") exactly,
// refusing fractions ("1/3"), hex, NaN, infinities and absurd exponents.
func parseDecimal(s string) (*big.Rat, error) {
	if s == "" || len(s) > 100 || strings.ContainsAny(s, "/xXpP_") {
		return nil, fmt.Errorf("not a decimal amount: %q", s)
	}
	if i := strings.IndexAny(s, "eE"); i >= 0 {
		var exp int
		if _, err := fmt.Sscanf(s[i+1:], "%d", &exp); err != nil || exp > 30 || exp < -30 {
			return nil, fmt.Errorf("not a decimal amount: %q", s)
		}
	}
	r, ok := new(big.Rat).SetString(s)
	if !ok {
		return nil, fmt.Errorf("not a decimal amount: %q", s)
	}
	return r, nil
}

// Micro-cents per unit.
var (
	perUSD  = big.NewRat(int64(gw.USD), 1)
	perCent = big.NewRat(int64(gw.Cent), 1)
)

// money rounds an exact amount in micro-cents to Money, half away from
// zero; ok false out of range.
func money(x *big.Rat) (gw.Money, bool) {
	num := new(big.Int).Set(x.Num())
	den := x.Denom()
	neg := num.Sign() < 0
	num.Abs(num)
	q, m := new(big.Int).QuoRem(num, den, new(big.Int))
	if m.Mul(m, big.NewInt(2)).Cmp(den) >= 0 {
		q.Add(q, big.NewInt(1))
	}
	if !q.IsInt64() {
		return 0, false
	}
	v := gw.Money(q.Int64())
	if neg {
		v = -v
	}
	return v, true
}

// sum is an exact running total in micro-cents.
type sum struct{ r big.Rat }

func (s *sum) add(d decimal, unit *big.Rat) {
	if d.set {
		s.r.Add(&s.r, new(big.Rat).Mul(d.r, unit))
	}
}

func (s *sum) money() (gw.Money, error) {
	m, ok := money(&s.r)
	if !ok {
		return 0, errors.New("vendorreport: amount out of range")
	}
	return m, nil
}

// rowKey groups report rows.
type rowKey struct{ model, key, item string }

// rows accumulates a report's rows exactly.
type rows struct {
	order  []rowKey
	tokens map[rowKey]map[string]int64
	cost   map[rowKey]*sum
}

func (rs *rows) row(k rowKey) {
	if rs.tokens == nil {
		rs.tokens, rs.cost = map[rowKey]map[string]int64{}, map[rowKey]*sum{}
	}
	if _, ok := rs.tokens[k]; !ok {
		if _, ok := rs.cost[k]; !ok {
			rs.order = append(rs.order, k)
		}
	}
}

func (rs *rows) addTokens(k rowKey, class string, n *int64) {
	if n == nil {
		return
	}
	rs.row(k)
	t := rs.tokens[k]
	if t == nil {
		t = map[string]int64{}
		rs.tokens[k] = t
	}
	t[class] += *n
}

func (rs *rows) addCost(k rowKey, d decimal, unit *big.Rat) {
	rs.row(k)
	s := rs.cost[k]
	if s == nil {
		s = new(sum)
		rs.cost[k] = s
	}
	s.add(d, unit)
}

// report returns the accumulated rows: a row has Tokens when token
// counts were added to it and Cost when amounts were.
func (rs *rows) report() ([]reconcile.Row, error) {
	out := make([]reconcile.Row, 0, len(rs.order))
	for _, k := range rs.order {
		r := reconcile.Row{Model: k.model, VendorKey: k.key, LineItem: k.item, Tokens: rs.tokens[k]}
		if s := rs.cost[k]; s != nil {
			c, err := s.money()
			if err != nil {
				return nil, err
			}
			r.Cost, r.HasCost = c, true
		}
		out = append(out, r)
	}
	return out, nil
}
