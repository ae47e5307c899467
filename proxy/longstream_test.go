package proxy_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	gw "github.com/gwlabs/gateway"
	"github.com/gwlabs/gateway/auth"
	"github.com/gwlabs/gateway/postgres"
	"github.com/gwlabs/gateway/proxy"
	"github.com/gwlabs/gateway/sqlite"
)

// clock is a fake clock the test moves by hand.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// fixedBiller holds hold and charges charge on a vendor cost of cost.
type fixedBiller struct{ hold, cost, charge gw.Money }

func (b fixedBiller) Known(vendor, model string) bool { return true }
func (b fixedBiller) Hold(r proxy.HoldRequest) (proxy.HoldPlan, error) {
	return proxy.HoldPlan{Amount: b.hold}, nil
}
func (b fixedBiller) PriceAt(vendor, model string, u gw.Usage, start time.Time) (proxy.Quote, error) {
	return proxy.Quote{Cost: b.cost, Charge: b.charge}, nil
}

// storesWithClock opens SQLite stores (holds in the table, and in
// memory), and a PostgreSQL one in its own
// schema when GATEWAY_TEST_POSTGRES_URL names a server, on clock c.
func storesWithClock(t *testing.T, c *clock) map[string]gw.Store {
	t.Helper()
	ctx := context.Background()
	out := map[string]gw.Store{}
	st, err := sqlite.OpenWith(ctx, filepath.Join(t.TempDir(), "p.db"), sqlite.Options{Now: c.Now})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	out["sqlite"] = st
	// The serving gateway's SQLite store keeps its holds in memory.
	mem, err := sqlite.OpenWith(ctx, filepath.Join(t.TempDir(), "m.db"), sqlite.Options{Now: c.Now, Exclusive: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { mem.Close() })
	out["sqlite-memory-holds"] = mem
	if url := os.Getenv("GATEWAY_TEST_POSTGRES_URL"); url != "" {
		var b [6]byte
		rand.Read(b[:])
		schema := "gwtest_" + hex.EncodeToString(b[:])
		pg, err := postgres.OpenWith(ctx, url, postgres.Options{Schema: schema, Now: c.Now})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			pg.Close()
			conn, err := pgx.Connect(context.Background(), url)
			if err == nil {
				_, _ = conn.Exec(context.Background(), `DROP SCHEMA IF EXISTS `+pgx.Identifier{schema}.Sanitize()+` CASCADE`)
				conn.Close(context.Background())
			}
		})
		out["postgres"] = pg
	}
	return out
}

// Issue 29 item 1: a 33-minute stream outlived its 30-minute hold; a
// second request spent the freed money and the late settle took the
// balance below zero. Hand-worked, on a $0.50 account (50,000,000 uc):
// each request holds 30,000,000 and costs 30,804,360; the second one
// comes at minute 31.
//
// Before: the stream's hold was swept at minute 30, the second request
// held and was charged 30,000,000 (capped at its hold; balance
// 20,000,000), and the stream's late settle (capped at its 30,000,000
// hold, through a fresh zero hold) took the balance to -10,000,000.
//
// After: the stream renews its hold while it runs, so at minute 31 only
// 20,000,000 is available and the second request is refused (402); the
// stream settles in full: 50,000,000 - 30,804,360 = 19,195,640. And when
// the renewals stall (a process that stopped renewing), the second
// request goes through and is charged 30,804,360 (its hold plus the
// available balance cover it; balance 19,195,640), and the swept hold's
// late settle takes only what the balance covers then: 19,195,640, with
// 30,804,360 - 19,195,640 = 11,608,720 recorded as the operator's loss;
// the balance ends at 0, never below.
func TestLongStreamOutlivesHoldTTL(t *testing.T) {
	const (
		topUp  = 50_000_000
		hold   = 30_000_000
		charge = 30_804_360
	)
	for _, renew := range []bool{true, false} {
		c := &clock{now: time.Date(2026, 11, 26, 9, 0, 0, 0, time.UTC)}
		for name, st := range storesWithClock(t, c) {
			t.Run(name+map[bool]string{true: "/renewed", false: "/stalled"}[renew], func(t *testing.T) {
				ctx := context.Background()
				acct, err := st.EnsureAccount(ctx, "long")
				if err != nil {
					t.Fatal(err)
				}
				if err := st.TopUp(ctx, acct.ID, topUp, "test"); err != nil {
					t.Fatal(err)
				}
				p := &provider{send: func(ctx context.Context, c *gw.Call) (*gw.Upstream, error) { return okUpstream(), nil }}
				g, err := proxy.New(proxy.Config{
					Store: st, Auth: &auth.Authenticator{Keys: st},
					Providers: map[string]gw.Provider{"openai": p},
					Biller:    fixedBiller{hold: hold, cost: charge * 100 / 109, charge: charge},
					HoldTTL:   30 * time.Minute, Now: c.Now,
				})
				if err != nil {
					t.Fatal(err)
				}
				pr := &gw.Principal{KeyID: "key_1", AccountID: acct.ID}
				in := func(id string) proxy.Inbound {
					return proxy.Inbound{RequestID: id, Endpoint: gw.ShapeC, Principal: pr, Vendor: "openai", Model: "m", Stream: true,
						Body: []byte(`{"model":"openai/m","messages":[]}`), Received: c.Now()}
				}
				x, err := g.Begin(ctx, in("req_long"))
				if err != nil {
					t.Fatal(err)
				}
				up, err := x.Call(ctx)
				if err != nil {
					t.Fatal(err)
				}
				defer up.Body.Close()
				// 33 minutes of stream, an event a minute, the sweeper
				// running every minute; a second request at minute 31.
				var second error
				for minute := 1; minute <= 33; minute++ {
					c.advance(time.Minute)
					if renew {
						x.KeepAlive(ctx)
					}
					if _, err := st.ExpireHolds(ctx, c.Now()); err != nil {
						t.Fatal(err)
					}
					if minute == 31 {
						y, err := g.Begin(ctx, in("req_second"))
						second = err
						if err == nil {
							if _, err := y.Finish(ctx, proxy.Outcome{Status: 200, Success: true, Usage: gw.Usage{Reported: true}}); err != nil {
								t.Fatal(err)
							}
						}
					}
				}
				got, err := x.Finish(ctx, proxy.Outcome{Status: 200, Success: true, Usage: gw.Usage{InputTokens: 1, Reported: true}})
				if err != nil {
					t.Fatal(err)
				}
				b, err := st.Balance(ctx, acct.ID)
				if err != nil {
					t.Fatal(err)
				}
				rec, err := st.Record(ctx, "req_long")
				if err != nil {
					t.Fatal(err)
				}
				if b.Balance < 0 || b.Balance != b.TopUps-b.Charged || b.Held != 0 {
					t.Fatalf("balance %+v: below zero or out of balance", b)
				}
				if renew {
					if gw.ErrorCode(second) != gw.CodeInsufficientBalance {
						t.Errorf("second request at minute 31: %v, want insufficient_balance (the stream's hold still counts)", second)
					}
					if got != charge || rec.Loss != 0 || b.Balance != 19_195_640 {
						t.Errorf("stream charged %d, loss %d, balance %d; want %d, 0, 19,195,640", got, rec.Loss, b.Balance, charge)
					}
					return
				}
				if second != nil {
					t.Fatalf("second request: %v, want it through (the stalled hold was swept)", second)
				}
				if got != 19_195_640 || rec.Loss != 11_608_720 || b.Balance != 0 ||
					!strings.Contains(rec.Note, proxy.NoteHoldExpired) || !strings.Contains(rec.Note, gw.NoteOperatorLoss) {
					t.Errorf("stalled stream: charged %d loss %d balance %d note %q; want 19,195,640, 11,608,720, 0, hold_expired and operator_loss",
						got, rec.Loss, b.Balance, rec.Note)
				}
			})
		}
	}
}

