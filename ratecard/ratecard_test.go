package ratecard

import (
	"bytes"
	"math/big"
	"slices"
	"strings"
	"testing"
)

func mustDefault(t testing.TB) *Card {
	t.Helper()
	c, err := Default()
	if err != nil {
		t.Fatalf("Default: %v", err)
	}
	return c
}

func TestDefaultCoversEveryPricedVendor(t *testing.T) {
	c := mustDefault(t)
	if c.Version == "" || c.Effective == "" {
		t.Fatalf("version %q effective %q: want both set", c.Version, c.Effective)
	}
	per := map[string]int{}
	for _, m := range c.Models() {
		per[m.Vendor]++
		if m.Embeds() {
			if m.MaxOutputTokens != 0 || m.Dimensions <= 0 || m.Price.Output.Sign() != 0 {
				t.Errorf("%s: embedding model with max output %d, dimensions %d, output price %s", m.Name(), m.MaxOutputTokens, m.Dimensions, m.Price.Output)
			}
		} else if m.MaxOutputTokens <= 0 {
			t.Errorf("%s: max output %d", m.Name(), m.MaxOutputTokens)
		}
		if _, ok := m.RatesFor(0); !ok {
			t.Errorf("%s: rates not exact", m.Name())
		}
	}
	for _, v := range Vendors() {
		if per[v] == 0 {
			t.Errorf("vendor %s has no entries", v)
		}
	}
	if per["openrouter"] != 0 {
		t.Errorf("openrouter has %d entries, want none", per["openrouter"])
	}
}

func TestDefaultPrices(t *testing.T) {
	c := mustDefault(t)
	tests := []struct {
		vendor, model string
		prompt        int64
		want          Rates // 1e-6 micro-cents per token = USD/M x 1e8
	}{
		// Sonnet 5.5 after the 2026-10-07 cache-read cut.
		{"anthropic", "claude-sonnet-5-5", 10, Rates{200_000_000, 10_000_000, 250_000_000, 400_000_000, 1_000_000_000}},
		// Haiku 5.5: base up to 100K prompt tokens, x5 above.
		{"anthropic", "claude-haiku-5-5", 100_000, Rates{10_000_000, 1_000_000, 12_500_000, 20_000_000, 50_000_000}},
		{"anthropic", "claude-haiku-5-5", 100_001, Rates{50_000_000, 5_000_000, 62_500_000, 100_000_000, 250_000_000}},
		// OpenAI: no 1h write price, so 1h writes cost the 5m write price; 2x/1.5x above 272K.
		{"openai", "gpt-6-sol", 272_000, Rates{200_000_000, 20_000_000, 250_000_000, 250_000_000, 1_000_000_000}},
		{"openai", "gpt-6-sol", 272_001, Rates{400_000_000, 40_000_000, 500_000_000, 500_000_000, 1_500_000_000}},
		// Gemini: no write surcharge (writes at the input price); long-context tier above 200K.
		{"google", "gemini-3.1-pro", 200_001, Rates{400_000_000, 40_000_000, 400_000_000, 400_000_000, 1_800_000_000}},
		// DeepSeek: the peak price, by the alias of the old id.
		{"deepseek", "deepseek-v4-flash", 1, Rates{30_000_000, 600_000, 30_000_000, 30_000_000, 120_000_000}},
		// Together publishes no cached price: reads cost the input price.
		{"together", "meta-llama/Llama-3.3-70B-Instruct-Turbo", 1, Rates{88_000_000, 88_000_000, 88_000_000, 88_000_000, 88_000_000}},
		// Ids match case-insensitively.
		{"groq", "OpenAI/GPT-OSS-20B", 1, Rates{7_500_000, 3_700_000, 7_500_000, 7_500_000, 30_000_000}},
	}
	for _, tt := range tests {
		m, ok := c.Lookup(tt.vendor, tt.model)
		if !ok {
			t.Errorf("Lookup(%s, %s): not found", tt.vendor, tt.model)
			continue
		}
		got, ok := m.RatesFor(tt.prompt)
		if !ok || got != tt.want {
			t.Errorf("%s/%s prompt %d: rates %+v (ok %v), want %+v", tt.vendor, tt.model, tt.prompt, got, ok, tt.want)
		}
	}
	if _, ok := c.Lookup("openai", "gpt-4-nonexistent"); ok {
		t.Error("Lookup of an unlisted model succeeded")
	}
	if _, ok := c.Lookup("groq", "claude-sonnet-5-5"); ok {
		t.Error("Lookup matched a model under the wrong vendor")
	}
}

// entry is a minimal valid model entry with the given fields replaced or
// added (raw JSON members).
func card(models ...string) string {
	return `{"version":"t1","effective":"2026-11-01","models":[` + strings.Join(models, ",") + `]}`
}

