package vendorreport_test

import (
	"context"
	"testing"
	"time"

	gw "github.com/gwlabs/gateway"
	"github.com/gwlabs/gateway/fakevendor"
	"github.com/gwlabs/gateway/ratecard"
	"github.com/gwlabs/gateway/reconcile"
	"github.com/gwlabs/gateway/reconcile/vendorreport"
)

// history logs requests of vendor's model on day at the given hours
// (with the minutes of each hour's index), 1,000 input and 200 output
// tokens each.
func history(srv *fakevendor.Server, vendor, model string, day time.Time, hours ...int) {
	for i, h := range hours {
		srv.LogUsage(fakevendor.Usage{
			Vendor: vendor, Model: model, Key: fakevendor.APIKey(vendor),
			Time:  day.Add(time.Duration(h)*time.Hour + time.Duration(i)*time.Minute),
			Input: 1000, CacheRead: 100, Output: 200,
		})
	}
}

func cardRates(t *testing.T, vendor, model string) fakevendor.Rates {
	t.Helper()
	card, err := ratecard.Default()
	if err != nil {
		t.Fatal(err)
	}
	m, ok := card.Lookup(vendor, model)
	if !ok {
		t.Fatalf("%s/%s not on the card", vendor, model)
	}
	r, _ := m.RatesFor(0)
	return fakevendor.Rates{Input: r.Input, CacheRead: r.CachedInput, CacheWrite5m: r.CacheWrite5m, CacheWrite1h: r.CacheWrite1h, Output: r.Output}
}

// costOf is n requests of history's shape at r, rounded once.
func costOf(r fakevendor.Rates, n int64) gw.Money {
	exact := n * (1000*r.Input + 100*r.CacheRead + 200*r.Output)
	return gw.Money((exact + 500_000) / 1_000_000)
}

