package proxy

import (
	"fmt"
	"sync"
	"time"

	gw "github.com/gwlabs/gateway"
)

// Cooldown bounds the retries of blocked requests: a key or an account
// whose requests were blocked Incidents times within Window is refused
// for Period (429 rate_limited with Retry-After, before anything else is
// done with the request), and the cool-down is recorded as an incident
// of kind "cooldown". Incidents <= 0 turns it off. The counts are kept
// in this instance's memory.
type Cooldown struct {
	Incidents int
	Window    time.Duration
	Period    time.Duration
}

// IncidentCooldown is the incident kind recorded when a key or account
// is cooled down.
const IncidentCooldown = "cooldown"

// cooler keeps, per key and per account, the times of recent blocks and
// the end of a running cool-down.
type cooler struct {
	cfg Cooldown
	mu  sync.Mutex
	m   map[string]*coolState
}

type coolState struct {
	blocks []time.Time // the last cfg.Incidents blocks, oldest first
	until  time.Time
}

// maxCoolEntries bounds the map: past it, entries with nothing running
// are dropped.
const maxCoolEntries = 100_000

func newCooler(c Cooldown) *cooler {
	if c.Incidents <= 0 {
		return nil
	}
	if c.Window <= 0 {
		c.Window = 10 * time.Minute
	}
	if c.Period <= 0 {
		c.Period = 15 * time.Minute
	}
	return &cooler{cfg: c, m: map[string]*coolState{}}
}

func coolKeys(p *gw.Principal) [2]string {
	return [2]string{"key:" + p.KeyID, "account:" + p.AccountID}
}

// check returns the refusal of a principal in a cool-down, nil otherwise.
func (c *cooler) check(p *gw.Principal, now time.Time) error {
	if c == nil || p == nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for k, id := range coolKeys(p) {
		s := c.m[id]
		if s == nil || !now.Before(s.until) {
			continue
		}
		who := "API key"
		if k == 1 {
			who = "account"
		}
		return &gw.Error{
			Code:       gw.CodeRateLimited,
			Message:    fmt.Sprintf("this %s is cooled down after %d blocked requests within %v; retry after the time in Retry-After", who, c.cfg.Incidents, c.cfg.Window),
			RetryAfter: max(s.until.Sub(now).Round(time.Second), time.Second),
			NoRetry:    true,
		}
	}
	return nil
}

// blocked notes a blocked request of p and reports whether it starts a
// cool-down (of the key or the account).
func (c *cooler) blocked(p *gw.Principal, now time.Time) bool {
	if c == nil || p == nil {
		return false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.m) > maxCoolEntries {
		for id, s := range c.m {
			if !now.Before(s.until) && (len(s.blocks) == 0 || now.Sub(s.blocks[len(s.blocks)-1]) > c.cfg.Window) {
				delete(c.m, id)
			}
		}
	}
	started := false
	for _, id := range coolKeys(p) {
		s := c.m[id]
		if s == nil {
			s = &coolState{}
			c.m[id] = s
		}
		if now.Before(s.until) {
			continue
		}
		s.blocks = append(s.blocks, now)
		if len(s.blocks) > c.cfg.Incidents {
			s.blocks = s.blocks[1:]
		}
		if len(s.blocks) == c.cfg.Incidents && now.Sub(s.blocks[0]) <= c.cfg.Window {
			s.until, s.blocks = now.Add(c.cfg.Period), s.blocks[:0]
			started = true
		}
	}
	return started
}
