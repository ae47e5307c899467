// Package ratecard holds the gateway's price list: what each vendor charges
// for each model, per million tokens, with cache prices, long-context tiers,
// output limits and the source each price was read from.
//
// The prices live in a versioned data file (rates.json, embedded; see
// Default) so that a price change is a data change, and an operator can lay
// an override file of the same format over it (Load, Overlay). Prices are
// decimal strings parsed exactly into big.Rat; Model.RatesFor turns them
// into exact integers for the billing hot path. The package knows nothing of
// usage or money: package billing prices a request with a Model from here.
//
// OpenRouter has no entries: the aggregator reports each request's cost
// itself.
package ratecard

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math/big"
	"slices"
	"strings"
	"time"
)

//go:embed rates.json
var embedded []byte

// Vendors returns the vendor prefixes a rate-card entry may name: every
// routed vendor except openrouter, which is priced from its reported cost.
func Vendors() []string {
	return []string{"openai", "anthropic", "google", "together", "fireworks", "groq", "mistral", "deepseek"}
}

// MaxPrice bounds every price, in USD per million tokens. It keeps the
// integer rates of RatesFor far from overflow and catches a price typed in
// the wrong unit.
const MaxPrice = 1_000_000

// RateScale is the factor from a price in USD per million tokens to a Rates
// value in 1e-6 micro-cents per token: 1e8 (100 micro-cents per token per
// USD/M, times 1e6). Every price with at most eight decimals, which Load
// enforces, is an integer at this scale.
const RateScale = 100_000_000

// Price is what a vendor charges, in USD per million tokens. Input and
// Output are always set. A nil CachedInput means cache reads cost the input
// price; a nil CacheWrite5m means cache writes carry no surcharge (they cost
// the input price); a nil CacheWrite1h means 1-hour writes cost the same as
// 5-minute writes. Resolved applies these rules.
type Price struct {
	Input, CachedInput, CacheWrite5m, CacheWrite1h, Output *big.Rat
}

// Resolved returns p with every nil rate replaced by the rate it stands
// for (see Price). The rationals are shared with p, not copied.
func (p Price) Resolved() Price {
	r := p
	if r.CachedInput == nil {
		r.CachedInput = r.Input
	}
	if r.CacheWrite5m == nil {
		r.CacheWrite5m = r.Input
	}
	if r.CacheWrite1h == nil {
		r.CacheWrite1h = r.CacheWrite5m
	}
	return r
}

// Rates are a resolved Price as exact integers in 1e-6 micro-cents per
// token (USD per million tokens times RateScale).
type Rates struct {
	Input, CachedInput, CacheWrite5m, CacheWrite1h, Output int64
}

// Rates returns p's resolved rates as exact integers. It fails when a rate
// is missing, negative, above MaxPrice or not an integer at RateScale
// (more than eight decimals); a Price from Load never fails.
func (p Price) Rates() (Rates, error) {
	q := p.Resolved()
	var r Rates
	for _, f := range []struct {
		name string
		src  *big.Rat
		dst  *int64
	}{
		{"input", q.Input, &r.Input},
		{"cached_input", q.CachedInput, &r.CachedInput},
		{"cache_write_5m", q.CacheWrite5m, &r.CacheWrite5m},
		{"cache_write_1h", q.CacheWrite1h, &r.CacheWrite1h},
		{"output", q.Output, &r.Output},
	} {
		v, err := scaled(f.src)
		if err != nil {
			return Rates{}, fmt.Errorf("%s: %w", f.name, err)
		}
		*f.dst = v
	}
	return r, nil
}

// scaled returns x x RateScale as an int64.
func scaled(x *big.Rat) (int64, error) {
	if x == nil {
		return 0, errors.New("missing price")
	}
	if x.Sign() < 0 {
		return 0, errors.New("negative price")
	}
	if x.Cmp(big.NewRat(MaxPrice, 1)) > 0 {
		return 0, fmt.Errorf("price above %d", MaxPrice)
	}
	s := new(big.Rat).Mul(x, big.NewRat(RateScale, 1))
	if !s.IsInt() {
		return 0, errors.New("more than 8 decimals")
	}
	return s.Num().Int64(), nil
}

