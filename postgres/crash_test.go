package postgres

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"sync"
	"testing"
	"time"

	gw "github.com/gwlabs/gateway"
)

// crashEnv, set to "URL SCHEMA", makes the test binary the child of
// TestSettleSurvivesKill.
const crashEnv = "GATEWAY_POSTGRES_CRASH_CHILD"

// crashChild settles requests one after another from a few goroutines and
// prints each request id once its Settle returned.
func crashChild(spec string) int {
	var url, schema string
	if _, err := fmt.Sscan(spec, &url, &schema); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	ctx := context.Background()
	db, err := OpenWith(ctx, url, Options{Schema: schema})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	a, err := db.EnsureAccount(ctx, "crash")
	if err == nil {
		err = db.TopUp(ctx, a.ID, gw.USD, "t")
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for i := 0; ; i++ {
				id := fmt.Sprintf("req_%d_%06d", g, i)
				if err := db.PlaceHold(ctx, gw.Hold{ID: id, AccountID: a.ID, Amount: 100, ExpiresAt: time.Now().Add(time.Hour)}); err != nil {
					fmt.Fprintln(os.Stderr, err)
					os.Exit(1)
				}
				if err := db.Settle(ctx, id, &gw.Record{Status: 200, Charge: 90}); err != nil {
					fmt.Fprintln(os.Stderr, err)
					os.Exit(1)
				}
				mu.Lock()
				fmt.Println(id)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return 0
}

// TestSettleSurvivesKill kills a process that is settling requests (kill
// -9, no chance to clean up) and checks that every Settle that returned is
// in the database, with the ledger and the held total consistent: the
// group commits' synchronous_commit=off loses nothing to a crash of the
// gateway.
func TestSettleSurvivesKill(t *testing.T) {
	url, schema := testSchema(t)
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), crashEnv+"="+url+" "+schema)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var settled []string
	sc := bufio.NewScanner(out)
	for len(settled) < 300 && sc.Scan() {
		settled = append(settled, sc.Text())
	}
	cmd.Process.Kill()
	for sc.Scan() { // settles reported between the last read and the kill
		settled = append(settled, sc.Text())
	}
	cmd.Wait()
	if len(settled) < 300 {
		t.Fatalf("child settled only %d requests: %s", len(settled), stderr.String())
	}

	db := openIn(t, url, schema)
	for _, id := range settled {
		r, err := db.Record(t.Context(), id)
		if err != nil || r.Charge != 90 {
			t.Fatalf("Record(%s) after the kill = %+v, %v; want the settled charge", id, r, err)
		}
	}
	a, err := db.AccountByName(t.Context(), "crash")
	if err != nil {
		t.Fatal(err)
	}
	if err := db.VerifyLedger(t.Context(), a.ID); err != nil {
		t.Error(err)
	}
	b, err := db.Balance(t.Context(), a.ID)
	if err != nil {
		t.Fatal(err)
	}
	if n := int64(len(settled)); b.Charged < gw.Money(90*n) {
		t.Errorf("Charged = %d after %d reported settles of 90", b.Charged, n)
	}
}
