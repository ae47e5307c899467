package e2e

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	gw "github.com/gwlabs/gateway"
	"github.com/gwlabs/gateway/internal/app"
)

var (
	soakFor     = flag.Duration("soak", 0, "run TestSoak this long (off by default: an opt-in load run, not a CI test)")
	soakStreams = flag.Int("soak-streams", 2000, "TestSoak: concurrent streams")
)

// TestSoak holds -soak-streams concurrent streams against one gateway for
// -soak: slow readers, callers that abandon, and vendor faults (breaks,
// in-stream errors, 5xx before the first byte) mixed in. It reports the
// process's RSS and goroutines as it goes and checks, at the end, that no
// goroutine or hold is left and the ledger balances (balance = top-ups -
// charges). Run with: go test -run Soak -soak=60s ./e2e/
func TestSoak(t *testing.T) {
	if *soakFor <= 0 {
		t.Skip("opt-in: go test -run Soak -soak=60s ./e2e/")
	}
	e := newEnv(t, func(c *app.Config) { c.RPM, c.TPM = 0, 0 })
	ctx := context.Background()
	// Enough for 2,000 holds in flight (a request without an output cap
	// is held at the model's maximum output).
	if err := e.m.Store().TopUp(ctx, e.acct, 100_000*gw.USD, "soak"); err != nil {
		t.Fatal(err)
	}
	tr := &http.Transport{MaxIdleConnsPerHost: *soakStreams, MaxConnsPerHost: 0, IdleConnTimeout: 30 * time.Second}
	client := &http.Client{Transport: tr}
	defer tr.CloseIdleConnections()
	routes := []struct {
		path  string
		body  func(model, text string, stream bool, extra string) []byte
		model string
	}{
		{"/v1/chat/completions", chatBody, "openai/" + nativeModels["openai"]},
		{"/v1/messages", messagesBody, "anthropic/" + nativeModels["anthropic"]},
		{"/v1/chat/completions", chatBody, "anthropic/" + nativeModels["anthropic"]},
		{"/v1/messages", messagesBody, "google/" + nativeModels["google"]},
		{"/v1/chat/completions", chatBody, "groq/" + nativeModels["groq"]},
	}
	faults := []string{"", "", "", "", "", "[fake:break=5]", "[fake:error-after=5]", "[fake:status=500]"}
	var (
		sent, ok, failed, abandoned, transport atomic.Int64
		wg                                     sync.WaitGroup
		statusMu                               sync.Mutex
		statuses                               = map[string]int{}
	)
	count := func(k string) {
		statusMu.Lock()
		statuses[k]++
		statusMu.Unlock()
	}
	deadline := time.Now().Add(*soakFor)
	goroutinesBefore, _ := requestGoroutines()
	for i := 0; i < *soakStreams; i++ {
		wg.Add(1)
		go func(seed uint64) {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(seed, 7))
			buf := make([]byte, 512)
			for time.Now().Before(deadline) {
				r := routes[rng.IntN(len(routes))]
				text := "[fake:delay=20ms][fake:chunks=40]" + faults[rng.IntN(len(faults))] + " tell me a story"
				req, _ := http.NewRequest(http.MethodPost, e.url+r.path, bytes.NewReader(r.body(r.model, text, true, "")))
				req.Header.Set("Authorization", "Bearer "+e.key)
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Anthropic-Version", "2023-06-01")
				sent.Add(1)
				resp, err := client.Do(req)
				if err != nil {
					transport.Add(1)
					time.Sleep(100 * time.Millisecond)
					continue
				}
				leave := rng.IntN(10) == 0
				for n := 0; ; n++ {
					if leave && n == 3 {
						abandoned.Add(1)
						break
					}
					time.Sleep(time.Duration(rng.IntN(15)) * time.Millisecond) // a slow reader
					if _, err := resp.Body.Read(buf); err != nil {
						if err == io.EOF && resp.StatusCode == 200 {
							ok.Add(1)
						} else {
							failed.Add(1)
						}
						count(fmt.Sprintf("%d %s", resp.StatusCode, resp.Header.Get("X-Gateway-Vendor")))
						break
					}
				}
				resp.Body.Close()
			}
		}(uint64(i))
	}
	stop := make(chan struct{})
	var peakRSS int64
	var reporter sync.WaitGroup
	reporter.Go(func() {
		tick := time.NewTicker(5 * time.Second)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
				rss := rssBytes()
				peakRSS = max(peakRSS, rss)
				t.Logf("soak: %3.0fs rss %d MiB, goroutines %d, requests %d (ok %d, failed %d, abandoned %d, transport errors %d)",
					time.Until(deadline).Seconds(), rss>>20, runtime.NumGoroutine(), sent.Load(), ok.Load(), failed.Load(), abandoned.Load(), transport.Load())
			}
		}
	})
	wg.Wait()
	close(stop)
	reporter.Wait()
	tr.CloseIdleConnections()

	// Everything settles: no hold left, the ledger balances.
	var b gw.Balance
	var err error
	for end := time.Now().Add(30 * time.Second); time.Now().Before(end); time.Sleep(200 * time.Millisecond) {
		if b, err = e.m.Store().Balance(ctx, e.acct); err == nil && b.Held == 0 {
			break
		}
	}
	if err != nil || b.Held != 0 || b.Balance != b.TopUps-b.Charged {
		t.Errorf("ledger after the soak: %+v, %v; want no hold and balance = top-ups - charges", b, err)
	}
	if v, ok := e.m.Store().(interface {
		VerifyLedger(context.Context, string) error
	}); ok {
		if err := v.VerifyLedger(ctx, e.acct); err != nil {
			t.Errorf("ledger: %v", err)
		}
	}
	var g, idle int
	for end := time.Now().Add(10 * time.Second); time.Now().Before(end); time.Sleep(200 * time.Millisecond) {
		if g, idle = requestGoroutines(); g <= goroutinesBefore+20 {
			break
		}
	}
	t.Logf("soak done: %d streams for %v: requests %d (ok %d, failed %d, abandoned %d, transport errors %d); peak rss %d MiB; goroutines %d besides %d of idle keep-alive connections (before %d); charged %s USD, held %d",
		*soakStreams, *soakFor, sent.Load(), ok.Load(), failed.Load(), abandoned.Load(), transport.Load(), peakRSS>>20, g, idle, goroutinesBefore, b.Charged.USDString(), b.Held)
	t.Logf("soak: finished requests by status and vendor: %v", statuses)
	if g > goroutinesBefore+20 {
		t.Errorf("%d goroutines left (%d before)", g, goroutinesBefore)
	}
}

// requestGoroutines counts the goroutines other than those that serve
// idle keep-alive connections (HTTP clients' and servers' pools, which
// outlive requests by design), and those.
func requestGoroutines() (other, idle int) {
	buf := make([]byte, 64<<20)
	buf = buf[:runtime.Stack(buf, true)]
	for _, g := range strings.Split(string(buf), "\n\n") {
		if strings.Contains(g, "net/http.(*persistConn)") || strings.Contains(g, "net/http.(*conn).serve") {
			idle++
		} else {
			other++
		}
	}
	return other, idle
}

// rssBytes is this process's resident set size (Linux), or 0.
func rssBytes() int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, "VmRSS:") {
			var kb int64
			fmt.Sscanf(strings.TrimPrefix(line, "VmRSS:"), "%d", &kb)
			return kb << 10
		}
	}
	return 0
}
