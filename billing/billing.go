// Package billing prices requests: the vendor cost of a request's usage
// from the rate card, the charge to the caller (cost x 1.09), and the hold
// placed on the caller's balance before the vendor is called.
//
// It is pure policy: it reads a ratecard.Card and a gw.Usage and returns
// gw.Money; the balance, the ledger and the HTTP wiring live elsewhere.
//
// Policies, in one place:
//   - Cost sums each usage bucket times its rate exactly and rounds once,
//     half up, to the micro-cent (the figure logged as the vendor cost).
//     No bucket is ever negative; reasoning tokens are part of the output
//     count and not added again. Tokens the optimization layer added are
//     not billed: they are taken off the dearest prompt bucket they may
//     have landed in, and left out of the prompt size that picks a
//     long-context tier (see billed).
//   - The charge is the exact (unrounded) cost x 1.09, rounded once, half
//     up, to the micro-cent, saturating instead of wrapping for absurd
//     amounts. It is not the rounded cost x 1.09: rounding twice is off by
//     a micro-cent in about one request in ten.
//   - OpenRouter requests cost what the aggregator reports (usage.cost).
//     When it reports none, or a negative one, they are priced from
//     OpenRouter's own per-model price list (its models endpoint, fetched
//     and dated: ratecard.OpenRouterList) and the reported tokens. A model
//     missing from that list too is not charged: Price returns
//     ErrCostMissing with a zero quote and the record says so. Never a
//     flat fee. The reported cost includes the optimizer's directive: its
//     tokens come off at the listed prompt price before x 1.09 (see
//     openRouterReported).
//   - What a vendor bills beyond tokens (service tiers, Anthropic's fast
//     mode, hosted tools, grounding) is priced from the model's units
//     table (see hosted.go): a tier or fast mode scales every token rate,
//     calls are priced per call, per request or per container-hour, and
//     the exact sum is rounded once like the tokens alone. Holds cover
//     the request's tier and tool limits.
//   - Holds over-estimate on purpose; see HoldAmount and Hold. OpenRouter
//     holds are sized from the listed price when there is one, else
//     Options.OpenRouterHold; whatever the answer costs, the settle
//     debits at most the hold plus the available balance (the store).
package billing

import (
	"errors"
	"fmt"
	"math"
	"math/big"
	"math/bits"
	"slices"
	"strconv"
	"strings"
	"time"

	gw "github.com/gwlabs/gateway"
	"github.com/gwlabs/gateway/ratecard"
)

// OpenRouter is the prefix of the aggregator, the one vendor priced from
// its own reported cost rather than from the rate card.
const OpenRouter = "openrouter"

// HoldBytesPerToken is the ratio HoldAmount uses to estimate prompt tokens
// from the request body: one token per 3 bytes, rounded up. English text
// runs about 4 bytes per token and JSON framing adds bytes that are not
// tokens, so this over-estimates on purpose; CJK text (3 UTF-8 bytes per
// character, about one token each) comes out close to exact.
const HoldBytesPerToken = 3

// DefaultOpenRouterHold is the hold for an OpenRouter request when Options
// sets none: 50 cents.
const DefaultOpenRouterHold = 50 * gw.Cent

// Errors returned by Price and HoldAmount; test with errors.Is.
var (
	// ErrUnknownModel: the model has no rate-card entry. It comes wrapped
	// in a *gw.Error with CodeInvalidRequest naming the model.
	ErrUnknownModel = errors.New("model has no rate-card entry")
	// ErrCostMissing: an OpenRouter answer carried no usage.cost. The
	// caller logs "cost_missing" and bills the fallback quote returned
	// with it.
	ErrCostMissing = errors.New("openrouter reported no cost")
)