// Tier is a long-context price: it replaces the model's whole Price for a
// request whose prompt has more than AbovePromptTokens tokens.
type Tier struct {
	AbovePromptTokens int64
	Price             Price
}

// Model is one rate-card entry. Models from a Card are shared: treat them
// as read-only.
type Model struct {
	// Vendor is the gateway prefix ("openai", ...); ID is the vendor's
	// model id without it. Aliases are other ids priced the same.
	Vendor  string
	ID      string
	Aliases []string

	Price Price
	// Tiers are ordered by AbovePromptTokens, ascending.
	Tiers []Tier

	// MaxOutputTokens is the most the model can generate in one answer;
	// it is the default max_tokens where a vendor requires one.
	// ContextWindow is the model's context in tokens, 0 when unknown.
	MaxOutputTokens int64
	ContextWindow   int64
	// OffPeak, when set, is a daily window (UTC) in which the vendor
	// charges OffPeak.Price instead of Price, by the time the request
	// started (DeepSeek's off-peak discount).
	OffPeak *OffPeak
	// MinOutputTokens is the smallest output limit the gateway sets on
	// its own for a caller who gave none and whose balance cannot cover
	// MaxOutputTokens; 0 means the billing default.
	MinOutputTokens int64

	// Units prices what the vendor bills beyond tokens on this model
	// (service tiers, fast mode, hosted tools), keyed by unit name (see
	// UnitNames); a unit missing here cannot be priced for the model.
	// Shared between copies: treat it as read-only.
	Units map[string]Unit

	// Kind is KindEmbedding for an embedding model ("" for a chat
	// model): it is priced per input token (Price.Output is zero), has
	// no output limit (MaxOutputTokens 0; ContextWindow is one input's
	// most tokens) and is served only by the embedding endpoints.
	// Dimensions is the length of its vectors by default;
	// FlexibleDimensions says the vendor returns shorter vectors when
	// asked (OpenAI's dimensions, Gemini's outputDimensionality,
	// Mistral's output_dimension).
	Kind               string
	Dimensions         int64
	FlexibleDimensions bool

	// Source is where the price was read; Date (YYYY-MM-DD) is the date
	// of that source. Note says anything derived or assumed.
	Source string
	Date   string
	Note   string

	// rates[0] are Price's integer rates, rates[i+1] those of Tiers[i];
	// set by Load, nil on a Model built by hand.
	rates []Rates
}

// PriceFor returns the price that applies to a request with promptTokens
// prompt tokens: the highest tier whose threshold the prompt exceeds, else
// the base price.
func (m *Model) PriceFor(promptTokens int64) Price {
	if i := m.tier(promptTokens); i > 0 {
		return m.Tiers[i-1].Price
	}
	return m.Price
}

// RatesFor returns the exact integer rates of PriceFor(promptTokens). They
// are precomputed for models from Load; for a model built by hand they are
// computed on each call, and ok is false when its prices cannot be scaled
// exactly (see Price.Rates), in which case the caller must use PriceFor.
func (m *Model) RatesFor(promptTokens int64) (r Rates, ok bool) {
	i := m.tier(promptTokens)
	if i < len(m.rates) {
		return m.rates[i], true
	}
	r, err := m.PriceFor(promptTokens).Rates()
	return r, err == nil
}

// TierIndex reports which price applies to promptTokens: 0 for the base
// price, i for Tiers[i-1].
func (m *Model) TierIndex(promptTokens int64) int { return m.tier(promptTokens) }

func (m *Model) tier(promptTokens int64) int {
	i := 0
	for i < len(m.Tiers) && promptTokens > m.Tiers[i].AbovePromptTokens {
		i++
	}
	return i
}

// OffPeak is a daily discounted window: from Start to End minutes after
// midnight UTC (End may be past midnight: below Start), Price replaces the
// model's price.
type OffPeak struct {
	Start, End int
	Price      Price
	rates      *Rates
}

