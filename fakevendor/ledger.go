package fakevendor

import (
	"crypto/sha256"
	"encoding/hex"
	"math/big"
	"sort"
	"strings"
	"sync"
	"time"

	gw "github.com/gwlabs/gateway"
	"github.com/gwlabs/gateway/ratecard"
)

// Usage is one answered request in the fake's usage log, the record the
// report endpoints aggregate (report.go). Token counts are disjoint: Input
// excludes cache reads and writes; Output includes reasoning.
type Usage struct {
	Vendor string
	Model  string // as the request named it
	// Key is the inference key that made the call.
	Key          string
	Time         time.Time
	Input        int64
	CacheRead    int64
	CacheWrite5m int64 // every cache write outside Anthropic
	CacheWrite1h int64
	Output       int64
	// GenerationID and Cost are OpenRouter's: the answer's id and the
	// usage.cost it reported.
	GenerationID string
	Cost         gw.Money
	// Twice and Omit bend the reports: the request is counted twice, or
	// left out ([fake:report-twice], [fake:report-omit]).
	Twice, Omit bool
	// Embedding marks an embeddings request: in the cost reports, not in
	// the completions usage report (OpenAI reports embeddings apart).
	Embedding bool
}

func (u Usage) prompt() int64 { return u.Input + u.CacheRead + u.CacheWrite5m + u.CacheWrite1h }

// Rates is a price in the rate card's integer form: 1e-6 micro-cents per
// token (USD per million tokens x 1e8).
type Rates struct {
	Input, CacheRead, CacheWrite5m, CacheWrite1h, Output int64
}

// fallbackRates bill a model the rate card does not list: $1 per million
// tokens in (cache reads and writes alike) and $2 out, OpenRouter's fake
// prices.
var fallbackRates = Rates{Input: 1e8, CacheRead: 1e8, CacheWrite5m: 1e8, CacheWrite1h: 1e8, Output: 2e8}

// AdminKey returns the admin key the fake's report endpoints expect from
// vendor: "fake-<vendor>-admin-key". The inference endpoints refuse it, and
// the report endpoints refuse the inference key, as the real vendors do.
func AdminKey(vendor string) string { return "fake-" + vendor + "-admin-key" }

// KeyID returns the id vendor's reports give the inference key key, in
// the vendor's style ("key_..." for OpenAI, "apikey_01..." for Anthropic).
func KeyID(vendor, key string) string {
	sum := sha256.Sum256([]byte(vendor + "\x00" + key))
	h := hex.EncodeToString(sum[:])
	if vendor == "anthropic" {
		return "apikey_01" + h[:22]
	}
	return "key_" + h[:16]
}

// AdminEnv returns the admin settings that point the gateway's report
// readers at this Server's admin endpoints: GATEWAY_<VENDOR>_ADMIN_KEY for
// the four vendors with a report (OpenAI, Anthropic, OpenRouter,
// DeepSeek). The base URLs are Env's.
func (s *Server) AdminEnv() map[string]string {
	env := map[string]string{}
	for _, v := range []string{"openai", "anthropic", "openrouter", "deepseek"} {
		env["GATEWAY_"+strings.ToUpper(v)+"_ADMIN_KEY"] = AdminKey(v)
	}
	return env
}

// ledger is the fake's usage log and the knobs that bend its reports.
type ledger struct {
	// mu protects everything below.
	mu       sync.Mutex
	log      []Usage
	card     *ratecard.Card // loaded on first use
	cardErr  error
	prices   map[string][]priceChange // by vendor + "\x00" + model
	dropped  map[string]bool          // vendor + "\x00" + hour (RFC 3339)
	charges  map[string][]surcharge   // by vendor + "\x00" + model
	twice    map[string]bool          // vendor + "\x00" + model: its first request counted twice
	pageSize int                      // report results per page (0: all)
	genLag   int                      // lookups a generation answers 404 before it is ready
	lookups  map[string]int           // generation id -> lookups so far
	balance  map[string]gw.Money      // starting balance by vendor
}