func entry(extra string) string {
	base := `"vendor":"openai","id":"m1","input":"1.00","output":"2.00","max_output_tokens":1000,"source":"s","date":"2026-10-01"`
	if extra == "" {
		return "{" + base + "}"
	}
	// Later members win in encoding/json, so extra overrides base.
	return "{" + base + "," + extra + "}"
}

func TestLoadRejects(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"unknown vendor", card(entry(`"vendor":"acme"`)), `(acme/m1): unknown vendor "acme"`},
		{"openrouter entry", card(entry(`"vendor":"openrouter"`)), "openrouter takes no entries"},
		{"negative price", card(entry(`"input":"-1.00"`)), `(openai/m1): input: negative price`},
		{"exponent", card(entry(`"output":"1e3"`)), `output: malformed price "1e3"`},
		{"fraction", card(entry(`"output":"1/3"`)), `malformed price "1/3"`},
		{"bare dot", card(entry(`"output":"1."`)), `malformed price "1."`},
		{"number not string", card(entry(`"output":2.5`)), "cannot unmarshal number"},
		{"nine decimals", card(entry(`"cached_input":"0.000000001"`)), "cached_input: price \"0.000000001\" has more than 8 decimals"},
		{"too large", card(entry(`"input":"1000000.01"`)), "above 1000000"},
		{"missing output", card(`{"vendor":"openai","id":"m1","input":"1","max_output_tokens":1,"source":"s","date":"2026-10-01"}`), "output: missing price"},
		{"duplicate id differing in case", card(entry(""), entry(`"id":"M1"`)), `"m1" is also a name of openai/M1`},
		{"alias clashes with id", card(entry(""), entry(`"id":"m2","aliases":["m1"]`)), `"m1" is also a name of openai/m1`},
		{"same id other vendor is fine", card(entry(""), entry(`"vendor":"groq"`)), ""},
		{"empty id", card(entry(`"id":""`)), "id: empty"},
		{"id with space", card(entry(`"id":"a b"`)), "space"},
		{"tier not ascending", card(entry(`"tiers":[{"above_prompt_tokens":200,"input":"2","output":"3"},{"above_prompt_tokens":100,"input":"2","output":"3"}]`)), "tier 1: above_prompt_tokens must be ascending"},
		{"tier zero threshold", card(entry(`"tiers":[{"above_prompt_tokens":0,"input":"2","output":"3"}]`)), "tier 0: above_prompt_tokens must be positive"},
		{"tier bad price", card(entry(`"tiers":[{"above_prompt_tokens":5,"input":"x","output":"3"}]`)), `tier 0: input: malformed price "x"`},
		{"zero max output", card(entry(`"max_output_tokens":0`)), "max_output_tokens must be positive"},
		{"max output above context", card(entry(`"context_window":10`)), "max_output_tokens above context_window"},
		{"bad date", card(entry(`"date":"2026-13-01"`)), `date: want YYYY-MM-DD, got "2026-13-01"`},
		{"no source", card(entry(`"source":" "`)), "missing source"},
		{"unknown field", card(entry(`"inptu":"1"`)), `unknown field "inptu"`},
		{"missing version", `{"effective":"2026-11-01","models":[]}`, "missing version"},
		{"bad effective", `{"version":"v","effective":"soon","models":[]}`, "effective: want YYYY-MM-DD"},
		{"trailing data", card(entry("")) + `{}`, "data after the top-level object"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Load(strings.NewReader(tt.in))
			switch {
			case tt.want == "" && err != nil:
				t.Fatalf("Load: %v, want success", err)
			case tt.want != "" && err == nil:
				t.Fatalf("Load succeeded, want error containing %q", tt.want)
			case tt.want != "" && !strings.Contains(err.Error(), tt.want):
				t.Fatalf("Load error %q, want it to contain %q", err, tt.want)
			}
		})
	}
}

func TestParsePrice(t *testing.T) {
	for in, want := range map[string]string{"2": "2/1", "2.50": "5/2", "0.00000001": "1/100000000", "1000000": "1000000/1", "0": "0/1"} {
		got, err := ParsePrice(in)
		if err != nil || got.String() != want {
			t.Errorf("ParsePrice(%q) = %v, %v; want %s", in, got, err, want)
		}
	}
	for _, in := range []string{"", ".5", "+1", "1,5", " 1", "0x10", "1.2.3", "NaN", "Inf", "١"} {
		if _, err := ParsePrice(in); err == nil {
			t.Errorf("ParsePrice(%q) succeeded, want error", in)
		}
	}
}