// Contains reports whether t (any zone) falls in the window.
func (o *OffPeak) Contains(t time.Time) bool {
	if o == nil || t.IsZero() {
		return false
	}
	u := t.UTC()
	m := u.Hour()*60 + u.Minute()
	if o.Start <= o.End {
		return m >= o.Start && m < o.End
	}
	return m >= o.Start || m < o.End
}

// RatesAt is RatesFor at the time a request started: the off-peak rates
// inside the window.
func (m *Model) RatesAt(promptTokens int64, at time.Time) (Rates, bool) {
	if m.OffPeak.Contains(at) {
		if m.OffPeak.rates != nil {
			return *m.OffPeak.rates, true
		}
		r, err := m.OffPeak.Price.Rates()
		return r, err == nil
	}
	return m.RatesFor(promptTokens)
}

// PriceAt is PriceFor at the time a request started.
func (m *Model) PriceAt(promptTokens int64, at time.Time) Price {
	if m.OffPeak.Contains(at) {
		return m.OffPeak.Price
	}
	return m.PriceFor(promptTokens)
}

// Name returns "vendor/id", the model as callers write it.
func (m *Model) Name() string { return m.Vendor + "/" + m.ID }

// KindEmbedding is Model.Kind of an embedding model.
const KindEmbedding = "embedding"

// Embeds reports whether m is an embedding model.
func (m *Model) Embeds() bool { return m.Kind == KindEmbedding }

// Card is a parsed, validated rate card. It is immutable and safe for
// concurrent use.
type Card struct {
	// Version names this price list; Effective (YYYY-MM-DD) is the day
	// it took effect. Notes document pricing policies in force.
	Version   string
	Effective string
	Notes     []string

	models []Model                   // sorted by vendor, then id
	index  map[string]map[string]int // vendor -> lower-case id or alias -> models index
}

// Default returns the rate card embedded in the binary.
func Default() (*Card, error) {
	c, err := Load(bytes.NewReader(embedded))
	if err != nil {
		return nil, fmt.Errorf("embedded rate card: %w", err)
	}
	return c, nil
}

// Load parses and validates a rate card in the format of the embedded
// file. Unknown fields, unknown vendors, missing, negative or malformed
// prices, duplicate ids or aliases, unordered tiers and bad dates are
// errors naming the entry.
func Load(r io.Reader) (*Card, error) {
	dec := json.NewDecoder(r)
	dec.DisallowUnknownFields()
	var f fileCard
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("parse rate card: %w", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("parse rate card: data after the top-level object")
	}
	if strings.TrimSpace(f.Version) == "" {
		return nil, errors.New("rate card: missing version")
	}
	if err := checkDate(f.Effective); err != nil {
		return nil, fmt.Errorf("rate card: effective: %w", err)
	}
	models := make([]Model, 0, len(f.Models))
	for i, fm := range f.Models {
		m, err := fm.model()
		if err != nil {
			return nil, fmt.Errorf("rate card model %d (%s/%s): %w", i, fm.Vendor, fm.ID, err)
		}
		models = append(models, m)
	}
	c := &Card{Version: f.Version, Effective: f.Effective, Notes: f.Notes}
	if err := c.setModels(models, false); err != nil {
		return nil, err
	}
	return c, nil
}

// setModels sorts models, indexes them by id and alias and precomputes
// their rates. With overlay false a name used twice is an error; with it
// true the caller has already removed clashes.
func (c *Card) setModels(models []Model, overlay bool) error {
	slices.SortFunc(models, func(a, b Model) int {
		if d := strings.Compare(a.Vendor, b.Vendor); d != 0 {
			return d
		}
		return strings.Compare(a.ID, b.ID)
	})
	c.models = models
	c.index = make(map[string]map[string]int)
	for i := range models {
		m := &models[i]
		names := c.index[m.Vendor]
		if names == nil {
			names = make(map[string]int)
			c.index[m.Vendor] = names
		}
		for _, name := range append([]string{m.ID}, m.Aliases...) {
			k := strings.ToLower(name)
			if j, dup := names[k]; dup && !overlay {
				return fmt.Errorf("rate card model %s: %q is also a name of %s", m.Name(), name, models[j].Name())
			}
			names[k] = i
		}
		if m.rates == nil {
			if err := m.precompute(); err != nil {
				return fmt.Errorf("rate card model %s: %w", m.Name(), err)
			}
		}
	}
	return nil
}