func day(t *testing.T, src reconcile.Source, d time.Time) reconcile.Report {
	t.Helper()
	rep, err := src.Day(context.Background(), d)
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

var past = time.Date(2026, 11, 20, 0, 0, 0, 0, time.UTC)

func TestDriftMissingHour(t *testing.T) {
	for _, vendor := range []string{"openai", "anthropic"} {
		t.Run(vendor, func(t *testing.T) {
			srv, root := fake(t)
			m := map[string]string{"openai": "gpt-4.1", "anthropic": "claude-sonnet-4-5"}[vendor]
			history(srv, vendor, m, past, 3, 3, 5, 23)
			srv.DropReportHour(vendor, past.Add(3*time.Hour+30*time.Minute))
			src := vendorreport.New([]string{vendor}, map[string]vendorreport.Config{vendor: cfg(root, vendor)}).Sources[vendor]
			rep := day(t, src, past)
			toks, cost, _ := model(rep, m)
			if toks[reconcile.TokensInput] != 2*1000 || toks[reconcile.TokensOutput] != 2*200 {
				t.Errorf("tokens %v: want the two requests outside hour 03", toks)
			}
			if want := costOf(cardRates(t, vendor, m), 2); cost != want {
				t.Errorf("cost %d, want %d", cost, want)
			}
			if !rep.Complete {
				t.Error("a day long past is not complete")
			}
		})
	}
}

func TestDriftPriceChange(t *testing.T) {
	srv, root := fake(t)
	history(srv, "openai", "gpt-4.1", past, 2, 4, 10, 12)
	card := cardRates(t, "openai", "gpt-4.1")
	raised := card
	raised.Input, raised.Output = card.Input*3/2, card.Output*3/2
	srv.SetReportPrice("openai", "gpt-4.1", past.Add(9*time.Hour), raised)
	rep := day(t, vendorreport.NewOpenAI(cfg(root, "openai")), past)
	toks, cost, _ := model(rep, "gpt-4.1")
	if toks[reconcile.TokensInput] != 4*1000 || toks[reconcile.TokensRequests] != 4 {
		t.Errorf("tokens %v: the price change must not change them", toks)
	}
	// The report sums exactly and rounds once.
	exact := 2*(1000*card.Input+100*card.CacheRead+200*card.Output) + 2*(1000*raised.Input+100*raised.CacheRead+200*raised.Output)
	if want := gw.Money((exact + 500_000) / 1_000_000); cost != want || cost == costOf(card, 4) {
		t.Errorf("cost %d, want %d (at the card: %d)", cost, want, costOf(card, 4))
	}
}

func TestDriftUnpricedClass(t *testing.T) {
	for _, vendor := range []string{"openai", "anthropic"} {
		t.Run(vendor, func(t *testing.T) {
			srv, root := fake(t)
			m := map[string]string{"openai": "gpt-4.1", "anthropic": "claude-sonnet-4-5"}[vendor]
			history(srv, vendor, m, past, 1, 2, 3)
			srv.AddReportSurcharge(vendor, m, "web_search", 1*gw.Cent)
			src := vendorreport.New([]string{vendor}, map[string]vendorreport.Config{vendor: cfg(root, vendor)}).Sources[vendor]
			toks, cost, _ := model(day(t, src, past), m)
			if toks[reconcile.TokensInput] != 3*1000 || toks[reconcile.TokensOutput] != 3*200 {
				t.Errorf("tokens %v: the surcharge must not change them", toks)
			}
			if want := costOf(cardRates(t, vendor, m), 3) + 3*gw.Cent; cost != want {
				t.Errorf("cost %d, want %d (3 requests at the card + 3 cents)", cost, want)
			}
		})
	}
}

func TestDriftDuplicatedRequest(t *testing.T) {
	for _, vendor := range []string{"openai", "anthropic"} {
		t.Run(vendor, func(t *testing.T) {
			srv, root := fake(t)
			m := map[string]string{"openai": "gpt-4.1", "anthropic": "claude-sonnet-4-5"}[vendor]
			history(srv, vendor, m, past, 1, 2, 3)
			srv.DuplicateInReport(vendor, m)
			src := vendorreport.New([]string{vendor}, map[string]vendorreport.Config{vendor: cfg(root, vendor)}).Sources[vendor]
			toks, cost, _ := model(day(t, src, past), m)
			if toks[reconcile.TokensInput] != 4*1000 || toks[reconcile.TokensCacheRead] != 4*100 || toks[reconcile.TokensOutput] != 4*200 {
				t.Errorf("tokens %v: want 4 requests' worth (one counted twice)", toks)
			}
			if vendor == "openai" && toks[reconcile.TokensRequests] != 4 {
				t.Errorf("requests %d, want 4", toks[reconcile.TokensRequests])
			}
			if want := costOf(cardRates(t, vendor, m), 4); cost != want {
				t.Errorf("cost %d, want %d", cost, want)
			}
		})
	}
}

func TestHonestReportMatchesTheCard(t *testing.T) {
	srv, root := fake(t)
	history(srv, "anthropic", "claude-sonnet-4-5", past, 0, 6, 12, 18, 23)
	history(srv, "anthropic", "claude-sonnet-4-5", past.Add(24*time.Hour), 1) // the next day: not in this one
	toks, cost, _ := model(day(t, vendorreport.NewAnthropic(cfg(root, "anthropic")), past), "claude-sonnet-4-5")
	if toks[reconcile.TokensInput] != 5*1000 || cost != costOf(cardRates(t, "anthropic", "claude-sonnet-4-5"), 5) {
		t.Errorf("tokens %v cost %d, want 5 requests at the card", toks, cost)
	}
}

func TestDriftDirectives(t *testing.T) {
	srv, root := fake(t)
	call(t, root, "openai", "gpt-4.1", "plain")
	call(t, root, "openai", "gpt-4.1", "[fake:report-twice] counted twice")
	call(t, root, "openai", "gpt-4.1", "[fake:report-omit] left out")
	log := srv.UsageLog()
	if len(log) != 3 {
		t.Fatalf("usage log has %d entries, want 3", len(log))
	}
	var want expected
	for i, n := range []int64{1, 2, 0} {
		want.input += n * log[i].Input
		want.output += n * log[i].Output
		want.requests += n
	}
	toks, _, _ := model(day(t, vendorreport.NewOpenAI(cfg(root, "openai")), today()), "gpt-4.1")
	if toks[reconcile.TokensInput] != want.input || toks[reconcile.TokensOutput] != want.output || toks[reconcile.TokensRequests] != 3 {
		t.Errorf("tokens %v, want %+v (1 + 2 + 0 requests)", toks, want)
	}
}

// OpenAI's cache writes (GPT-5.6 and later) are inside input_tokens; the
// reader takes them out of input when the report breaks them out.
func TestOpenAICacheWritesApartFromInput(t *testing.T) {
	srv, root := fake(t)
	srv.LogUsage(fakevendor.Usage{Vendor: "openai", Model: "gpt-5.6-sol", Key: fakevendor.APIKey("openai"),
		Time: past.Add(time.Hour), Input: 500, CacheRead: 300, CacheWrite5m: 200, Output: 50})
	toks, _, _ := model(day(t, vendorreport.NewOpenAI(cfg(root, "openai")), past), "gpt-5.6-sol")
	if toks[reconcile.TokensInput] != 500 || toks[reconcile.TokensCacheRead] != 300 || toks[reconcile.TokensCacheWrite] != 200 {
		t.Errorf("tokens %v, want input 500, cache_read 300, cache_write 200", toks)
	}
}
