package server

import (
	"net/http"
	"time"

	gw "github.com/gwlabs/gateway"
	"github.com/gwlabs/gateway/internal/id"
)

// keyHeader is the caller's credential as an Authorization value: the
// Authorization header, or else x-api-key (as Anthropic's SDKs send it)
// as a bearer token.
func keyHeader(r *http.Request) string {
	authz := r.Header.Get("Authorization")
	if k := r.Header.Get("X-Api-Key"); authz == "" && k != "" {
		authz = "Bearer " + k
	}
	return authz
}

// accountRead is the start of a read of the caller's own account (GET
// /v1/balance, GET /v1/runs): the request's time, a request id in
// HeaderRequestID, Cache-Control no-store, and the key in Authorization
// (or x-api-key) authenticated. fail writes an error for this request in
// the plain envelope; when the key is refused accountRead has written
// the error already and p is nil.
func (s *Server) accountRead(w http.ResponseWriter, r *http.Request) (p *gw.Principal, now time.Time, fail func(error)) {
	now = s.cfg.Now()
	rid := id.New("req_", now)
	w.Header().Set(HeaderRequestID, rid)
	w.Header().Set("Cache-Control", "no-store")
	fail = func(err error) { writeError(w, plain, rid, gw.AsError(err)) }
	p, err := s.cfg.Gateway.Authenticate(r.Context(), keyHeader(r))
	if err != nil {
		fail(err)
		return nil, now, fail
	}
	return p, now, fail
}
