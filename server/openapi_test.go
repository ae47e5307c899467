package server

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/gwlabs/gateway/catalog"
)

// The OpenAPI document lists exactly the endpoints the server routes, and
// each of them is routed: a request with another method gets 405 with the
// documented method in Allow, not the unknown-endpoint 404.
func TestOpenAPIMatchesRoutes(t *testing.T) {
	var doc struct {
		OpenAPI string                                `json:"openapi"`
		Paths   map[string]map[string]json.RawMessage `json:"paths"`
	}
	if err := json.Unmarshal(openAPI, &doc); err != nil {
		t.Fatalf("openapi.json: %v", err)
	}
	if doc.OpenAPI != "3.1.0" {
		t.Errorf("openapi %q, want 3.1.0", doc.OpenAPI)
	}
	var documented, routed []string
	for path, ops := range doc.Paths {
		for method := range ops {
			documented = append(documented, strings.ToUpper(method)+" "+path)
		}
	}
	for _, e := range endpoints() {
		routed = append(routed, e.method+" "+e.path)
	}
	slices.Sort(documented)
	slices.Sort(routed)
	if !slices.Equal(documented, routed) {
		t.Errorf("documented %v\nrouted     %v", documented, routed)
	}

	s := New(Config{Catalog: &catalog.Catalog{}})
	for _, e := range endpoints() {
		path := strings.ReplaceAll(e.path, "{id}", "openai/some-model")
		w := httptest.NewRecorder()
		s.ServeHTTP(w, httptest.NewRequest(http.MethodPatch, path, nil))
		if w.Code != http.StatusMethodNotAllowed || w.Header().Get("Allow") != e.method {
			t.Errorf("PATCH %s: %d Allow %q, want 405 Allow %s", path, w.Code, w.Header().Get("Allow"), e.method)
		}
	}
	w := httptest.NewRecorder()
	s.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/v1/nothing", nil))
	if w.Code != http.StatusNotFound {
		t.Errorf("unknown path: %d", w.Code)
	}
	w = httptest.NewRecorder()
	s.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/openapi.json", nil))
	if w.Code != http.StatusOK || w.Body.Len() != len(openAPI) {
		t.Errorf("GET /openapi.json: %d, %d bytes", w.Code, w.Body.Len())
	}
}
