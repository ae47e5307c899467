package server

import (
	_ "embed"
	"net/http"
)

// openAPI is the OpenAPI 3.1 document of every endpoint the server
// answers (the dashboard's pages aside), served at GET /openapi.json. A
// test checks it against endpoints().
//
//go:embed openapi.json
var openAPI []byte

// endpoint is one method and path the server answers; {id} stands for a
// path parameter.
type endpoint struct{ method, path string }

// endpoints lists what ServeHTTP routes, for the document's check.
func endpoints() []endpoint {
	return []endpoint{
		{http.MethodPost, "/v1/messages"},
		{http.MethodPost, "/v1/messages/count_tokens"},
		{http.MethodPost, "/v1/chat/completions"},
		{http.MethodPost, "/v1/responses"},
		{http.MethodPost, "/v1/responses/input_tokens"},
		{http.MethodGet, "/v1/responses/{id}"},
		{http.MethodDelete, "/v1/responses/{id}"},
		{http.MethodGet, "/v1/responses/{id}/input_items"},
		{http.MethodGet, "/v1/models"},
		{http.MethodGet, "/v1/models/{id}"},
		{http.MethodGet, "/v1/balance"},
		{http.MethodGet, "/healthz"},
		{http.MethodGet, "/readyz"},
		{http.MethodGet, "/openapi.json"},
	}
}

func serveOpenAPI(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "public, max-age=300")
	_, _ = w.Write(openAPI)
}