func TestFormatPrice(t *testing.T) {
	for in, want := range map[string]string{"2": "2.00", "0.125": "0.125", "10.5": "10.50", "0": "0.00", "0.00000001": "0.00000001"} {
		x, _ := new(big.Rat).SetString(in)
		if got := FormatPrice(x); got != want {
			t.Errorf("FormatPrice(%s) = %q, want %q", in, got, want)
		}
	}
}

func TestTierSelection(t *testing.T) {
	c, err := Load(strings.NewReader(card(entry(`"tiers":[{"above_prompt_tokens":100,"input":"2","output":"4"},{"above_prompt_tokens":200,"input":"3","output":"6"}]`))))
	if err != nil {
		t.Fatal(err)
	}
	m, _ := c.Lookup("openai", "m1")
	for prompt, want := range map[int64]int64{-1: 100_000_000, 0: 100_000_000, 100: 100_000_000, 101: 200_000_000, 200: 200_000_000, 201: 300_000_000, 1 << 62: 300_000_000} {
		r, _ := m.RatesFor(prompt)
		if r.Input != want {
			t.Errorf("prompt %d: input rate %d, want %d", prompt, r.Input, want)
		}
		if got := m.PriceFor(prompt).Input; new(big.Rat).Mul(got, big.NewRat(RateScale, 1)).Num().Int64() != want {
			t.Errorf("prompt %d: PriceFor input %s disagrees with RatesFor", prompt, got)
		}
	}
}

func TestRatesForHandBuiltModel(t *testing.T) {
	m := &Model{Vendor: "openai", ID: "x", Price: Price{Input: big.NewRat(5, 2), Output: big.NewRat(10, 1)}, MaxOutputTokens: 1}
	r, ok := m.RatesFor(0)
	if !ok || r != (Rates{250_000_000, 250_000_000, 250_000_000, 250_000_000, 1_000_000_000}) {
		t.Errorf("RatesFor = %+v, %v", r, ok)
	}
	m.Price.Input = big.NewRat(1, 3)
	if _, ok := m.RatesFor(0); ok {
		t.Error("RatesFor of a 1/3 price succeeded, want ok false (not exact at 1e8)")
	}
}

