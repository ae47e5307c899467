package server

import (
	"bytes"
	_ "embed"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
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
		{http.MethodGet, "/v1beta/models"},
		{http.MethodGet, "/v1beta/models/{model}"},
		{http.MethodPost, "/v1beta/models/{model}:generateContent"},
		{http.MethodPost, "/v1beta/models/{model}:streamGenerateContent"},
		{http.MethodPost, "/v1beta/models/{model}:countTokens"},
		{http.MethodPost, "/v1/models/{model}:generateContent"},
		{http.MethodPost, "/v1/models/{model}:streamGenerateContent"},
		{http.MethodPost, "/v1/models/{model}:countTokens"},
		{http.MethodPost, "/v1/embeddings"},
		{http.MethodPost, "/v1beta/models/{model}:embedContent"},
		{http.MethodPost, "/v1beta/models/{model}:batchEmbedContents"},
		{http.MethodPost, "/v1/models/{model}:embedContent"},
		{http.MethodPost, "/v1/models/{model}:batchEmbedContents"},
		{http.MethodGet, "/v1/balance"},
		{http.MethodGet, "/v1/runs"},
		{http.MethodGet, "/v1/runs/{id}"},
		{http.MethodGet, "/healthz"},
		{http.MethodGet, "/readyz"},
		{http.MethodGet, "/openapi.json"},
	}
}

// serversURL is the document's servers entry as stored: "/", the host that
// served it. serveOpenAPI writes the absolute URL in its place.
var serversURL = []byte(`"servers": [
    {
      "url": "/",`)

// infoVersion is the document's info.version as stored; serveOpenAPI
// writes Config.Version, the release's, in its place.
var infoVersion = []byte(`"version": "0.0.0-devel",`)

// serveOpenAPI writes the document with its server URL taken from the
// request: the Host it was asked on, over https when the connection is
// TLS or, from a trusted proxy (GATEWAY_TRUSTED_PROXIES) only, when
// X-Forwarded-Proto says so. A Host that is not a plain host[:port]
// leaves the relative "/".
func (s *Server) serveOpenAPI(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Cache-Control", "public, max-age=300")
	h.Set("Vary", "Host, X-Forwarded-Proto")
	doc := openAPI
	if v := s.cfg.Version; v != "" {
		doc = bytes.Replace(doc, infoVersion, append(append([]byte(`"version": `), strconv.Quote(v)...), ','), 1)
	}
	if u := s.baseURL(r); u != "" {
		repl := bytes.Replace(serversURL, []byte(`"/"`), strconv.AppendQuote(nil, u), 1)
		doc = bytes.Replace(doc, serversURL, repl, 1)
	}
	_, _ = w.Write(doc)
}

// baseURL is the scheme and host the request reached the gateway at, or
// "" when the Host header is not a plain host name or address with an
// optional port.
func (s *Server) baseURL(r *http.Request) string {
	host := r.Host
	if host == "" || len(host) > 255 || strings.Trim(host, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-:[]") != "" {
		return ""
	}
	scheme := "http"
	if r.TLS != nil || s.fromTrustedProxy(r) && forwardedHTTPS(r) {
		scheme = "https"
	}
	return scheme + "://" + host
}

// fromTrustedProxy reports whether the peer is one of the trusted proxies.
func (s *Server) fromTrustedProxy(r *http.Request) bool {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	a, err := netip.ParseAddr(host)
	if err != nil {
		return false
	}
	for _, p := range s.cfg.TrustedProxies {
		if p.Contains(a.Unmap()) {
			return true
		}
	}
	return false
}

// forwardedHTTPS reports whether the nearest proxy's X-Forwarded-Proto
// (the last value) is https.
func forwardedHTTPS(r *http.Request) bool {
	v := r.Header.Values("X-Forwarded-Proto")
	if len(v) == 0 {
		return false
	}
	last := strings.Split(v[len(v)-1], ",")
	return strings.EqualFold(strings.TrimSpace(last[len(last)-1]), "https")
}
