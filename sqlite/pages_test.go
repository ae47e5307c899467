package sqlite

import (
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"testing"
	"time"

	gw "github.com/gwlabs/gateway"
)

// TestRequestWritePages lists the pages a request's write (hold, then
// settle with its record, holds in memory) puts in the write-ahead log,
// by the table or index they belong to: what the write costs, in the
// unit the commit spends its time on. Run with -v to see the list.
func TestRequestWritePages(t *testing.T) {
	db, err := OpenWith(t.Context(), filepath.Join(t.TempDir(), "gateway.db"), Options{SyncInterval: time.Hour, Exclusive: true, backstop: 1 << 30})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := t.Context()
	a, err := db.EnsureAccount(ctx, "pages")
	if err != nil {
		t.Fatal(err)
	}
	if err := db.TopUp(ctx, a.ID, 1000*gw.USD, "pages"); err != nil {
		t.Fatal(err)
	}
	request := func(i int) {
		id := fmt.Sprintf("req_%012d", i)
		h := gw.Hold{ID: id, AccountID: a.ID, KeyID: "key_1", Amount: gw.Cent, ExpiresAt: time.Now().Add(time.Hour)}
		if err := db.PlaceHold(ctx, h); err != nil {
			t.Fatal(err)
		}
		r := &gw.Record{RequestID: id, AccountID: a.ID, KeyID: "key_1", Endpoint: gw.ShapeM, Vendor: "anthropic",
			Model: "claude-x", Stream: true, Status: 200, Charge: gw.Cent / 2, Cost: gw.Cent / 3, CreatedAt: time.Now()}
		if err := db.Settle(ctx, id, r); err != nil {
			t.Fatal(err)
		}
	}
	// Warm up: the tables past their first pages.
	const warm, n = 300, 200
	for i := range warm {
		request(i)
	}
	wal := db.path + "-wal"
	before, err := os.ReadFile(wal)
	if err != nil {
		t.Fatal(err)
	}
	b0 := db.Stats().Batches
	for i := range n {
		request(warm + i)
	}
	commits := db.Stats().Batches - b0
	log, err := os.ReadFile(wal)
	if err != nil {
		t.Fatal(err)
	}
	var pageSize int
	if err := db.w.QueryRowContext(ctx, `PRAGMA page_size`).Scan(&pageSize); err != nil {
		t.Fatal(err)
	}
	frame := 24 + pageSize
	start := len(before)
	if start < 32 {
		start = 32
	}
	pages := map[uint32]int{}
	frames := 0
	for off := start; off+frame <= len(log); off += frame {
		pages[binary.BigEndian.Uint32(log[off:])]++
		frames++
	}
	// Which b-tree each page belongs to (the schema's root pages; a
	// page that is not a root is named by the dbstat table if the build
	// has it, else "other").
	owner := map[uint32]string{}
	if rows, err := db.w.QueryContext(ctx, `SELECT name, pageno FROM dbstat`); err == nil {
		for rows.Next() {
			var name string
			var p uint32
			if rows.Scan(&name, &p) == nil {
				owner[p] = name
			}
		}
		rows.Close()
	} else {
		t.Logf("dbstat: %v", err)
	}
	by := map[string]int{}
	for p, c := range pages {
		name := owner[p]
		if name == "" {
			name = fmt.Sprintf("page %d", p)
		}
		by[name] += c
	}
	names := make([]string, 0, len(by))
	for k := range by {
		names = append(names, k)
	}
	sort.Slice(names, func(i, j int) bool { return by[names[i]] > by[names[j]] })
	t.Logf("%d requests: %d commits, %d frames (%.2f a request, %d bytes)", n, commits, frames, float64(frames)/n, frames*frame/n)
	for _, k := range names {
		t.Logf("  %-28s %.2f frames a request", k, float64(by[k])/n)
	}
	if float64(commits) != n {
		t.Errorf("commits = %d for %d requests, want one each", commits, n)
	}
}
