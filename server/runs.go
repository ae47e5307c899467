package server

import (
	"errors"
	"net/http"
	"strconv"
	"strings"

	gw "github.com/gwlabs/gateway"
	"github.com/gwlabs/gateway/runs"
)

// RunList is the body of GET /v1/runs: the caller's account's runs, the
// dearest first.
type RunList struct {
	Object string         `json:"object"` // "list"
	Data   []runs.Summary `json:"data"`
}

// runs serves GET /v1/runs (?limit=, at most 1000) and GET
// /v1/runs/{id} for the key in Authorization (or x-api-key): only its
// own account's runs; another account's run is 404 like a missing one.
func (s *Server) runs(w http.ResponseWriter, r *http.Request) {
	p, now, fail := s.accountRead(w, r)
	if p == nil {
		return
	}
	rs, ok := s.cfg.Gateway.Store().(gw.RunStore)
	if !ok {
		fail(gw.Errorf(gw.CodeNotFound, "this gateway's store keeps no runs"))
		return
	}
	runID := strings.TrimPrefix(strings.TrimPrefix(r.URL.Path, "/v1/runs"), "/")
	if runID == "" {
		limit := 100
		if v := r.URL.Query().Get("limit"); v != "" {
			var err error
			if limit, err = strconv.Atoi(v); err != nil || limit < 1 || limit > 1000 {
				fail(gw.Errorf(gw.CodeInvalidRequest, "limit must be a whole number from 1 to 1000"))
				return
			}
		}
		list, err := rs.Runs(r.Context(), p.AccountID, limit)
		if err != nil {
			fail(&gw.Error{Code: gw.CodeInternal, Message: "could not read the runs", Err: err})
			return
		}
		out := RunList{Object: "list", Data: make([]runs.Summary, 0, len(list))}
		for i := range list {
			out.Data = append(out.Data, runs.Summarize(&list[i], now))
		}
		writeJSON(w, http.StatusOK, out)
		return
	}
	if !runs.ValidID(runID) {
		fail(gw.Errorf(gw.CodeInvalidRequest, "a run id is 1-128 characters of A-Z, a-z, 0-9, '.', '_', ':' and '-'"))
		return
	}
	rep, err := runs.Build(r.Context(), rs, p.AccountID, runID, now)
	if errors.Is(err, gw.ErrNotFound) {
		fail(gw.Errorf(gw.CodeNotFound, "no run %q in this account", runID))
		return
	}
	if err != nil {
		fail(&gw.Error{Code: gw.CodeInternal, Message: "could not read the run", Err: err})
		return
	}
	writeJSON(w, http.StatusOK, rep)
}
