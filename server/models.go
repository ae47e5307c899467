package server

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	gw "github.com/gwlabs/gateway"
	"github.com/gwlabs/gateway/catalog"
	"github.com/gwlabs/gateway/internal/id"
	"github.com/gwlabs/gateway/route"
)

// models serves GET /v1/models and GET /v1/models/{id} from the catalog,
// for the key in Authorization (or x-api-key, as Anthropic's SDKs send
// it): without a valid key 401; with one, only the models it may call
// (its allow list). In Anthropic's shape (paged with limit, after_id,
// before_id) when the request carries anthropic-version, as Anthropic's
// SDKs send, and in OpenAI's otherwise.
func (s *Server) models(w http.ResponseWriter, r *http.Request) {
	rid := id.New("req_", s.cfg.Now())
	w.Header().Set(HeaderRequestID, rid)
	anthropic := r.Header.Get("Anthropic-Version") != ""
	shape := plain
	if anthropic {
		shape = mShape
	}
	if s.cfg.Gateway == nil {
		writeError(w, shape, rid, gw.Errorf(gw.CodeInternal, "the model list needs the gateway's key check, which is not configured"))
		return
	}
	p, err := s.cfg.Gateway.Authenticate(r.Context(), keyHeader(r))
	if err != nil {
		writeError(w, shape, rid, gw.AsError(err))
		return
	}
	c := s.cfg.Catalog.For(p.Models)
	if mid, ok := strings.CutPrefix(r.URL.Path, "/v1/models/"); ok {
		m, found := c.Lookup(mid)
		switch {
		case !found:
			writeError(w, shape, rid, gw.Errorf(gw.CodeNotFound, "model %q is not available to this key on this gateway; GET /v1/models lists the models you can use", mid))
		case anthropic:
			writeJSON(w, http.StatusOK, catalog.ToAnthropic(m))
		default:
			writeJSON(w, http.StatusOK, m)
		}
		return
	}
	if !anthropic {
		writeJSON(w, http.StatusOK, c.OpenAI())
		return
	}
	q := r.URL.Query()
	limit := 20
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 1000 {
			writeError(w, shape, rid, gw.Errorf(gw.CodeInvalidRequest, "limit must be an integer from 1 to 1000"))
			return
		}
		limit = n
	}
	writeJSON(w, http.StatusOK, c.Anthropic(q.Get("after_id"), q.Get("before_id"), limit))
}

// maxSuggestions bounds the ids a refusal of an unprefixed model names.
const maxSuggestions = 3

// withSuggestion rewrites the refusal of a model without a known vendor
// prefix (route.PrefixError) to name the listed ids it most likely
// means, verbatim ("did you mean \"openai/gpt-4.1-mini\"?"), from the
// models the key may call. Other errors, and names close to no listed
// id, keep route's message.
func (s *Server) withSuggestion(err error, p *gw.Principal) error {
	var pe *route.PrefixError
	if err == nil || s.cfg.Catalog == nil || !errors.As(err, &pe) {
		return err
	}
	c := s.cfg.Catalog
	if p != nil {
		c = c.For(p.Models)
	}
	ids := c.Suggest(pe.Model, maxSuggestions)
	if len(ids) == 0 {
		return err
	}
	quoted := make([]string, len(ids))
	for i, id := range ids {
		quoted[i] = strconv.Quote(id)
	}
	e := *gw.AsError(err)
	e.Message = fmt.Sprintf("model %q has no vendor prefix; did you mean %s? (GET /v1/models lists the ids you can use)",
		pe.Model, strings.Join(quoted, " or "))
	return &e
}

// AdminOff is the error_code of the 404 under /admin/ on a gateway whose
// admin API is off (no admin token).
const AdminOff = "admin_api_off"
