package proxy

import (
	"fmt"
	"slices"
	"sync"
	"time"

	gw "github.com/gwlabs/gateway"
)

// Cooldown bounds the retries of blocked requests: a key whose requests
// were blocked Incidents times within Window is refused for Period (429
// rate_limited with Retry-After, before anything else is done with the
// request), and the cool-down is recorded as an incident of kind
// "cooldown" that says why. It spreads to the whole account only when
// AccountKeys of the account's keys (default 2) were cooled down within
// Window: one key's blocks cool that key alone. Only blocks on text the
// caller itself wrote count (the flagged segment's source is user,
// assistant or system text): a block on third-party text (a tool result,
// a fetched document, a tool description, an MCP tool's output) or on a
// token count is still refused and recorded, but does not count, so that
// whoever writes a page the caller's agent reads cannot lock the caller
// out. Incidents <= 0 turns it off. The counts are kept in this
// instance's memory.
type Cooldown struct {
	Incidents   int
	Window      time.Duration
	Period      time.Duration
	AccountKeys int
}

// IncidentCooldown is the incident kind recorded when a key or account
// is cooled down.
const IncidentCooldown = "cooldown"

// cooler keeps, per key, the times of recent blocks and the end of a
// running cool-down, and per account the keys cooled down lately.
type cooler struct {
	cfg Cooldown
	mu  sync.Mutex
	m   map[string]*coolState
}

type coolState struct {
	blocks []time.Time // key: the last cfg.Incidents blocks, oldest first
	cooled []keyCool   // account: its keys' cool-downs within the window
	until  time.Time
}

type keyCool struct {
	key string
	at  time.Time
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
	if c.AccountKeys <= 0 {
		c.AccountKeys = 2
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
		msg := fmt.Sprintf("this API key is cooled down after %d blocked requests within %v; retry after the time in Retry-After", c.cfg.Incidents, c.cfg.Window)
		if k == 1 {
			msg = fmt.Sprintf("this account is cooled down: %d of its API keys were cooled down within %v after blocked requests; retry after the time in Retry-After", c.cfg.AccountKeys, c.cfg.Window)
		}
		return &gw.Error{
			Code:       gw.CodeRateLimited,
			Message:    msg,
			RetryAfter: max(s.until.Sub(now).Round(time.Second), time.Second),
			NoRetry:    true,
		}
	}
	return nil
}

// blocked notes a counted block of p (a block on the caller's own
// text) and returns the reason of the cool-down it starts, "" when none:
// the key's, and the account's when enough of its keys are cooled down.
func (c *cooler) blocked(p *gw.Principal, now time.Time) string {
	if c == nil || p == nil {
		return ""
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.m) > maxCoolEntries {
		for id, s := range c.m {
			last := time.Time{}
			if n := len(s.blocks); n > 0 {
				last = s.blocks[n-1]
			}
			if n := len(s.cooled); n > 0 && s.cooled[n-1].at.After(last) {
				last = s.cooled[n-1].at
			}
			if !now.Before(s.until) && now.Sub(last) > c.cfg.Window {
				delete(c.m, id)
			}
		}
	}
	ids := coolKeys(p)
	ks := c.state(ids[0])
	if now.Before(ks.until) {
		return ""
	}
	ks.blocks = append(ks.blocks, now)
	if len(ks.blocks) > c.cfg.Incidents {
		ks.blocks = ks.blocks[1:]
	}
	if len(ks.blocks) < c.cfg.Incidents || now.Sub(ks.blocks[0]) > c.cfg.Window {
		return ""
	}
	ks.until, ks.blocks = now.Add(c.cfg.Period), ks.blocks[:0]
	why := fmt.Sprintf("API key %s: %d blocked requests on the caller's own text within %v; the key is refused for %v", p.KeyID, c.cfg.Incidents, c.cfg.Window, c.cfg.Period)
	as := c.state(ids[1])
	if now.Before(as.until) {
		return why
	}
	as.cooled = slices.DeleteFunc(as.cooled, func(k keyCool) bool { return now.Sub(k.at) > c.cfg.Window || k.key == p.KeyID })
	as.cooled = append(as.cooled, keyCool{p.KeyID, now})
	if len(as.cooled) >= c.cfg.AccountKeys {
		as.until, as.cooled = now.Add(c.cfg.Period), as.cooled[:0]
		why += fmt.Sprintf("; %d of account %s's keys were cooled down within %v, so the whole account is refused for %v", c.cfg.AccountKeys, p.AccountID, c.cfg.Window, c.cfg.Period)
	}
	return why
}

func (c *cooler) state(id string) *coolState {
	s := c.m[id]
	if s == nil {
		s = &coolState{}
		c.m[id] = s
	}
	return s
}