// Options configures a Biller. The zero value is valid.
type Options struct {
	// OpenRouterHold is the hold placed for an OpenRouter request whose
	// model is not on OpenRouter's price list (its price is unknown until
	// the aggregator reports it). Zero means DefaultOpenRouterHold.
	OpenRouterHold gw.Money
	// OpenRouter holds OpenRouter's per-model price list; nil: none.
	OpenRouter *ratecard.OpenRouterPrices
}

// Validate reports an option out of range.
func (o Options) Validate() error {
	if o.OpenRouterHold < 0 {
		return fmt.Errorf("billing options: negative openrouter hold %d", o.OpenRouterHold)
	}
	return nil
}

// Biller prices requests against one rate card. It is immutable and safe
// for concurrent use.
type Biller struct {
	card           *ratecard.Card
	openRouterHold gw.Money
	openRouter     *ratecard.OpenRouterPrices
}

// New returns a Biller for card (nil: an empty card, so only OpenRouter is
// priced). Zero or invalid options take their defaults; call
// Options.Validate first to reject them instead.
func New(card *ratecard.Card, opts Options) *Biller {
	if card == nil {
		card = &ratecard.Card{}
	}
	b := &Biller{card: card, openRouterHold: opts.OpenRouterHold, openRouter: opts.OpenRouter}
	if b.openRouterHold <= 0 {
		b.openRouterHold = DefaultOpenRouterHold
	}
	return b
}

// Card returns the rate card b prices from.
func (b *Biller) Card() *ratecard.Card { return b.card }

// MaxOutputTokens is the model's maximum output per answer on the rate
// card (0: unknown).
func (b *Biller) MaxOutputTokens(vendor, model string) int64 {
	if m, ok := b.card.Lookup(vendor, model); ok {
		return m.MaxOutputTokens
	}
	return 0
}

// Quote is the price of one request (declared in the root package).
type Quote = gw.Quote

// Known reports whether vendor's model can be priced: it has a rate-card
// entry, or the vendor is OpenRouter. The caller answers an unknown model
// with 400 naming it.
func (b *Biller) Known(vendor, model string) bool {
	return b.Priceable(vendor, model) == nil
}

// ContextWindow returns a model's context window in tokens, 0 when
// unknown: no prompt the vendor bills for one request can be larger.
func (b *Biller) ContextWindow(vendor, model string) int64 {
	m, err := b.holdModel(vendor, model)
	if err != nil || m == nil {
		return 0
	}
	return m.ContextWindow
}

// Priceable returns nil when vendor's model can be priced, else the
// caller-facing refusal (invalid_request) naming it: a model without a
// rate-card entry, or an OpenRouter model missing from OpenRouter's
// price list (an answer without usage.cost could not be priced: it is
// refused rather than served free).
func (b *Biller) Priceable(vendor, model string) error {
	if vendor != OpenRouter {
		if _, ok := b.card.Lookup(vendor, model); !ok {
			// Only priced ids are proposed.
			hint := ""
			switch close, ids := b.card.Suggest(vendor, model, 5); {
			case close:
				hint = fmt.Sprintf("did you mean %q? ", ids[0])
			case len(ids) > 0:
				hint = fmt.Sprintf("priced %s models include %s; ", vendor, strings.Join(ids, ", "))
			}
			return &gw.Error{Code: gw.CodeInvalidRequest, NoRetry: true, Err: ErrUnknownModel, Message: fmt.Sprintf(
				"model %q has no price on the rate card; %sGET /v1/models lists the priced models", vendor+"/"+model, hint)}
		}
		return nil
	}
	l := b.openRouter.List()
	if _, ok := l.Lookup(model); ok {
		return nil
	}
	why := "OpenRouter's price list could not be read yet"
	if l.Len() > 0 {
		why = "it is not on OpenRouter's price list of " + l.Fetched.UTC().Format("2006-01-02 15:04 UTC")
	}
	return &gw.Error{Code: gw.CodeInvalidRequest, NoRetry: true, Err: ErrUnknownModel, Message: fmt.Sprintf(
		"model %q cannot be priced: %s, and an answer without its cost would go unbilled; GET /v1/models lists the priced models",
		OpenRouter+"/"+model, why)}
}