// windowBiller holds from the body size like billing (1 uc per 3 bytes)
// and knows a context window.
type windowBiller struct{ window int64 }

func (b windowBiller) Known(vendor, model string) bool { return true }
func (b windowBiller) Hold(r proxy.HoldRequest) (proxy.HoldPlan, error) {
	return proxy.HoldPlan{Amount: gw.Money((r.BodyBytes + 2) / 3)}, nil
}
func (b windowBiller) PriceAt(vendor, model string, u gw.Usage, start time.Time) (proxy.Quote, error) {
	return proxy.Quote{}, nil
}
func (b windowBiller) ContextWindow(vendor, model string) int64 { return b.window }

// Issue 29 item 2 (before -> after): a document or image by URL, or an
// uploaded file, is billed by the vendor as prompt although the body
// does not hold it; the hold was sized from the body alone (80,000 input
// tokens charged 0.232 instead of 26.18 cents once capped). Now its hold
// covers the model's whole context window: a 200,000-token window holds
// 200,000 tokens (600,000 body bytes at 3 bytes a token), so an account
// with less available is refused before the vendor is called, and one
// with enough holds exactly that.
func TestExternalInputHoldsContextWindow(t *testing.T) {
	p := &provider{send: func(ctx context.Context, c *gw.Call) (*gw.Upstream, error) { return okUpstream(), nil }}
	f := newFixture(t, p, nil, nil, 0)
	ctx := context.Background()
	if err := f.store.TopUp(ctx, f.principal.AccountID, 150_000, "t"); err != nil {
		t.Fatal(err)
	}
	g, err := proxy.New(proxy.Config{Store: f.store, Auth: &auth.Authenticator{Keys: f.store}, Providers: map[string]gw.Provider{"openai": p}, Biller: windowBiller{window: 200_000}})
	if err != nil {
		t.Fatal(err)
	}
	in := f.inbound("req_url")
	in.Body = []byte(`{"model":"openai/m","max_tokens":10,"messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":"https://example.com/a.png"}}]}]}`)
	if _, err := g.Begin(ctx, in); gw.ErrorCode(err) != gw.CodeInsufficientBalance {
		t.Errorf("URL image on 150,000 available: %v, want insufficient_balance (the hold is 200,000)", err)
	}
	if err := f.store.TopUp(ctx, f.principal.AccountID, 100_000, "t"); err != nil {
		t.Fatal(err)
	}
	in.RequestID = "req_url2"
	x, err := g.Begin(ctx, in)
	if err != nil {
		t.Fatal(err)
	}
	if b := f.balance(t); b.Held != 200_000 {
		t.Errorf("held %d, want the context window's 200,000", b.Held)
	}
	_, _ = x.Finish(ctx, proxy.Outcome{Status: 502, Err: &gw.Error{Code: gw.CodeUpstream}})
	// The same request with the image inline holds its prompt bound
	// (issue 46 D10: what the gateway lets the vendor bill for it).
	in.RequestID, in.Body = "req_inline", []byte(`{"model":"openai/m","max_tokens":10,"messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":"data:image/png;base64,AAAA"}}]}]}`)
	if _, err := g.Begin(ctx, in); err != nil {
		t.Fatal(err)
	}
	if b, want := f.balance(t), gw.Money(proxy.PromptBound(in.Body, 0, gw.Hosted{})); b.Held != want {
		t.Errorf("inline image held %d, want its bound's %d", b.Held, want)
	}
}
