package dashboard

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	gw "github.com/gwlabs/gateway"
	"github.com/gwlabs/gateway/internal/browsertest"
)

// demoRun fills alpha's run "task-alpha" with an agent's afternoon: a
// planner on one model, cheap tool-using steps on another, a few
// failures and fallbacks.
func demoRun(rs *runStore, n int) {
	rng := rand.New(rand.NewPCG(48, 1))
	models := []struct{ vendor, model string }{{"anthropic", "claude-sonnet-4"}, {"openai", "gpt-4o-mini"}, {"groq", "llama-3.3-70b"}}
	at := testNow.Add(-2 * time.Hour)
	var steps []gw.RunStep
	var spend gw.Money
	var failed int64
	for i := range n {
		m := models[0]
		if i%3 != 0 {
			m = models[1+rng.IntN(2)]
		}
		s := gw.RunStep{RequestID: fmt.Sprintf("req_alpha_run_%02d", i), Endpoint: gw.ShapeM, Vendor: m.vendor, Model: m.model, Status: 200,
			Usage:   gw.Usage{InputTokens: int64(2000 + rng.IntN(20000)), CacheReadTokens: int64(rng.IntN(30000)), OutputTokens: int64(200 + rng.IntN(3000))},
			Latency: time.Duration(400+rng.IntN(9000)) * time.Millisecond, CreatedAt: at}
		s.Charge = gw.Money(s.Usage.InputTokens*300 + s.Usage.CacheReadTokens*30 + s.Usage.OutputTokens*1500)
		if m.vendor != "anthropic" {
			s.Charge /= 8
		}
		if i%11 == 7 {
			s.Status, s.ErrorCode, s.Charge, s.Usage = 502, gw.CodeUpstream, 0, gw.Usage{}
			failed++
		}
		if i%9 == 4 {
			s.Attempts = 2
		}
		spend += s.Charge
		steps = append(steps, s)
		at = at.Add(time.Duration(20+rng.IntN(200)) * time.Second)
	}
	rs.steps["acc_alpha"]["task-alpha"] = steps
	r := rs.runs["acc_alpha"]["task-alpha"]
	r.Spend, r.Requests, r.Errors, r.Budget, r.MaxRequests, r.LastSeen = spend+5*gw.Cent, int64(n+1), failed, 5*gw.USD, 200, at
	rs.runs["acc_alpha"]["task-alpha"] = r
}

// TestBrowserRuns drives headless Chromium to a run: the Runs tab lists
// it, its page draws the spend by model and the spend over its steps
// with a real size, and every table fits 1280 px. With
// GATEWAY_DASHBOARD_SCREENSHOTS=<dir> it saves runs.png there.
func TestBrowserRuns(t *testing.T) {
	fx := runsFixture(t)
	demoRun(fx.d.store.(*runStore), 40)
	mux := http.NewServeMux()
	mux.Handle("/dashboard", fx.d)
	mux.Handle("/dashboard/", fx.d)
	srv := httptest.NewServer(mux)
	defer srv.Close()
	// A loaded machine starts a browser slowly: the bound is generous,
	// and each step waits for what it needs rather than for a time.
	parent, stop := context.WithTimeout(t.Context(), 2*time.Minute)
	defer stop()
	ctx := browsertest.Start(t, parent)
	if err := chromedp.Do(ctx,
		chromedp.EmulateViewport(1280, 900),
		chromedp.Navigate(srv.URL+"/dashboard"),
		chromedp.WaitVisible(chromedp.CSS("#key")),
		chromedp.SendKeys(chromedp.CSS("#key"), alphaKey),
		chromedp.Click(chromedp.CSS(`.signin-form button[type="submit"]`)),
		chromedp.WaitVisible(chromedp.CSS("table.logs")),
		chromedp.Click(chromedp.CSS(`nav.tabs a[href^="/dashboard/runs"]`)),
		chromedp.WaitVisible(chromedp.CSS("table.runs")),
		chromedp.Click(chromedp.CSS(`table.runs a[href="/dashboard/runs/task-alpha"]`)),
		chromedp.WaitVisible(chromedp.CSS("table.run-steps")),
	); err != nil {
		t.Fatalf("open the run: %v", err)
	}
	bars, err := chromedp.Run(ctx, chromedp.Evaluate[int](`[...document.querySelectorAll("#run-models rect.s-charge")].filter(r => r.getBBox().width > 0).length`))
	if err != nil || bars != 3 {
		t.Errorf("spend by model draws %d bars (%v), want 3", bars, err)
	}
	line, err := chromedp.Run(ctx, chromedp.Evaluate[float64](`document.querySelector("#run-spend polyline").getBBox().width`))
	if err != nil || line < 300 {
		t.Errorf("the spend line is %v wide (%v), want a laid-out line", line, err)
	}
	rows, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll("table.run-steps tbody tr").length`))
	if err != nil || rows != 40 {
		t.Errorf("timeline has %d rows (%v), want 40", rows, err)
	}
	over, err := chromedp.Run(ctx, chromedp.Evaluate[float64](`Math.max(...[...document.querySelectorAll(".table-wrap")].map(w => w.scrollWidth - w.clientWidth))`))
	if err != nil || over > 0 {
		t.Errorf("a table overflows its box by %v px (%v) at 1280 px", over, err)
	}
	if dir := os.Getenv("GATEWAY_DASHBOARD_SCREENSHOTS"); dir != "" {
		png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "runs.png"), png, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