type priceChange struct {
	from  time.Time
	rates Rates
}

type surcharge struct {
	item       string
	perRequest gw.Money
}

func mkey(vendor, model string) string { return vendor + "\x00" + model }

// LogUsage adds u to the usage log as if the fake had served it (tests
// use it to give the reports a history; Time zero means now).
func (s *Server) LogUsage(u Usage) {
	if u.Time.IsZero() {
		u.Time = time.Now()
	}
	l := &s.ledger
	l.mu.Lock()
	defer l.mu.Unlock()
	l.log = append(l.log, u)
}

// UsageLog returns a copy of the usage log, in arrival order.
func (s *Server) UsageLog() []Usage {
	l := &s.ledger
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]Usage(nil), l.log...)
}

// SetReportPrice bills vendor's model at r in the reports for requests
// from the time from on (the "price change" drift). Without it the fake
// bills at the rate card's price, so an honest run matches.
func (s *Server) SetReportPrice(vendor, model string, from time.Time, r Rates) {
	l := &s.ledger
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.prices == nil {
		l.prices = map[string][]priceChange{}
	}
	k := mkey(vendor, model)
	l.prices[k] = append(l.prices[k], priceChange{from: from, rates: r})
	sort.SliceStable(l.prices[k], func(i, j int) bool { return l.prices[k][i].from.Before(l.prices[k][j].from) })
}

// DropReportHour leaves the UTC hour holding t out of vendor's reports:
// the requests of that hour were made (and are in the gateway's ledger)
// but the report does not count them (the "missing hour" drift).
func (s *Server) DropReportHour(vendor string, t time.Time) {
	l := &s.ledger
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.dropped == nil {
		l.dropped = map[string]bool{}
	}
	l.dropped[vendor+"\x00"+t.UTC().Truncate(time.Hour).Format(time.RFC3339)] = true
}

// AddReportSurcharge bills perRequest more for every request of vendor's
// model, as a cost line named item that the rate card does not price (the
// "unpriced token class" drift): the tokens match, the cost does not.
func (s *Server) AddReportSurcharge(vendor, model, item string, perRequest gw.Money) {
	l := &s.ledger
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.charges == nil {
		l.charges = map[string][]surcharge{}
	}
	k := mkey(vendor, model)
	l.charges[k] = append(l.charges[k], surcharge{item: item, perRequest: perRequest})
}

// DuplicateInReport counts the first logged request of vendor's model
// twice in the reports, tokens and cost (the "duplicated request" drift).
func (s *Server) DuplicateInReport(vendor, model string) {
	l := &s.ledger
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.twice == nil {
		l.twice = map[string]bool{}
	}
	l.twice[mkey(vendor, model)] = true
}

// SetReportPageSize bounds the results of one report page to n (0: a page
// holds whole buckets only), so tests see the readers follow next_page.
func (s *Server) SetReportPageSize(n int) {
	l := &s.ledger
	l.mu.Lock()
	defer l.mu.Unlock()
	l.pageSize = n
}

// SetGenerationLag makes each OpenRouter generation record answer 404
// for its first n lookups, as the real one is ready only seconds after
// the request.
func (s *Server) SetGenerationLag(n int) {
	l := &s.ledger
	l.mu.Lock()
	defer l.mu.Unlock()
	l.genLag = n
}

// SetBalance sets vendor's prepaid balance before any request (default
// $100): the balance endpoint answers it less the cost of every logged
// request.
func (s *Server) SetBalance(vendor string, start gw.Money) {
	l := &s.ledger
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.balance == nil {
		l.balance = map[string]gw.Money{}
	}
	l.balance[vendor] = start
}

// logServed adds an answered request to the log.
func (l *ledger) logServed(u Usage) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.log = append(l.log, u)
}

