package proxy

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	gw "github.com/gwlabs/gateway"
	"github.com/gwlabs/gateway/internal/id"
)

// DefaultRefusedPerMinute is how many refused requests of one key a
// minute are recorded one row each (Config.RefusedPerMinute): past it,
// the minute's further refusals are counted and written as one aggregate
// record when the minute is over.
const DefaultRefusedPerMinute = 60

// DefaultIncidentsPerMinute is how many incidents of one account a
// minute keep their flagged text (Config.IncidentsPerMinute); past it the
// incident is still recorded, without its text.
const DefaultIncidentsPerMinute = 30

// MaxIncidentText bounds the flagged text kept with one incident.
const MaxIncidentText = 4 << 10

// window counts one key's (or account's) events in one minute.
type window struct {
	minute  int64
	n       int
	dropped int
	codes   map[gw.Code]int
	status  int
	account string
}

// meter keeps per-key (or per-account) minute windows. Its size is
// bounded by the keys active in the current minute: a stale window is
// flushed and dropped at the next minute's first event of any key.
type meter struct {
	mu    sync.Mutex
	m     map[string]*window
	swept int64
}

// refused counts a refusal of key at now and reports whether it gets a
// row of its own; the aggregates of finished minutes are returned for
// writing.
func (g *Gateway) refused(key, account string, code gw.Code, status int, now time.Time) (own bool, flush []gw.Record) {
	r := &g.refusals
	r.mu.Lock()
	defer r.mu.Unlock()
	w := r.tick(key, now, func(k string, w *window) {
		if w.dropped > 0 {
			flush = append(flush, aggregate(k, w, now))
		}
	})
	w.account = account
	if w.n <= g.cfg.RefusedPerMinute {
		return true, flush
	}
	if w.codes == nil {
		w.codes = map[gw.Code]int{}
	}
	w.dropped++
	w.codes[code]++
	w.status = status
	return false, flush
}

// tick counts an event of key at now in its window of now's minute and
// returns that window. The first event of a minute first drops the
// windows of earlier minutes, passing each to stale (nil: none wanted).
// The caller holds r.mu.
func (r *meter) tick(key string, now time.Time, stale func(key string, w *window)) *window {
	minute := now.Unix() / 60
	if r.m == nil {
		r.m = map[string]*window{}
	}
	if minute != r.swept {
		r.swept = minute
		for k, w := range r.m {
			if w.minute != minute {
				if stale != nil {
					stale(k, w)
				}
				delete(r.m, k)
			}
		}
	}
	w := r.m[key]
	if w == nil {
		w = &window{minute: minute}
		r.m[key] = w
	}
	w.n++
	return w
}

// aggregate is the one record of a key's minute of refusals beyond the
// threshold.
func aggregate(key string, w *window, now time.Time) gw.Record {
	codes := make([]string, 0, len(w.codes))
	top, topN := gw.Code(""), 0
	for c, n := range w.codes {
		codes = append(codes, fmt.Sprintf("%s %d", c, n))
		if n > topN {
			top, topN = c, n
		}
	}
	sort.Strings(codes)
	start := time.Unix(w.minute*60, 0).UTC()
	return gw.Record{
		RequestID: id.New("req_", now), AccountID: w.account, KeyID: key,
		Status: w.status, ErrorCode: top, Guard: "off", CreatedAt: start,
		Note: fmt.Sprintf("refused_aggregate: %d more refused requests of this key in the minute from %s (%s)", w.dropped, start.Format("15:04"), strings.Join(codes, ", ")),
	}
}

// FlushRefusals writes the aggregate records of every minute still
// counting (at shutdown).
func (g *Gateway) FlushRefusals(ctx context.Context) {
	r := &g.refusals
	r.mu.Lock()
	var out []gw.Record
	for k, w := range r.m {
		if w.dropped > 0 {
			out = append(out, aggregate(k, w, g.cfg.Now()))
		}
		delete(r.m, k)
	}
	r.mu.Unlock()
	g.writeAggregates(ctx, out)
}

func (g *Gateway) writeAggregates(ctx context.Context, recs []gw.Record) {
	for i := range recs {
		if err := g.cfg.Store.Log(ctx, &recs[i]); err != nil {
			g.cfg.Logger.Error("record refused aggregate", "key", recs[i].KeyID, "err", err)
		}
	}
}

// incidentText reports whether account's incident at now keeps its
// flagged text (at most Config.IncidentsPerMinute a minute).
func (g *Gateway) incidentText(account string, now time.Time) bool {
	r := &g.incidents
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.tick(account, now, nil).n <= g.cfg.IncidentsPerMinute
}
