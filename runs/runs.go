// Package runs reads a request's run from its headers: X-Gateway-Run
// names the run (scoped to the caller's account), X-Gateway-Run-Parent
// its parent run, X-Gateway-Run-Budget (USD), X-Gateway-Run-Max-Requests
// and X-Gateway-Run-Idle (seconds) its caps. The store keeps the runs
// (gw.RunStore); proxy admits and settles their steps.
package runs

import (
	"net/http"
	"strconv"
	"strings"
	"time"

	gw "github.com/gwlabs/gateway"
)

// The request headers naming a run and its caps, and the answer
// headers reporting it.
const (
	HeaderRun         = "X-Gateway-Run"
	HeaderParent      = "X-Gateway-Run-Parent"
	HeaderBudget      = "X-Gateway-Run-Budget"
	HeaderMaxRequests = "X-Gateway-Run-Max-Requests"
	HeaderIdle        = "X-Gateway-Run-Idle"
	HeaderSpend       = "X-Gateway-Run-Spend"
	HeaderRemaining   = "X-Gateway-Run-Remaining"
)

// MaxIDLen bounds a run id.
const MaxIDLen = 128

// Parse reads the run headers of h (a zero ID: the request names no
// run). A malformed header is a CodeInvalidRequest *gw.Error naming
// it; cap headers without X-Gateway-Run are one too.
func Parse(h http.Header) (s gw.RunRef, err error) {
	s.ID = h.Get(HeaderRun)
	s.Parent = h.Get(HeaderParent)
	budget, steps, idle := h.Get(HeaderBudget), h.Get(HeaderMaxRequests), h.Get(HeaderIdle)
	if s.ID == "" {
		if s.Parent != "" || budget != "" || steps != "" || idle != "" {
			return gw.RunRef{}, bad(HeaderRun + " is required with the other run headers")
		}
		return gw.RunRef{}, nil
	}
	if !ValidID(s.ID) {
		return gw.RunRef{}, bad(HeaderRun + " must be 1-128 characters of A-Z, a-z, 0-9, '.', '_', ':' and '-'")
	}
	if s.Parent != "" && !ValidID(s.Parent) {
		return gw.RunRef{}, bad(HeaderParent + " must be 1-128 characters of A-Z, a-z, 0-9, '.', '_', ':' and '-'")
	}
	if s.Parent == s.ID {
		s.Parent = ""
	}
	if budget != "" {
		m, err := gw.ParseUSD(strings.TrimSpace(budget))
		if err != nil || m <= 0 {
			return gw.RunRef{}, bad(HeaderBudget + " must be a positive amount in USD, like 0.50")
		}
		s.Caps.Budget = m
	}
	if steps != "" {
		n, err := strconv.ParseInt(strings.TrimSpace(steps), 10, 64)
		if err != nil || n <= 0 {
			return gw.RunRef{}, bad(HeaderMaxRequests + " must be a positive whole number")
		}
		s.Caps.MaxRequests = n
	}
	if idle != "" {
		n, err := strconv.ParseInt(strings.TrimSpace(idle), 10, 64)
		if err != nil || n <= 0 || n > 366*24*3600 {
			return gw.RunRef{}, bad(HeaderIdle + " must be a positive number of seconds, at most a year")
		}
		s.Caps.Idle = time.Duration(n) * time.Second
	}
	return s, nil
}

func bad(msg string) *gw.Error {
	return &gw.Error{Code: gw.CodeInvalidRequest, ErrorCode: "invalid_run_header", Message: msg, NoRetry: true}
}

// ValidID reports whether id is 1-128 characters of [A-Za-z0-9._:-].
func ValidID(id string) bool { return gw.ValidRunID(id) }

// SetHeaders sets the answer headers of r on h: its spend and, when it
// has a budget, what remains of it (USD).
func SetHeaders(h http.Header, r *gw.Run) {
	if r == nil {
		return
	}
	h.Set(HeaderSpend, r.Spend.USDString())
	if left, ok := r.Remaining(); ok {
		h.Set(HeaderRemaining, left.USDString())
	} else {
		h.Del(HeaderRemaining)
	}
}
