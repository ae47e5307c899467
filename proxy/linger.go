package proxy

import (
	"context"
	"errors"
	"time"
)

// StreamLinger is how long a stream's vendor call outlives its caller:
// a caller that leaves does not cut the vendor's stream at once, so the
// usage the vendor reports at its end (Gemini's and Anthropic's last
// records, the C vendors' usage chunk) is read and billed rather than
// an estimate from the text relayed. After it the call is cancelled.
const StreamLinger = 5 * time.Second

// lingering returns the parent of a stream's vendor call: not cancelled
// when the caller leaves (ctx cancelled plainly) until linger later,
// while any other cause (the shutdown's hard stop) cancels it at once.
// Finish cancels the call in any case. No goroutine runs until ctx ends,
// and the timer holds none.
func lingering(ctx context.Context, linger time.Duration) (context.Context, context.CancelFunc) {
	vctx, cancel := context.WithCancelCause(context.WithoutCancel(ctx))
	stop := context.AfterFunc(ctx, func() {
		cause := context.Cause(ctx)
		if linger <= 0 || !errors.Is(cause, context.Canceled) {
			cancel(cause)
			return
		}
		time.AfterFunc(linger, func() { cancel(cause) })
	})
	return vctx, func() { stop(); cancel(context.Canceled) }
}