func TestOverlay(t *testing.T) {
	base := mustDefault(t)
	over, err := Load(strings.NewReader(`{"version":"ops-3","effective":"2026-12-01","models":[
		{"vendor":"anthropic","id":"claude-sonnet-5-5","input":"1.50","output":"9.00","max_output_tokens":64000,"source":"contract","date":"2026-11-30"},
		{"vendor":"openai","id":"gpt-7","aliases":["gpt-6-luna"],"input":"3","output":"12","max_output_tokens":1000,"source":"contract","date":"2026-11-30"},
		{"vendor":"deepseek","id":"ds-new","aliases":["deepseek-v4-flash"],"input":"0.1","output":"0.2","max_output_tokens":1000,"source":"contract","date":"2026-11-30"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	got := base.Overlay(over)
	if got.Version != base.Version+"+ops-3" || got.Effective != "2026-12-01" {
		t.Errorf("version %q effective %q", got.Version, got.Effective)
	}
	if m, _ := got.Lookup("anthropic", "claude-sonnet-5-5"); m.Price.Input.Cmp(big.NewRat(3, 2)) != 0 || m.Price.CachedInput != nil || m.Source != "contract" {
		t.Errorf("sonnet not replaced: %+v", m)
	}
	if m, ok := got.Lookup("openai", "gpt-7"); !ok || m.ID != "gpt-7" {
		t.Error("gpt-7 not added")
	}
	// An overlay alias that is a base id takes the name; the base entry goes.
	if m, _ := got.Lookup("openai", "gpt-6-luna"); m.ID != "gpt-7" {
		t.Errorf("gpt-6-luna resolves to %s, want gpt-7", m.ID)
	}
	// An overlay alias that is a base alias takes it; the base entry stays.
	if m, _ := got.Lookup("deepseek", "deepseek-v4-flash"); m.ID != "ds-new" {
		t.Errorf("deepseek-v4-flash resolves to %s, want ds-new", m.ID)
	}
	if m, ok := got.Lookup("deepseek", "deepseek-flash"); !ok || slices.Contains(m.Aliases, "deepseek-v4-flash") {
		t.Errorf("deepseek-flash: found %v aliases %v, want kept without the claimed alias", ok, m.Aliases)
	}
	if want := len(base.Models()) + 2 - 1; len(got.Models()) != want {
		t.Errorf("overlay has %d models, want %d", len(got.Models()), want)
	}
	// The inputs are untouched.
	if m, _ := base.Lookup("anthropic", "claude-sonnet-5-5"); m.Price.Input.Cmp(big.NewRat(2, 1)) != 0 {
		t.Error("Overlay changed the base card")
	}
	if m, _ := base.Lookup("deepseek", "deepseek-v4-flash"); m == nil || m.ID != "deepseek-flash" {
		t.Error("Overlay changed the base card's aliases")
	}
	if base.Overlay(nil) != base {
		t.Error("Overlay(nil) is not the card itself")
	}
}

func TestModelsSortedAndCopied(t *testing.T) {
	c := mustDefault(t)
	ms := c.Models()
	if !slices.IsSortedFunc(ms, func(a, b Model) int {
		if a.Vendor != b.Vendor {
			return strings.Compare(a.Vendor, b.Vendor)
		}
		return strings.Compare(a.ID, b.ID)
	}) {
		t.Error("Models not sorted by vendor then id")
	}
	ms[0].ID = "changed"
	ms[0].Aliases = append(ms[0].Aliases, "x")
	if c.Models()[0].ID == "changed" {
		t.Error("Models returned the card's own entries")
	}
	// A copy whose price is edited is priced by its new price, not a stale cache.
	ms[0].Price.Input = big.NewRat(7, 1)
	if r, _ := ms[0].RatesFor(0); r.Input != 700_000_000 {
		t.Errorf("edited copy rates input %d, want 700000000", r.Input)
	}
}

func TestWriteJSONRoundTrip(t *testing.T) {
	c := mustDefault(t)
	var a, b bytes.Buffer
	if err := c.WriteJSON(&a); err != nil {
		t.Fatal(err)
	}
	c2, err := Load(bytes.NewReader(a.Bytes()))
	if err != nil {
		t.Fatalf("Load(WriteJSON(Default)): %v", err)
	}
	if err := c2.WriteJSON(&b); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a.Bytes(), b.Bytes()) {
		t.Error("WriteJSON -> Load -> WriteJSON changed the card")
	}
	if len(c2.Models()) != len(c.Models()) {
		t.Errorf("round trip has %d models, want %d", len(c2.Models()), len(c.Models()))
	}
}

// FuzzLoad checks that Load never panics and that whatever it accepts
// survives WriteJSON -> Load unchanged.
func FuzzLoad(f *testing.F) {
	f.Add(embedded)
	f.Add([]byte(card(entry(""))))
	f.Add([]byte(card(entry(`"tiers":[{"above_prompt_tokens":100,"input":"2","cache_write_1h":"0.00000001","output":"4"}]`))))
	f.Add([]byte(card(entry(""), entry(`"id":"m2","aliases":["a","B"]`))))
	f.Add([]byte(card(entry(`"input":"-1"`))))
	f.Add([]byte(`{"version":"v","effective":"2026-01-01","models":null}`))
	f.Fuzz(func(t *testing.T, in []byte) {
		c, err := Load(bytes.NewReader(in))
		if err != nil {
			return
		}
		var a, b bytes.Buffer
		if err := c.WriteJSON(&a); err != nil {
			t.Fatal(err)
		}
		c2, err := Load(bytes.NewReader(a.Bytes()))
		if err != nil {
			t.Fatalf("reload of %s: %v", a.Bytes(), err)
		}
		if err := c2.WriteJSON(&b); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(a.Bytes(), b.Bytes()) {
			t.Fatalf("unstable: %s\nthen: %s", a.Bytes(), b.Bytes())
		}
		for _, m := range c.Models() {
			if _, ok := c.Lookup(m.Vendor, m.ID); !ok {
				t.Fatalf("Lookup(%s) failed for a listed model", m.Name())
			}
		}
	})
}

// Suggest proposes only priced ids: the closest of the vendor's, or some
// of them when none is close.
func TestSuggestOnlyPricedIDs(t *testing.T) {
	card, err := Default()
	if err != nil {
		t.Fatal(err)
	}
	m := card.Models()[0]
	near := m.ID[:len(m.ID)-1] + "x" // one edit away
	if close, ids := card.Suggest(m.Vendor, near, 5); !close || len(ids) != 1 || ids[0] != m.Name() {
		t.Errorf("Suggest(%s, %s) = %v %v, want %s", m.Vendor, near, close, ids, m.Name())
	}
	close, ids := card.Suggest("openai", "gpt-4o", 5)
	if len(ids) == 0 || len(ids) > 5 {
		t.Fatalf("Suggest(openai, gpt-4o) = %v %v", close, ids)
	}
	for _, id := range ids {
		v, name, _ := strings.Cut(id, "/")
		if _, ok := card.Lookup(v, name); !ok || v != "openai" {
			t.Errorf("suggested %s, which is not a priced openai id", id)
		}
	}
	if _, ids := card.Suggest("nosuchvendor", "x", 5); len(ids) != 0 {
		t.Errorf("suggestions for an unknown vendor: %v", ids)
	}
}