// Price returns the cost and charge of a request with usage u.
//
// OpenRouter is priced from u.ReportedCost, else from its price list
// (see the package doc); a model on neither is ErrCostMissing with a zero
// quote whose note says so. Any other vendor is priced by Cost from the rate card;
// an unknown model is a *gw.Error (CodeInvalidRequest) wrapping
// ErrUnknownModel.
func (b *Biller) Price(vendor, model string, u gw.Usage) (Quote, error) {
	return b.PriceAt(vendor, model, u, time.Time{})
}

// PriceAt is Price for a request that started at start: inside a
// model's off-peak window (DeepSeek's) the off-peak price applies. A zero
// start is priced at the standard price.
func (b *Biller) PriceAt(vendor, model string, u gw.Usage, start time.Time) (Quote, error) {
	if vendor == OpenRouter {
		return b.priceOpenRouter(model, u)
	}
	m, err := b.lookup(vendor, model)
	if err != nil {
		return Quote{}, err
	}
	t := billed(m, u, start)
	prompt := t.prompt()
	mult, extra, hnote := hostedPrice(m, u.Hosted)
	cost, chg := pricedHosted(m, t, start, mult, extra)
	q := Quote{Cost: cost, Charge: chg}
	if u.OptimizerTokens > 0 {
		// The vendor bills every token it got, the directive's too, at
		// the tier of the whole prompt: that is the vendor cost.
		all := billed(m, gw.Usage{InputTokens: u.InputTokens, CacheReadTokens: u.CacheReadTokens,
			CacheWrite5mTokens: u.CacheWrite5mTokens, CacheWrite1hTokens: u.CacheWrite1hTokens, OutputTokens: u.OutputTokens}, start)
		var full gw.Money
		q.Cost, full = pricedHosted(m, all, start, mult, extra)
		q.DirectiveShare = max(full-chg, 0)
	}
	if m.OffPeak.Contains(start) {
		q.Note = "off-peak price"
	} else if i := m.TierIndex(prompt); i > 0 {
		q.Note = "long-context price: prompt above " + strconv.FormatInt(m.Tiers[i-1].AbovePromptTokens, 10) + " tokens"
	}
	if hnote != "" {
		q.Note = strings.TrimPrefix(q.Note+"; "+hnote, "; ")
	}
	return q, nil
}

// HoldAmount returns the amount to hold on the caller's balance before a
// request of bodyBytes bytes that may generate up to maxOutput tokens.
//
// The prompt is estimated at one token per HoldBytesPerToken bytes,
// rounded up and capped at the model's context window; it is priced at the
// highest of the input and cache-write rates (the gateway may write the
// prompt to a cache) of the tier that size falls in. maxOutput is the
// request's max tokens; zero or less, or more than the model's
// MaxOutputTokens, means MaxOutputTokens. The sum is marked up like a
// charge. OpenRouter requests hold Options.OpenRouterHold.
func (b *Biller) HoldAmount(vendor, model string, bodyBytes int, maxOutput int64) (gw.Money, error) {
	if vendor == OpenRouter {
		return b.openRouterHold, nil
	}
	m, err := b.lookup(vendor, model)
	if err != nil {
		return 0, err
	}
	if maxOutput <= 0 || maxOutput > m.MaxOutputTokens {
		maxOutput = m.MaxOutputTokens
	}
	return holdPriced(m, bodyBytes, maxOutput), nil
}