func (m *Model) precompute() error {
	rates := make([]Rates, 0, 1+len(m.Tiers))
	r, err := m.Price.Rates()
	if err != nil {
		return err
	}
	rates = append(rates, r)
	for i, t := range m.Tiers {
		r, err := t.Price.Rates()
		if err != nil {
			return fmt.Errorf("tier %d: %w", i, err)
		}
		rates = append(rates, r)
	}
	m.rates = rates
	if m.OffPeak != nil {
		r, err := m.OffPeak.Price.Rates()
		if err != nil {
			return fmt.Errorf("off_peak: %w", err)
		}
		m.OffPeak.rates = &r
	}
	return nil
}

// Lookup returns the entry for vendor's model id or alias (matched
// case-insensitively). The Model is shared: do not modify it.
func (c *Card) Lookup(vendor, model string) (*Model, bool) {
	i, ok := c.index[vendor][strings.ToLower(model)]
	if !ok {
		return nil, false
	}
	return &c.models[i], true
}

// Suggest returns the priced ids ("vendor/id") to propose for an unpriced
// vendor/model: the closest id of that vendor when one is close (an edit
// distance of at most a third of the name, and 4, case-insensitive), else
// up to max ids of that vendor in card order; none for a vendor with no
// entry.
func (c *Card) Suggest(vendor, model string, max int) (close bool, ids []string) {
	model = strings.ToLower(model)
	best, bestD := "", min(4, len(model)/3)+1
	for i := range c.models {
		m := &c.models[i]
		if m.Vendor != vendor || m.Embeds() {
			continue
		}
		if len(ids) < max {
			ids = append(ids, m.Name())
		}
		for _, n := range append([]string{m.ID}, m.Aliases...) {
			if d := editDistance(model, strings.ToLower(n)); d < bestD {
				best, bestD = m.Name(), d
			}
		}
	}
	if best != "" {
		return true, []string{best}
	}
	return false, ids
}

// EditDistance is the Levenshtein distance between a and b (bytes), as
// the card's suggestions measure it.
func EditDistance(a, b string) int { return editDistance(a, b) }

// editDistance is the Levenshtein distance between a and b (bytes).
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// Models returns a copy of every chat entry (the embedding models are
// Embeddings'), sorted by vendor then id.
func (c *Card) Models() []Model { return c.copies(false) }

// Embeddings returns a copy of every embedding entry (Kind
// KindEmbedding), sorted by vendor then id.
func (c *Card) Embeddings() []Model { return c.copies(true) }

func (c *Card) copies(embeds bool) []Model {
	out := make([]Model, 0, len(c.models))
	for _, m := range c.models {
		if m.Embeds() != embeds {
			continue
		}
		m.Aliases = slices.Clone(m.Aliases)
		m.Tiers = slices.Clone(m.Tiers)
		m.Units = maps.Clone(m.Units)
		m.rates = nil // a copy may be edited; its rates are derived afresh
		if m.OffPeak != nil {
			op := *m.OffPeak
			op.rates = nil
			m.OffPeak = &op
		}
		out = append(out, m)
	}
	return out
}

// Overlay returns a new card: c with o's entries laid over it. An entry of
// o replaces c's entry of the same vendor and id, or is added; a name (id
// or alias) of an o entry is taken from whichever c entry had it, and a c
// entry whose id o claims is dropped. The version is "c+o", the effective
// date the later of the two, the notes both lists. A nil o returns c.
func (c *Card) Overlay(o *Card) *Card {
	if o == nil {
		return c
	}
	claimed := func(vendor, name string) bool {
		_, ok := o.index[vendor][strings.ToLower(name)]
		return ok
	}
	models := make([]Model, 0, len(c.models)+len(o.models))
	for _, m := range c.models {
		if claimed(m.Vendor, m.ID) {
			continue
		}
		m.Aliases = slices.DeleteFunc(slices.Clone(m.Aliases), func(a string) bool { return claimed(m.Vendor, a) })
		models = append(models, m)
	}
	models = append(models, o.models...)
	out := &Card{
		Version:   c.Version + "+" + o.Version,
		Effective: max(c.Effective, o.Effective),
		Notes:     append(slices.Clone(c.Notes), o.Notes...),
	}
	// Both inputs were validated and every clash was resolved above, so
	// this cannot fail.
	if err := out.setModels(models, true); err != nil {
		panic("ratecard: overlay: " + err.Error())
	}
	return out
}

