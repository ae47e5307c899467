package server

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/gwlabs/gateway/admin"
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
	routed = append(routed, admin.Routes()...)
	slices.Sort(documented)
	slices.Sort(routed)
	if !slices.Equal(documented, routed) {
		t.Errorf("documented %v\nrouted     %v", documented, routed)
	}

	s := New(Config{Catalog: &catalog.Catalog{}})
	for _, e := range endpoints() {
		example := "openai/some-model"
		if strings.HasPrefix(e.path, "/v1/responses/") {
			example = "resp_abc"
		}
		path := strings.ReplaceAll(e.path, "{id}", example)
		w := httptest.NewRecorder()
		s.ServeHTTP(w, httptest.NewRequest(http.MethodPatch, path, nil))
		// A path with several methods (GET and DELETE) lists them all.
		if w.Code != http.StatusMethodNotAllowed || !slices.Contains(strings.Split(w.Header().Get("Allow"), ", "), e.method) {
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

// The admin API's routes answer (not the unknown-endpoint 404) once
// mounted, each behind the token.
func TestAdminRoutesMounted(t *testing.T) {
	h, err := admin.NewHandler(&admin.Local{}, strings.Repeat("t", admin.MinTokenLen), nil)
	if err != nil {
		t.Fatal(err)
	}
	s := New(Config{Admin: h})
	for i, route := range admin.Routes() {
		method, path, _ := strings.Cut(route, " ")
		path = strings.NewReplacer("{account}", "a", "{id}", "x").Replace(path)
		w := httptest.NewRecorder()
		r := httptest.NewRequest(method, path, nil)
		r.RemoteAddr = fmt.Sprintf("192.0.2.%d:1234", i+1) // one address each: no throttling here
		s.ServeHTTP(w, r)
		if w.Code != http.StatusUnauthorized {
			t.Errorf("%s %s without a token: %d, want 401", method, path, w.Code)
		}
	}
}