// holdPriced is the hold for a body of bodyBytes bytes and output tokens
// of output (all choices): the prompt estimated from the body (capped at
// the context window) in the dearest bucket it may land in, plus the
// output, marked up like a charge.
func holdPriced(m *ratecard.Model, bodyBytes int, output int64) gw.Money {
	n := int64(max(bodyBytes, 0))
	in := n / HoldBytesPerToken
	if n%HoldBytesPerToken != 0 {
		in++
	}
	if m.ContextWindow > 0 {
		in = min(in, m.ContextWindow)
	}
	// Put the whole prompt in the dearest of the buckets it may land in.
	t := tokens{output: max(output, 0)}
	var w1hOverIn, w1hOver5m, w5mOverIn int
	if r, ok := m.RatesFor(in); ok {
		// The exact integer rates order as the prices do, without
		// big.Rat's allocations.
		w1hOverIn, w1hOver5m, w5mOverIn = cmpInt(r.CacheWrite1h, r.Input), cmpInt(r.CacheWrite1h, r.CacheWrite5m), cmpInt(r.CacheWrite5m, r.Input)
	} else {
		p := m.PriceFor(in).Resolved()
		w1hOverIn, w1hOver5m, w5mOverIn = p.CacheWrite1h.Cmp(p.Input), p.CacheWrite1h.Cmp(p.CacheWrite5m), p.CacheWrite5m.Cmp(p.Input)
	}
	switch {
	case w1hOverIn > 0 && w1hOver5m >= 0:
		t.write1h = in
	case w5mOverIn > 0:
		t.write5m = in
	default:
		t.input = in
	}
	_, hold := priced(m, in, t)
	return hold
}

