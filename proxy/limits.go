package proxy

import gw "github.com/gwlabs/gateway"

// Limits returns the rate limits in force for a caller: its key's own, or
// the configured defaults where the key has none.
func (g *Gateway) Limits(p *gw.Principal) gw.Limit { return g.limitFor(p) }
