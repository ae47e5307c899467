package chat

import (
	"math"
	"net/http"
	"strconv"

	gw "github.com/gwlabs/gateway"
	"github.com/gwlabs/gateway/shape"
)

// retryAfterSeconds rounds a wait up to whole seconds, at least 1.
func retryAfterSeconds(e *gw.Error) string {
	return strconv.Itoa(max(1, int(math.Ceil(e.RetryAfter.Seconds()))))
}

// WriteError sends e in shape's envelope with its status, Retry-After
// (always on 429) and x-should-retry: false on errors a retry cannot fix.
func WriteError(w http.ResponseWriter, sh shape.Shape, rid string, e *gw.Error) {
	if sw, ok := w.(*statusWriter); ok {
		sw.err = e
	}
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Del(HeaderCharge)
	h.Del("Trailer")
	if e.Code == gw.CodeRateLimited || e.RetryAfter > 0 {
		h.Set("Retry-After", retryAfterSeconds(e))
	}
	if e.NoRetry {
		h.Set("X-Should-Retry", "false")
	}
	w.WriteHeader(e.Code.Status())
	_, _ = w.Write(sh.ErrorBody(rid, e))
}