// ratesLocked returns the price of u: the last price change in force at
// u.Time, else the rate card's, else fallbackRates.
func (l *ledger) ratesLocked(u Usage) Rates {
	r := fallbackRates
	if l.card == nil && l.cardErr == nil {
		l.card, l.cardErr = ratecard.Default()
	}
	if l.card != nil {
		if m, ok := l.card.Lookup(u.Vendor, u.Model); ok {
			if cr, ok := m.RatesAt(u.prompt(), u.Time); ok {
				r = Rates{Input: cr.Input, CacheRead: cr.CachedInput, CacheWrite5m: cr.CacheWrite5m, CacheWrite1h: cr.CacheWrite1h, Output: cr.Output}
			}
		}
	}
	for _, pc := range l.prices[mkey(u.Vendor, u.Model)] {
		if !u.Time.Before(pc.from) {
			r = pc.rates
		}
	}
	return r
}

// Token classes of a report line.
const (
	clsInput = iota
	clsCacheRead
	clsCache5m
	clsCache1h
	clsOutput
	nClasses
)

// line is one (model, key) aggregate of a report bucket.
type line struct {
	model, key string
	tokens     [nClasses]int64
	requests   int64
	// cost is the exact cost of each class in 1e-6 micro-cents.
	cost [nClasses]*big.Int
	// charges are the surcharges by item name.
	charges map[string]gw.Money
	// reported is OpenRouter's reported cost total.
	reported gw.Money
}

func (ln *line) add(u Usage, r Rates, n int64, charges []surcharge) {
	toks := [nClasses]int64{u.Input, u.CacheRead, u.CacheWrite5m, u.CacheWrite1h, u.Output}
	rates := [nClasses]int64{r.Input, r.CacheRead, r.CacheWrite5m, r.CacheWrite1h, r.Output}
	for i := range toks {
		ln.tokens[i] += n * toks[i]
		if ln.cost[i] == nil {
			ln.cost[i] = new(big.Int)
		}
		p := new(big.Int).Mul(big.NewInt(toks[i]), big.NewInt(rates[i]))
		ln.cost[i].Add(ln.cost[i], p.Mul(p, big.NewInt(n)))
	}
	ln.requests += n
	ln.reported += gw.Money(n) * u.Cost
	for _, c := range charges {
		if ln.charges == nil {
			ln.charges = map[string]gw.Money{}
		}
		ln.charges[c.item] += gw.Money(n) * c.perRequest
	}
}

// bucket is one time bucket of a report, lines sorted by model and key.
type bucket[T any] struct {
	start, end time.Time
	lines      []T
}

// buckets aggregates vendor's log over [start, end) in buckets of width,
// grouping by model and/or key as asked (an ungrouped field is "").
func (l *ledger) buckets(vendor string, start, end time.Time, width time.Duration, byModel, byKey, embeddings bool) []bucket[*line] {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []bucket[*line]
	idx := map[time.Time]map[string]*line{}
	for t := start; t.Before(end); t = t.Add(width) {
		out = append(out, bucket[*line]{start: t, end: t.Add(width)})
		idx[t] = map[string]*line{}
	}
	seen := map[string]bool{}
	for _, u := range l.log {
		if u.Vendor != vendor || (u.Embedding && !embeddings) {
			continue
		}
		k := mkey(u.Vendor, u.Model)
		n := int64(1)
		if (l.twice[k] && !seen[k]) || u.Twice {
			n = 2
		}
		seen[k] = true
		t := u.Time.UTC()
		if u.Omit || t.Before(start) || !t.Before(end) || l.dropped[vendor+"\x00"+t.Truncate(time.Hour).Format(time.RFC3339)] {
			continue
		}
		b := start.Add(t.Sub(start) / width * width)
		lk := lineKey{}
		if byModel {
			lk.model = u.Model
		}
		if byKey {
			lk.key = KeyID(vendor, u.Key)
		}
		ln := idx[b][lk.model+"\x00"+lk.key]
		if ln == nil {
			ln = &line{model: lk.model, key: lk.key}
			idx[b][lk.model+"\x00"+lk.key] = ln
		}
		ln.add(u, l.ratesLocked(u), n, l.charges[k])
	}
	for i := range out {
		for _, ln := range idx[out[i].start] {
			out[i].lines = append(out[i].lines, ln)
		}
		sort.Slice(out[i].lines, func(a, b int) bool {
			x, y := out[i].lines[a], out[i].lines[b]
			if x.model != y.model {
				return x.model < y.model
			}
			return x.key < y.key
		})
	}
	return out
}

