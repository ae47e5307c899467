package server

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/netip"
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
		// A Gemini model keeps its slashes in the path.
		path := strings.NewReplacer("{id}", example, "{model}", "openai/some-model").Replace(e.path)
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
	if w.Code != http.StatusOK || w.Body.Len() != len(openAPI)+len("http://example.com")-1 || !json.Valid(w.Body.Bytes()) {
		t.Errorf("GET /openapi.json: %d, %d bytes (the document with its server URL)", w.Code, w.Body.Len())
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

// GET /openapi.json names the server it was asked on: the Host, https
// over TLS or from a trusted proxy's X-Forwarded-Proto (an untrusted
// peer's is ignored); a Host that is not a plain host leaves "/". Every
// operation names its error answers, all in the one Error schema, and the
// document carries a license.
func TestOpenAPIServerURLAndErrors(t *testing.T) {
	s := New(Config{Catalog: &catalog.Catalog{}, TrustedProxies: []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")}})
	url := func(host, peer, proto string) string {
		r := httptest.NewRequest(http.MethodGet, "/openapi.json", nil)
		r.Host, r.RemoteAddr = host, peer+":4444"
		if proto != "" {
			r.Header.Set("X-Forwarded-Proto", proto)
		}
		w := httptest.NewRecorder()
		s.ServeHTTP(w, r)
		var doc struct {
			Servers []struct {
				URL string `json:"url"`
			} `json:"servers"`
		}
		if err := json.Unmarshal(w.Body.Bytes(), &doc); err != nil || len(doc.Servers) != 1 {
			t.Fatalf("host %q: %v %s", host, err, w.Body.Bytes()[:200])
		}
		return doc.Servers[0].URL
	}
	for _, c := range []struct{ host, peer, proto, want string }{
		{"gw.example.net", "203.0.113.5", "", "http://gw.example.net"},
		{"gw.example.net:8443", "10.1.2.3", "https", "https://gw.example.net:8443"},
		{"gw.example.net", "203.0.113.5", "https", "http://gw.example.net"}, // not a trusted proxy
		{"[::1]:8080", "127.0.0.1", "", "http://[::1]:8080"},
		{`evil"}],"x":{"a`, "203.0.113.5", "", "/"},
	} {
		if got := url(c.host, c.peer, c.proto); got != c.want {
			t.Errorf("Host %q from %s (X-Forwarded-Proto %q): %q, want %q", c.host, c.peer, c.proto, got, c.want)
		}
	}

	var doc struct {
		Info struct {
			License struct {
				Identifier string `json:"identifier"`
			} `json:"license"`
		} `json:"info"`
		Paths      map[string]map[string]json.RawMessage `json:"paths"`
		Components struct {
			Responses map[string]struct {
				Content map[string]struct {
					Schema struct {
						Ref string `json:"$ref"`
					} `json:"schema"`
				} `json:"content"`
			} `json:"responses"`
		} `json:"components"`
	}
	if err := json.Unmarshal(openAPI, &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Info.License.Identifier != "Apache-2.0" {
		t.Errorf("license %q", doc.Info.License.Identifier)
	}
	// The Gemini API's error answers are Google's envelope, named Google*.
	for name, r := range doc.Components.Responses {
		want := "#/components/schemas/Error"
		if strings.HasPrefix(name, "Google") {
			want = "#/components/schemas/GoogleError"
		}
		if r.Content["application/json"].Schema.Ref != want {
			t.Errorf("response %s is not the %s schema", name, want)
		}
	}
	for path, ops := range doc.Paths {
		for method, raw := range ops {
			var op struct {
				Responses map[string]struct {
					Ref string `json:"$ref"`
				} `json:"responses"`
				Security []map[string][]string `json:"security"`
			}
			if err := json.Unmarshal(raw, &op); err != nil {
				t.Fatal(err)
			}
			// A path the server routes to the Gemini API documents
			// Google's errors and Google's key; no other path does.
			concrete := strings.NewReplacer("{id}", "x", "{model}", "anthropic/claude-sonnet-5-5", "{account}", "a").Replace(path)
			g := geminiPath(httptest.NewRequest(strings.ToUpper(method), concrete, nil))
			for code, r := range op.Responses {
				if code >= "400" && strings.HasPrefix(r.Ref, "#/components/responses/Google") != g {
					t.Errorf("%s %s: %s is %q (a Gemini API path: %v)", method, path, code, r.Ref, g)
				}
			}
			if g && !slices.ContainsFunc(op.Security, func(s map[string][]string) bool { _, ok := s["googApiKey"]; return ok }) {
				t.Errorf("%s %s does not accept x-goog-api-key", method, path)
			}
			if _, ok := op.Responses["default"]; ok {
				t.Errorf("%s %s has a default response instead of its error statuses", method, path)
			}
			errs := 0
			for code := range op.Responses {
				if code >= "400" {
					errs++
				}
			}
			if errs == 0 && path != "/healthz" && path != "/openapi.json" {
				t.Errorf("%s %s names no error response", method, path)
			}
		}
	}
	// Without a key the model list is a 401 (internal/app tests it), as
	// documented.
	if !strings.Contains(string(doc.Paths["/v1/models"]["get"]), `"401"`) {
		t.Error("GET /v1/models documents no 401")
	}
}

// Issue 38 item 6: the document's info.version is the release's (before:
// "1"); without one it is the stored 0.0.0-devel.
func TestOpenAPIVersionIsTheRelease(t *testing.T) {
	for _, c := range []struct{ version, want string }{{"v1.4.0", "v1.4.0"}, {"", "0.0.0-devel"}, {`v1"x`, `v1"x`}} {
		s := New(Config{Catalog: &catalog.Catalog{}, Version: c.version})
		w := httptest.NewRecorder()
		s.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/openapi.json", nil))
		var doc struct {
			Info struct{ Version string }
		}
		if err := json.Unmarshal(w.Body.Bytes(), &doc); err != nil || doc.Info.Version != c.want {
			t.Errorf("Version %q: info.version %q, %v; want %q", c.version, doc.Info.Version, err, c.want)
		}
	}
}