// WriteJSON writes c in the file format Load reads.
func (c *Card) WriteJSON(w io.Writer) error {
	f := fileCard{Version: c.Version, Effective: c.Effective, Notes: c.Notes, Models: make([]fileModel, len(c.models))}
	for i, m := range c.models {
		fm := fileModel{
			Vendor: m.Vendor, ID: m.ID, Aliases: m.Aliases, filePrice: toFilePrice(m.Price),
			MaxOutputTokens: m.MaxOutputTokens, ContextWindow: m.ContextWindow, MinOutputTokens: m.MinOutputTokens,
			Source: m.Source, Date: m.Date, Note: m.Note, Units: toFileUnits(m.Units),
			Kind: m.Kind, Dimensions: m.Dimensions, FlexibleDimensions: m.FlexibleDimensions,
		}
		for _, t := range m.Tiers {
			fm.Tiers = append(fm.Tiers, fileTier{AbovePromptTokens: t.AbovePromptTokens, filePrice: toFilePrice(t.Price)})
		}
		if o := m.OffPeak; o != nil {
			fm.OffPeak = &fileOffPeak{StartUTC: formatClock(o.Start), EndUTC: formatClock(o.End), filePrice: toFilePrice(o.Price)}
		}
		f.Models[i] = fm
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(f); err != nil {
		return fmt.Errorf("write rate card: %w", err)
	}
	return nil
}

// FormatPrice formats a price as a plain decimal with at least two and at
// most eight decimals ("2.00", "0.125"); a rational with more decimals is
// rounded to eight.
func FormatPrice(x *big.Rat) string {
	s := x.FloatString(8)
	s = strings.TrimRight(s, "0")
	if i := strings.IndexByte(s, '.'); len(s)-i-1 < 2 {
		s += strings.Repeat("0", 2-(len(s)-i-1))
	}
	return s
}

// fileCard is the JSON form of a Card.
type fileCard struct {
	Version   string      `json:"version"`
	Effective string      `json:"effective"`
	Notes     []string    `json:"notes,omitempty"`
	Models    []fileModel `json:"models"`
}

type filePrice struct {
	Input        *string `json:"input,omitempty"`
	CachedInput  *string `json:"cached_input,omitempty"`
	CacheWrite5m *string `json:"cache_write_5m,omitempty"`
	CacheWrite1h *string `json:"cache_write_1h,omitempty"`
	Output       *string `json:"output,omitempty"`
}

type fileTier struct {
	AbovePromptTokens int64 `json:"above_prompt_tokens"`
	filePrice
}

type fileModel struct {
	Vendor  string   `json:"vendor"`
	ID      string   `json:"id"`
	Aliases []string `json:"aliases,omitempty"`
	filePrice
	Tiers           []fileTier `json:"tiers,omitempty"`
	MaxOutputTokens int64      `json:"max_output_tokens"`
	ContextWindow   int64      `json:"context_window,omitempty"`
	MinOutputTokens int64      `json:"min_output_tokens,omitempty"`
	Kind            string     `json:"kind,omitempty"`
	Dimensions      int64      `json:"dimensions,omitempty"`
	// FlexibleDimensions: see Model.
	FlexibleDimensions bool                `json:"flexible_dimensions,omitempty"`
	OffPeak            *fileOffPeak        `json:"off_peak,omitempty"`
	Units              map[string]fileUnit `json:"units,omitempty"`
	Source             string              `json:"source"`
	Date               string              `json:"date"`
	Note               string              `json:"note,omitempty"`
}

// fileOffPeak is an off-peak window: "HH:MM" UTC times and its prices.
type fileOffPeak struct {
	StartUTC string `json:"start_utc"`
	EndUTC   string `json:"end_utc"`
	filePrice
}

func parseClock(s string) (int, error) {
	t, err := time.Parse("15:04", s)
	if err != nil {
		return 0, fmt.Errorf("want HH:MM, got %q", s)
	}
	return t.Hour()*60 + t.Minute(), nil
}

func formatClock(m int) string { return fmt.Sprintf("%02d:%02d", m/60, m%60) }

func toFilePrice(p Price) filePrice {
	f := func(x *big.Rat) *string {
		if x == nil {
			return nil
		}
		s := FormatPrice(x)
		return &s
	}
	return filePrice{Input: f(p.Input), CachedInput: f(p.CachedInput), CacheWrite5m: f(p.CacheWrite5m), CacheWrite1h: f(p.CacheWrite1h), Output: f(p.Output)}
}

// model validates fm and converts it.
func (fm fileModel) model() (Model, error) {
	if fm.Vendor == "openrouter" {
		return Model{}, errors.New("openrouter takes no entries: it is billed from its reported cost")
	}
	if !slices.Contains(Vendors(), fm.Vendor) {
		return Model{}, fmt.Errorf("unknown vendor %q", fm.Vendor)
	}
	if err := checkName(fm.ID); err != nil {
		return Model{}, fmt.Errorf("id: %w", err)
	}
	for _, a := range fm.Aliases {
		if err := checkName(a); err != nil {
			return Model{}, fmt.Errorf("alias %q: %w", a, err)
		}
	}
	m := Model{
		Vendor: fm.Vendor, ID: fm.ID, Aliases: fm.Aliases,
		MaxOutputTokens: fm.MaxOutputTokens, ContextWindow: fm.ContextWindow, MinOutputTokens: fm.MinOutputTokens,
		Source: fm.Source, Date: fm.Date, Note: fm.Note,
		Kind: fm.Kind, Dimensions: fm.Dimensions, FlexibleDimensions: fm.FlexibleDimensions,
	}
	var err error
	if m.Price, err = fm.price(); err != nil {
		return Model{}, err
	}
	switch m.Kind {
	case "":
		if m.Dimensions != 0 || m.FlexibleDimensions {
			return Model{}, errors.New("dimensions are for embedding models (kind \"embedding\")")
		}
	case KindEmbedding:
		if m.Dimensions <= 0 || m.Dimensions > 1<<16 {
			return Model{}, errors.New("an embedding model needs dimensions from 1 to 65536")
		}
		if m.Price.Output.Sign() != 0 || m.MaxOutputTokens != 0 || len(fm.Tiers) > 0 || fm.OffPeak != nil || len(fm.Units) > 0 {
			return Model{}, errors.New("an embedding model is priced per input token only: output \"0\", no max_output_tokens, tiers, off_peak or units")
		}
		if m.ContextWindow <= 0 {
			return Model{}, errors.New("an embedding model needs context_window (one input's most tokens)")
		}
		if strings.TrimSpace(m.Source) == "" {
			return Model{}, errors.New("missing source")
		}
		if err := checkDate(m.Date); err != nil {
			return Model{}, fmt.Errorf("date: %w", err)
		}
		return m, nil
	default:
		return Model{}, fmt.Errorf("unknown kind %q (want \"embedding\" or none)", m.Kind)
	}
	if m.Units, err = units(fm.Units); err != nil {
		return Model{}, err
	}
	if o := fm.OffPeak; o != nil {
		op := &OffPeak{}
		if op.Start, err = parseClock(o.StartUTC); err != nil {
			return Model{}, fmt.Errorf("off_peak start_utc: %w", err)
		}
		if op.End, err = parseClock(o.EndUTC); err != nil {
			return Model{}, fmt.Errorf("off_peak end_utc: %w", err)
		}
		if op.Start == op.End {
			return Model{}, errors.New("off_peak: empty window")
		}
		if op.Price, err = o.price(); err != nil {
			return Model{}, fmt.Errorf("off_peak: %w", err)
		}
		m.OffPeak = op
	}
	for i, ft := range fm.Tiers {
		if ft.AbovePromptTokens <= 0 {
			return Model{}, fmt.Errorf("tier %d: above_prompt_tokens must be positive", i)
		}
		if i > 0 && ft.AbovePromptTokens <= fm.Tiers[i-1].AbovePromptTokens {
			return Model{}, fmt.Errorf("tier %d: above_prompt_tokens must be ascending", i)
		}
		p, err := ft.price()
		if err != nil {
			return Model{}, fmt.Errorf("tier %d: %w", i, err)
		}
		m.Tiers = append(m.Tiers, Tier{AbovePromptTokens: ft.AbovePromptTokens, Price: p})
	}
	if m.MaxOutputTokens <= 0 {
		return Model{}, errors.New("max_output_tokens must be positive")
	}
	if m.MinOutputTokens < 0 || m.MinOutputTokens > m.MaxOutputTokens {
		return Model{}, errors.New("min_output_tokens must be between 0 and max_output_tokens")
	}
	if m.ContextWindow < 0 {
		return Model{}, errors.New("context_window must not be negative")
	}
	if m.ContextWindow > 0 && m.MaxOutputTokens > m.ContextWindow {
		return Model{}, errors.New("max_output_tokens above context_window")
	}
	if strings.TrimSpace(m.Source) == "" {
		return Model{}, errors.New("missing source")
	}
	if err := checkDate(m.Date); err != nil {
		return Model{}, fmt.Errorf("date: %w", err)
	}
	return m, nil
}

func (fp filePrice) price() (Price, error) {
	var p Price
	for _, f := range []struct {
		name     string
		src      *string
		dst      **big.Rat
		required bool
	}{
		{"input", fp.Input, &p.Input, true},
		{"cached_input", fp.CachedInput, &p.CachedInput, false},
		{"cache_write_5m", fp.CacheWrite5m, &p.CacheWrite5m, false},
		{"cache_write_1h", fp.CacheWrite1h, &p.CacheWrite1h, false},
		{"output", fp.Output, &p.Output, true},
	} {
		if f.src == nil {
			if f.required {
				return Price{}, fmt.Errorf("%s: missing price", f.name)
			}
			continue
		}
		x, err := ParsePrice(*f.src)
		if err != nil {
			return Price{}, fmt.Errorf("%s: %w", f.name, err)
		}
		*f.dst = x
	}
	return p, nil
}

// ParsePrice parses a price in USD per million tokens: a plain decimal
// ("2", "0.125") with at most eight decimals and at most MaxPrice. Signs,
// exponents and fractions are rejected.
func ParsePrice(s string) (*big.Rat, error) {
	if strings.HasPrefix(s, "-") {
		return nil, fmt.Errorf("negative price %q", s)
	}
	whole, frac, dot := strings.Cut(s, ".")
	if whole == "" || (dot && frac == "") || !digits(whole) || !digits(frac) {
		return nil, fmt.Errorf("malformed price %q: want a decimal like \"2.50\"", s)
	}
	if len(frac) > 8 {
		return nil, fmt.Errorf("price %q has more than 8 decimals", s)
	}
	if len(whole) > 7 {
		return nil, fmt.Errorf("price %q above %d", s, MaxPrice)
	}
	x, ok := new(big.Rat).SetString(s)
	if !ok {
		return nil, fmt.Errorf("malformed price %q", s)
	}
	if x.Cmp(big.NewRat(MaxPrice, 1)) > 0 {
		return nil, fmt.Errorf("price %q above %d", s, MaxPrice)
	}
	return x, nil
}

func digits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// checkName accepts a model id or alias: non-empty, at most 256 bytes,
// printable ASCII without spaces.
func checkName(s string) error {
	if s == "" {
		return errors.New("empty")
	}
	if len(s) > 256 {
		return errors.New("longer than 256 bytes")
	}
	for i := 0; i < len(s); i++ {
		if s[i] <= ' ' || s[i] > '~' {
			return fmt.Errorf("%q has a space or a non-printable byte", s)
		}
	}
	return nil
}

func checkDate(s string) error {
	if _, err := time.Parse(time.DateOnly, s); err != nil {
		return fmt.Errorf("want YYYY-MM-DD, got %q", s)
	}
	return nil
}