type lineKey struct{ model, key string }

// spent returns the cost of every logged request of vendor, each rounded
// to the micro-cent half up as the gateway's ledger rounds it, with the
// knobs applied (the balance endpoint's debits).
func (l *ledger) spent(vendor string) gw.Money {
	l.mu.Lock()
	defer l.mu.Unlock()
	var sum gw.Money
	seen := map[string]bool{}
	for _, u := range l.log {
		if u.Vendor != vendor {
			continue
		}
		k := mkey(u.Vendor, u.Model)
		n := gw.Money(1)
		if (l.twice[k] && !seen[k]) || u.Twice {
			n = 2
		}
		if u.Omit {
			continue
		}
		seen[k] = true
		if l.dropped[vendor+"\x00"+u.Time.UTC().Truncate(time.Hour).Format(time.RFC3339)] {
			continue
		}
		var ln line
		ln.add(u, l.ratesLocked(u), 1, l.charges[k])
		total := new(big.Int)
		for _, c := range ln.cost {
			total.Add(total, c)
		}
		c := roundDiv(total, 1_000_000)
		for _, ch := range ln.charges {
			c += ch
		}
		sum += n * c
	}
	return sum
}

// roundDiv returns x / d rounded half up (x >= 0).
func roundDiv(x *big.Int, d int64) gw.Money {
	q := new(big.Int).Add(x, big.NewInt(d/2))
	q.Quo(q, big.NewInt(d))
	return gw.Money(q.Int64())
}

// generation looks up OpenRouter's record of id: ok false while it is not
// ready (the lag) or unknown.
func (l *ledger) generation(id string) (Usage, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	var found *Usage
	for i := range l.log {
		if l.log[i].Vendor == "openrouter" && l.log[i].GenerationID == id {
			found = &l.log[i]
		}
	}
	if found == nil {
		return Usage{}, false
	}
	if l.lookups == nil {
		l.lookups = map[string]int{}
	}
	l.lookups[id]++
	if l.lookups[id] <= l.genLag {
		return Usage{}, false
	}
	return *found, true
}

// keyUsage sums OpenRouter's reported cost of the requests key made.
func (l *ledger) keyUsage(vendor, key string) gw.Money {
	l.mu.Lock()
	defer l.mu.Unlock()
	var sum gw.Money
	for _, u := range l.log {
		if u.Vendor == vendor && u.Key == key {
			sum += u.Cost
		}
	}
	return sum
}

func (l *ledger) startBalance(vendor string) gw.Money {
	l.mu.Lock()
	defer l.mu.Unlock()
	if b, ok := l.balance[vendor]; ok {
		return b
	}
	return 100 * gw.USD
}

func (l *ledger) page() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.pageSize
}

// servedUsage is the log entry of the answer r to c.
func servedUsage(c *call, r *reply) Usage {
	u := r.usage
	out := Usage{
		Vendor: c.vendor, Model: c.model, Key: APIKey(c.vendor), Time: time.Now(),
		Input:     int64(u.prompt - u.cacheRead - u.cacheWrite()),
		CacheRead: int64(u.cacheRead), CacheWrite5m: int64(u.cache5m), CacheWrite1h: int64(u.cache1h),
		Output: int64(u.output()),
		Twice:  c.dirs.reportTwice, Omit: c.dirs.reportOmit,
	}
	if c.vendor == "openrouter" {
		out.GenerationID = responseID(c)
		if r, ok := new(big.Rat).SetString(string(openrouterCost(c, u))); ok {
			r.Mul(r, big.NewRat(int64(gw.USD), 1))
			out.Cost = roundDiv(new(big.Int).Quo(new(big.Int).Mul(r.Num(), big.NewInt(1_000_000)), r.Denom()), 1_000_000)
		}
	}
	return out
}
