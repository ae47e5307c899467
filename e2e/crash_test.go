package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/gwlabs/gateway/sqlite"
)

// TestCrashKeepsEveryCharge runs the real binary under load, kills it with
// SIGKILL, and checks the store afterwards: every charge a caller was told
// of (header or trailer) is in the ledger with the same amount, the
// balance identity holds to the unit, and the holds of requests that died
// in flight expire within their bound. Then the gateway restarts on the
// same file and shuts down cleanly on SIGTERM.
//
// Run it alone with: go test -run TestCrashKeepsEveryCharge -v ./e2e/
func TestCrashKeepsEveryCharge(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "gateway")
	build := exec.Command("go", "build", "-o", bin, "../cmd/gateway")
	build.Stderr = os.Stderr
	if err := build.Run(); err != nil {
		t.Fatalf("build: %v", err)
	}
	db := filepath.Join(dir, "crash.db")
	out, err := exec.Command(bin, "keys", "create", "--db", db, "--account", "crash", "--balance-usd", "1000", "--json").Output()
	if err != nil {
		t.Fatalf("keys create: %v", err)
	}
	var created struct{ Key, Account string }
	if err := json.Unmarshal(out, &created); err != nil || !strings.HasPrefix(created.Key, "gwk_") {
		t.Fatalf("keys create printed %s", out)
	}

	proc, url := startBinary(t, bin, db)
	killAt := time.Now()
	type paid struct {
		rid    string
		charge string
	}
	var (
		mu    sync.Mutex
		told  []paid
		wg    sync.WaitGroup
		stop  = make(chan struct{})
		model = "openai/" + nativeModels["openai"]
	)
	client := &http.Client{Timeout: 10 * time.Second}
	for w := range 12 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				stream := (w+i)%2 == 0
				body := chatBody(model, fmt.Sprintf("request %d/%d [fake:cache][fake:delay=2ms]", w, i), stream, "")
				req, _ := http.NewRequest("POST", url+"/v1/chat/completions", bytes.NewReader(body))
				req.Header.Set("Authorization", "Bearer "+created.Key)
				resp, err := client.Do(req)
				if err != nil {
					continue // the gateway died mid-request
				}
				_, rerr := io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != 200 || rerr != nil {
					continue
				}
				c := resp.Header.Get("X-Gateway-Customer-Charge-Cents")
				if c == "" {
					c = resp.Trailer.Get("X-Gateway-Customer-Charge-Cents")
				}
				if c == "" {
					continue // a stream cut before its trailer: the caller was told nothing
				}
				mu.Lock()
				told = append(told, paid{resp.Header.Get("X-Gateway-Request-Id"), c})
				mu.Unlock()
			}
		}()
	}
	time.Sleep(1500 * time.Millisecond)
	killAt = time.Now()
	if err := proc.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = proc.Wait()
	close(stop)
	wg.Wait()
	if len(told) < 20 {
		t.Fatalf("only %d charged responses before the kill; the load did not run", len(told))
	}

	ctx := context.Background()
	st, err := sqlite.Open(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	acct, err := st.AccountByName(ctx, "crash")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range told {
		r, err := st.Record(ctx, p.rid)
		if err != nil {
			t.Fatalf("charge %s told to the caller of %s is not in the ledger: %v", p.charge, p.rid, err)
		}
		if r.Charge.CentsString() != p.charge {
			t.Fatalf("%s: caller told %s, ledger has %s", p.rid, p.charge, r.Charge.CentsString())
		}
	}
	if err := st.VerifyLedger(ctx, acct.ID); err != nil {
		t.Fatalf("ledger: %v", err)
	}
	b, err := st.Balance(ctx, acct.ID)
	if err != nil {
		t.Fatal(err)
	}
	if b.Balance != b.TopUps-b.Charged || b.Balance < 0 {
		t.Fatalf("balance identity broken: %+v", b)
	}
	// Holds of requests in flight at the kill are bounded by the hold TTL
	// (30 minutes): sweeping at that bound leaves nothing held.
	if _, err := st.ExpireHolds(ctx, killAt.Add(30*time.Minute+time.Second)); err != nil {
		t.Fatal(err)
	}
	after, _ := st.Balance(ctx, acct.ID)
	if after.Held != 0 || after.Balance != b.Balance {
		t.Fatalf("after the hold bound: %+v (before %+v)", after, b)
	}
	t.Logf("%d charges told to callers, all in the ledger; $%s of dangling holds released at the bound", len(told), b.Held.USDString())
	st.Close()

	// The gateway comes back on the same file and drains on SIGTERM.
	proc, url = startBinary(t, bin, db)
	req, _ := http.NewRequest("POST", url+"/v1/chat/completions", bytes.NewReader(chatBody(model, "again", false, "")))
	req.Header.Set("Authorization", "Bearer "+created.Key)
	resp, err := client.Do(req)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("after restart: %v %v", err, resp)
	}
	resp.Body.Close()
	_ = proc.Process.Signal(syscall.SIGTERM)
	done := make(chan error, 1)
	go func() { done <- proc.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("exit after SIGTERM: %v", err)
		}
	case <-time.After(15 * time.Second):
		_ = proc.Process.Kill()
		t.Fatal("no exit 15s after SIGTERM")
	}
}

// startBinary runs "gateway serve" with fake vendors on a free port and
// returns once it listens.
func startBinary(t *testing.T, bin, db string) (*exec.Cmd, string) {
	t.Helper()
	cmd := exec.Command(bin, "serve", "--db", db, "--addr", "127.0.0.1:0", "--fake-vendors")
	cmd.Env = append(os.Environ(), "GATEWAY_RPM=0", "GATEWAY_TPM=0", "GATEWAY_LOG_LEVEL=error")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if u, ok := strings.CutPrefix(sc.Text(), "gateway listening on "); ok {
				found <- u
			}
		}
	}()
	select {
	case u := <-found:
		return cmd, u
	case <-time.After(20 * time.Second):
		t.Fatal("the gateway did not start")
	}
	return nil, ""
}