// cmpInt is big.Rat's Cmp for int64s: -1, 0 or +1.
func cmpInt(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func (b *Biller) lookup(vendor, model string) (*ratecard.Model, error) {
	m, ok := b.card.Lookup(vendor, model)
	if !ok {
		return nil, &gw.Error{
			Code:    gw.CodeInvalidRequest,
			Message: fmt.Sprintf("model %q is not priced: it has no rate-card entry", vendor+"/"+model),
			Err:     ErrUnknownModel,
		}
	}
	return m, nil
}

// Cost returns the vendor cost of usage u on model m, exactly, rounded
// once half up to the micro-cent, of the billed buckets (see billed:
// OptimizerTokens taken off the dearest prompt bucket): InputTokens at
// the input rate, CacheReadTokens at
// the cached rate, CacheWrite5mTokens and CacheWrite1hTokens at the write
// rates and OutputTokens at the output rate (ReasoningTokens are part of
// OutputTokens and not added again), summed exactly, with the tier chosen
// by the billed prompt. Negative counts count as zero. A cost beyond
// gw.Money's range saturates at math.MaxInt64 rather than wrap.
func Cost(m *ratecard.Model, u gw.Usage) gw.Money {
	t := billed(m, u, time.Time{})
	c, _ := priced(m, t.prompt(), t)
	return c
}

// CostCharge returns Cost(m, u) and the charge of the same usage: the
// exact cost x 1.09, rounded once half up.
func CostCharge(m *ratecard.Model, u gw.Usage) (cost, charge gw.Money) {
	t := billed(m, u, time.Time{})
	return priced(m, t.prompt(), t)
}

// priced returns t at m's rates for a prompt of promptTokens, exactly,
// rounded once half up, and the charge: the exact sum x 1.09, rounded
// once half up.
func priced(m *ratecard.Model, promptTokens int64, t tokens) (cost, charge gw.Money) {
	return pricedAt(m, promptTokens, t, time.Time{})
}

// pricedAt is priced for a request that started at start (off-peak
// windows apply).
func pricedAt(m *ratecard.Model, promptTokens int64, t tokens, start time.Time) (cost, charge gw.Money) {
	r, ok := m.RatesAt(promptTokens, start)
	if !ok {
		return costRat(m.PriceAt(promptTokens, start).Resolved(), t)
	}
	var sum acc
	sum.addMul(t.input, r.Input)
	sum.addMul(t.cacheRead, r.CachedInput)
	sum.addMul(t.write5m, r.CacheWrite5m)
	sum.addMul(t.write1h, r.CacheWrite1h)
	sum.addMul(t.output, r.Output)
	return sum.money(), sum.charge()
}

// tokens are the billed buckets of a usage, none negative.
type tokens struct {
	input, cacheRead, write5m, write1h, output int64
}

// billed returns the buckets of u that are billed on model m: negative
// counts as zero, and the tokens the optimization layer added taken off
// the prompt. Where they landed is unknown (plain input, or a cache read
// or write of a prefix that holds them), so they are taken from the
// dearest prompt bucket first, then the next: the caller is never billed
// for them. The long-context tier is chosen by the prompt without them
// (t.prompt()), so they never push a request into a dearer tier.
func billed(m *ratecard.Model, u gw.Usage, start time.Time) tokens {
	t := tokens{
		input:     max(u.InputTokens, 0),
		cacheRead: max(u.CacheReadTokens, 0),
		write5m:   max(u.CacheWrite5mTokens, 0),
		write1h:   max(u.CacheWrite1hTokens, 0),
		output:    max(u.OutputTokens, 0),
	}
	opt := min(max(u.OptimizerTokens, 0), t.prompt())
	if opt == 0 {
		return t
	}
	type bucket struct {
		n    *int64
		rate *big.Rat
		r    int64
	}
	var bs [4]bucket
	if r, ok := m.RatesAt(t.prompt()-opt, start); ok {
		// The exact integer rates order as the prices do, without
		// big.Rat's allocations.
		bs = [4]bucket{{n: &t.write1h, r: r.CacheWrite1h}, {n: &t.write5m, r: r.CacheWrite5m}, {n: &t.input, r: r.Input}, {n: &t.cacheRead, r: r.CachedInput}}
		slices.SortStableFunc(bs[:], func(a, b bucket) int { return cmpInt(b.r, a.r) })
	} else {
		p := m.PriceAt(t.prompt()-opt, start).Resolved()
		bs = [4]bucket{{n: &t.write1h, rate: p.CacheWrite1h}, {n: &t.write5m, rate: p.CacheWrite5m}, {n: &t.input, rate: p.Input}, {n: &t.cacheRead, rate: p.CachedInput}}
		slices.SortStableFunc(bs[:], func(a, b bucket) int { return b.rate.Cmp(a.rate) })
	}
	for _, b := range bs {
		take := min(opt, *b.n)
		*b.n -= take
		opt -= take
	}
	return t
}

// prompt returns the billed prompt tokens, saturating instead of
// overflowing.
func (t tokens) prompt() int64 {
	var s int64
	for _, n := range []int64{t.input, t.cacheRead, t.write5m, t.write1h} {
		if s > math.MaxInt64-n {
			return math.MaxInt64
		}
		s += n
	}
	return s
}

// acc is an unsigned 128-bit sum of tokens x rate products, in 1e-6
// micro-cents. Token counts are below 2^63 and rates below 2^47
// (ratecard.MaxPrice x ratecard.RateScale), so each product is below
// 2^110 and a handful of them cannot overflow.
type acc struct{ hi, lo uint64 }

func (a *acc) addMul(n, rate int64) {
	hi, lo := bits.Mul64(uint64(n), uint64(rate))
	var c uint64
	a.lo, c = bits.Add64(a.lo, lo, 0)
	a.hi += hi + c
}

// money divides the sum by 1e6, rounding half up, saturating at
// math.MaxInt64.
func (a acc) money() gw.Money {
	const div = ratecard.RateScale / 100 // 1e-6 micro-cents per micro-cent
	if a.hi >= div {
		return math.MaxInt64
	}
	q, r := bits.Div64(a.hi, a.lo, div)
	if 2*r >= div {
		q++
	}
	if q > math.MaxInt64 {
		return math.MaxInt64
	}
	return gw.Money(q)
}

// charge returns the sum x 1.09 in micro-cents, rounded once half up,
// saturating at math.MaxInt64.
func (a acc) charge() gw.Money {
	const div = ratecard.RateScale / 100 * gw.MarkupDen // 1e-6 micro-cents x 100
	if a.hi == 0 {
		hi, lo := bits.Mul64(a.lo, gw.MarkupNum)
		if hi < div { // always: hi < 109
			q, r := bits.Div64(hi, lo, div)
			if 2*r >= div {
				q++
			}
			if q <= math.MaxInt64 {
				return gw.Money(q)
			}
		}
		return math.MaxInt64
	}
	n := new(big.Int).Lsh(new(big.Int).SetUint64(a.hi), 64)
	n.Or(n, new(big.Int).SetUint64(a.lo))
	n.Mul(n, big.NewInt(gw.MarkupNum))
	n.Add(n, big.NewInt(div/2))
	n.Quo(n, big.NewInt(div))
	if !n.IsInt64() {
		return math.MaxInt64
	}
	return gw.Money(n.Int64())
}

// costRat is priced for prices that do not scale to integers: the same
// sums in big.Rat.
func costRat(p ratecard.Price, t tokens) (cost, charge gw.Money) {
	return ratPriced(tokensRat(p, t))
}

// ratPriced is an exact USD price (overwritten) as its cost, rounded
// once, and its charge, marked up and then rounded once.
func ratPriced(usd *big.Rat) (cost, charge gw.Money) {
	cost = ratMoney(usd)
	return cost, ratMoney(usd.Mul(usd, big.NewRat(gw.MarkupNum, gw.MarkupDen)))
}

// tokensRat is the exact USD price of t at p's per-million rates,
// unrounded.
func tokensRat(p ratecard.Price, t tokens) *big.Rat {
	sum := new(big.Rat)
	term := new(big.Rat)
	for _, b := range []struct {
		n    int64
		rate *big.Rat
	}{
		{t.input, p.Input}, {t.cacheRead, p.CachedInput}, {t.write5m, p.CacheWrite5m},
		{t.write1h, p.CacheWrite1h}, {t.output, p.Output},
	} {
		if b.n == 0 {
			continue
		}
		sum.Add(sum, term.Mul(b.rate, term.SetInt64(b.n)))
	}
	return sum.Quo(sum, big.NewRat(1_000_000, 1))
}

// ratMoney converts a non-negative exact USD amount to Money, rounding
// half up once (gw.RatToMoney) and saturating at math.MaxInt64.
func ratMoney(usd *big.Rat) gw.Money {
	if usd.Cmp(big.NewRat(math.MaxInt64/int64(gw.USD), 1)) >= 0 {
		return math.MaxInt64
	}
	return gw.RatToMoney(usd)
}

// charge is gw.Charge (cost x 1.09, half up) for a non-negative cost,
// computed in int64 without gw.Charge's big.Int allocations; a cost whose
// product with 109 would overflow int64 (gw.Charge wraps there, above
// about 846 million dollars) takes a big.Int path and saturates at
// math.MaxInt64. TestChargeMatchesGW holds it to gw.Charge.
func charge(cost gw.Money) gw.Money {
	if cost <= (math.MaxInt64-gw.MarkupDen/2)/gw.MarkupNum {
		return (cost*gw.MarkupNum + gw.MarkupDen/2) / gw.MarkupDen
	}
	n := new(big.Int).Mul(big.NewInt(int64(cost)), big.NewInt(gw.MarkupNum))
	n.Add(n, big.NewInt(gw.MarkupDen/2))
	n.Quo(n, big.NewInt(gw.MarkupDen))
	if !n.IsInt64() {
		return math.MaxInt64
	}
	return gw.Money(n.Int64())
}

// priceOpenRouter prices an OpenRouter answer: its reported cost, else
// its listed price times the reported tokens. Either way the directive's
// tokens (u.OptimizerTokens) are the vendor's cost, not the caller's: see
// openRouterReported.
func (b *Biller) priceOpenRouter(model string, u gw.Usage) (Quote, error) {
	list := b.openRouter.List()
	m, listed := list.Lookup(model)
	if u.HasReportedCost && u.ReportedCost >= 0 {
		return openRouterReported(m, u), nil
	}
	why := "no usage.cost"
	if u.CostUnreadable() {
		why = "a usage.cost that is not an amount"
	} else if u.HasReportedCost {
		why = "negative usage.cost " + strconv.FormatInt(int64(u.ReportedCost), 10)
	}
	if !listed {
		return Quote{Note: "cost_missing: openrouter sent " + why + " and the model is not on its price list; not charged"},
			fmt.Errorf("price openrouter/%s: %w", model, ErrCostMissing)
	}
	t := billed(m, u, time.Time{})
	cost, chg := priced(m, t.prompt(), t)
	q := Quote{Cost: cost, Charge: chg, Note: "openrouter sent " + why + "; priced from its models list of " + m.Date}
	if u.OptimizerTokens > 0 {
		every := u // every token OpenRouter got, the directive's included
		every.OptimizerTokens = 0
		all := billed(m, every, time.Time{})
		var full gw.Money
		q.Cost, full = priced(m, all.prompt(), all)
		q.DirectiveShare = max(full-chg, 0)
	}
	return q, nil
}

// openRouterReported prices an answer from the cost OpenRouter reported,
// which covers every token it got, the directive's too. The cost stays
// the record's (the vendor's whole cost); the charge is
//
//	(reported - directive) x 1.09, rounded once, half up,
//
// where directive is the directive's tokens (u.OptimizerTokens) at the
// model's listed prompt price (m, OpenRouter's price list), and the
// difference is never below the caller's own tokens at the listed prices
// (the reported tokens less the directive's, as billed prices them), nor
// above the reported cost, nor below zero. Everything is summed exactly
// (the reported decimal as OpenRouter sent it) and rounded once. A model
// off the list (nil m: it left the list while the request ran) cannot
// price the directive and is charged the reported cost, noted so.
func openRouterReported(m *ratecard.Model, u gw.Usage) Quote {
	var rep *big.Rat
	if len(u.ReportedCostUSD) <= 64 {
		rep, _ = new(big.Rat).SetString(u.ReportedCostUSD)
	}
	if rep == nil || rep.Sign() < 0 {
		// No exact figure kept: the rounded cost.
		rep = big.NewRat(int64(u.ReportedCost), int64(gw.USD))
	}
	q := Quote{Cost: u.ReportedCost, Note: "openrouter reported cost"}
	// Rounded once, from the exact figure: 0.0000000149 USD is 1.49 uc,
	// charged 1.6241 -> 2 (not 1 x 1.09 -> 1).
	full := ratMoney(new(big.Rat).Mul(rep, big.NewRat(gw.MarkupNum, gw.MarkupDen)))
	q.Charge = full
	opt := min(max(u.OptimizerTokens, 0), max(u.PromptTokens(), 0))
	if opt == 0 {
		return q
	}
	if m == nil {
		q.Note += "; directive_unpriced: the model left openrouter's price list"
		return q
	}
	own := billed(m, u, time.Time{})
	p := m.PriceFor(own.prompt()).Resolved()
	share := new(big.Rat).Mul(p.Input, new(big.Rat).SetInt64(opt))
	share.Quo(share, big.NewRat(1_000_000, 1))
	usd := new(big.Rat).Sub(rep, share)
	if floor := tokensRat(p, own); usd.Cmp(floor) < 0 {
		usd = floor
	}
	if usd.Cmp(rep) > 0 {
		usd = new(big.Rat).Set(rep)
	}
	if usd.Sign() < 0 {
		usd.SetInt64(0)
	}
	q.Charge = ratMoney(usd.Mul(usd, big.NewRat(gw.MarkupNum, gw.MarkupDen)))
	q.DirectiveShare = max(full-q.Charge, 0)
	return q
}
