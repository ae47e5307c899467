// Package browsertest starts headless Chromium for the project's browser
// tests (chromedp), the same way everywhere: Debian's chromium package,
// no sandbox (tests run as root in CI), no GPU, and none of Chromium's
// background network traffic (the machines reach no internet). It is
// imported by tests only.
package browsertest

import (
	"context"
	"os"
	"testing"

	"github.com/chromedp/chromedp"
)

// Path is where Debian's chromium package puts the browser; CI installs
// it.
const Path = "/usr/bin/chromium"

// Start returns a browser context under parent, or skips the test when
// Chromium is missing (the project's test runner lists the skip; CI
// installs Chromium and fails on any skip). The browser ends with the
// test.
func Start(t *testing.T, parent context.Context) context.Context {
	t.Helper()
	if os.Getenv("GATEWAY_SKIP_BROWSER_TESTS") == "1" {
		t.Skip("GATEWAY_SKIP_BROWSER_TESTS=1")
	}
	if _, err := os.Stat(Path); err != nil {
		t.Skipf("the browser test needs Chromium at %s (Debian package \"chromium\"): %v", Path, err)
	}
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(parent,
		chromedp.ExecPath(Path),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.UserDataDir(t.TempDir()),
	)
	ctx, cancel := chromedp.NewContext(allocCtx)
	t.Cleanup(func() {
		cancel()
		cancelAlloc()
	})
	return ctx
}
