package proxy

import "github.com/gwlabs/gateway/guard/leak"

// exemptingChecker reads an answer against the whole system text and
// takes the caller's own runs out of it (leak.Exempt) only when a leak
// is found: an answer that matches nothing never pays for reading the
// caller's text. On a leak, the exemption is computed once per request;
// when it cuts nothing the leak stands, else the matcher is rebuilt from
// the cut texts and reads again the answer not yet released. That is
// enough: what the first matcher released could not start a leak of the
// whole text, so not of its pieces either.
type exemptingChecker struct {
	x *Exchange
	m leak.Checker // nil: nothing left to protect
	// held is the answer from byte base on: what m has not released
	// (a copy: the writer reuses its buffers).
	held   []byte
	base   int64
	n      int64 // bytes written
	redone bool  // m is the rebuilt matcher: its leaks stand
	found  *leak.Leak
}

func (c *exemptingChecker) Write(p []byte) (int64, *leak.Leak) {
	if c.m == nil {
		c.n += int64(len(p))
		return c.n, nil
	}
	if c.redone {
		rel, l := c.m.Write(p)
		return c.base + rel, c.at(l)
	}
	c.held = append(c.held, p...)
	c.n += int64(len(p))
	rel, l := c.m.Write(p)
	if l != nil {
		return c.retry(rel, l, false)
	}
	c.drop(rel)
	return rel, nil
}

func (c *exemptingChecker) Close() (int64, *leak.Leak) {
	if c.m == nil {
		return c.n, nil
	}
	if c.redone {
		rel, l := c.m.Close()
		return c.base + rel, c.at(l)
	}
	rel, l := c.m.Close()
	if l != nil {
		return c.retry(rel, l, true)
	}
	c.held = nil
	return rel, nil
}

// drop forgets the answer released up to rel.
func (c *exemptingChecker) drop(rel int64) {
	if k := rel - c.base; k > 0 {
		c.held = c.held[:copy(c.held, c.held[k:])]
		c.base = rel
	}
}

// retry answers the first matcher's leak l (rel: what it released):
// the same leak when the caller's text exempts nothing (or the canary
// leaked), else the rebuilt matcher's verdict on the held answer.
func (c *exemptingChecker) retry(rel int64, l *leak.Leak, closing bool) (int64, *leak.Leak) {
	if l.Canary {
		return rel, l
	}
	sys, cut := c.x.exemptProtect()
	if !cut {
		return rel, l
	}
	c.drop(rel)
	c.m, c.redone = c.x.protectedMatcher(sys), true
	held := c.held
	c.held = nil
	if c.m == nil {
		c.base = c.n
		return c.n, nil
	}
	r, l := c.m.Write(held)
	if l == nil && closing {
		r, l = c.m.Close()
	}
	return c.base + r, c.at(l)
}

// at moves a leak found by the rebuilt matcher (which began at base)
// to the answer's offsets.
func (c *exemptingChecker) at(l *leak.Leak) *leak.Leak {
	if l == nil || c.found != nil {
		return c.found
	}
	moved := *l
	moved.At += c.base
	c.found = &moved
	return c.found
}

// exemptProtect is the system text without the runs the caller's own
// text carries, computed once per request; cut says it differs from
// protect.
func (x *Exchange) exemptProtect() (sys []string, cut bool) {
	if !x.exempted {
		x.exempted = true
		x.exempt = leak.Exempt(x.protect, x.open)
	}
	cut = len(x.exempt) != len(x.protect)
	for i := 0; !cut && i < len(x.exempt); i++ {
		cut = x.exempt[i] != x.protect[i]
	}
	return x.exempt, cut
}
