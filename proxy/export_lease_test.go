package proxy

import "context"

// RenewLeasesOnce renews g's live holds once (tests).
func RenewLeasesOnce(g *Gateway, ctx context.Context) { g.renewLeases(ctx) }
