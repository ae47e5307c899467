package fakevendor

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"
)

// Vendors lists the nine vendor names the fake serves, in the product's slot
// order. Each is also the first path segment of that vendor's routes.
func Vendors() []string {
	return []string{"openai", "anthropic", "google", "together", "fireworks", "groq", "mistral", "deepseek", "openrouter"}
}

// basePaths holds each vendor's base path under its "/<vendor>" prefix, in
// the form the vendor's official SDK uses as a base URL.
func basePath(vendor string) (string, bool) {
	switch vendor {
	case "openai", "together", "mistral":
		return "/v1", true
	case "fireworks":
		return "/inference/v1", true
	case "groq":
		return "/openai/v1", true
	case "openrouter":
		return "/api/v1", true
	case "deepseek", "anthropic", "google":
		return "", true
	}
	return "", false
}

// BaseURLAt returns the base URL of vendor for a fake served at root (for
// example an httptest server's URL), in the form the gateway configures it:
// the version segment included for the OpenAI-compatible vendors
// (root+"/openai/v1", root+"/groq/openai/v1", ...), without it for DeepSeek
// (root+"/deepseek"), and host-like for Anthropic and Google
// (root+"/anthropic", root+"/google"). It returns "" for an unknown vendor.
func BaseURLAt(root, vendor string) string {
	p, ok := basePath(vendor)
	if !ok {
		return ""
	}
	return strings.TrimRight(root, "/") + "/" + vendor + p
}

// APIKey returns the API key the fake expects from vendor: "fake-<vendor>-key".
func APIKey(vendor string) string { return "fake-" + vendor + "-key" }

// Received is one request as the fake saw it.
type Received struct {
	// Vendor is the vendor the request was addressed to ("" if the path
	// named none).
	Vendor string
	// Method is the HTTP method.
	Method string
	// Path is the request path with the "/<vendor>" prefix removed, so it
	// reads like the real vendor's path ("/v1/chat/completions",
	// "/openai/v1/chat/completions" for Groq, "/v1/messages",
	// "/v1beta/models/gemini-x:generateContent").
	Path string
	// RawQuery is the URL query string without "?".
	RawQuery string
	// Header is a copy of the request headers.
	Header http.Header
	// Body is the request body as received.
	Body []byte
	// Status is the HTTP status the fake answered (0 while still running
	// or when the connection was broken before headers).
	Status int
	// Cancelled reports that the client went away (or the server closed)
	// before the response was complete. A response the fake broke on
	// purpose (the break directive) is not Cancelled.
	Cancelled bool
	// Done reports that handling finished (complete, cancelled or broken).
	Done bool
	// Time is when the request arrived.
	Time time.Time
}

// Server is a set of fake vendors served from one handler, path-prefixed by
// vendor name. It records every request. Create one with Start (its own
// loopback listener) or NewHandler (mount it yourself, for example with
// httptest.NewServer, and use BaseURLAt with that server's URL). All methods
// are safe for concurrent use.
type Server struct {
	hs   *http.Server
	root string

	done chan struct{} // closed by Close; wakes waiting handlers

	threads   threads   // Anthropic message threads (threads.go)
	responses respStore // OpenAI Responses kept with store (responses.go)

	// mu protects everything below.
	mu        sync.Mutex
	closed    bool
	handlers  sync.WaitGroup // Add only under mu while !closed
	seq       uint64         // id of the last recorded request
	reqs      []entry        // recorded requests, in arrival order
	fails     map[string]int // fail-first counters by vendor + directive text
	changed   chan struct{}  // closed and replaced whenever reqs changes
	prefix    *prefixCache   // nil: prefix caching off (prefixcache.go)
	replies   bool           // the reply model is on (replies.go)
	directive string         // the text that models a shorter reply
	outages   map[string]int // models-list status by vendor (outage.go)

	ledger ledger // the usage log the reports are served from (ledger.go)
}

// NewHandler returns a Server that is not listening: use it as an
// http.Handler (for example with httptest.NewServer) and build base URLs
// with BaseURLAt and that server's URL; its own URL is "" and BaseURL
// returns bare paths. Close it to release calls still waiting.
func NewHandler() *Server {
	return &Server{
		done:    make(chan struct{}),
		fails:   make(map[string]int),
		changed: make(chan struct{}),
	}
}

// Start returns a Server listening on 127.0.0.1 on a free port, serving all
// nine vendors. Close it when done.
func Start() (*Server, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("listen: %w", err)
	}
	s := NewHandler()
	s.root = "http://" + ln.Addr().String()
	s.hs = &http.Server{Handler: s, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = s.hs.Serve(ln) }()
	return s, nil
}

// URL returns the root URL of a started Server ("http://127.0.0.1:PORT"),
// or "" for one made by NewHandler.
func (s *Server) URL() string { return s.root }

// BaseURL returns the base URL the gateway should use for vendor; see
// BaseURLAt for the forms.
func (s *Server) BaseURL(vendor string) string { return BaseURLAt(s.root, vendor) }

// APIKey returns the key the fake expects from vendor ("fake-<vendor>-key").
func (s *Server) APIKey(vendor string) string { return APIKey(vendor) }

// Env returns the gateway configuration that points every vendor at this
// Server: GATEWAY_<VENDOR>_BASE_URL and GATEWAY_<VENDOR>_API_KEY for all
// nine vendors (VENDOR in upper case).
func (s *Server) Env() map[string]string {
	env := make(map[string]string, 2*len(Vendors()))
	for _, v := range Vendors() {
		up := strings.ToUpper(v)
		env["GATEWAY_"+up+"_BASE_URL"] = s.BaseURL(v)
		env["GATEWAY_"+up+"_API_KEY"] = APIKey(v)
	}
	return env
}

// Requests returns a copy of everything received so far, in arrival order.
func (s *Server) Requests() []Received {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Received, len(s.reqs))
	for i, e := range s.reqs {
		out[i] = cloneReceived(e.rec)
	}
	return out
}

// Reset forgets all recorded requests and fail-first counters.
func (s *Server) Reset() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.reqs = nil
	s.fails = make(map[string]int)
	s.notifyLocked()
}

// WaitCancelled blocks until at least n recorded requests are Cancelled and
// Done, or ctx ends (then it returns ctx's error).
func (s *Server) WaitCancelled(ctx context.Context, n int) error {
	return s.waitFor(ctx, func(rs []Received) bool {
		c := 0
		for _, r := range rs {
			if r.Cancelled && r.Done {
				c++
			}
		}
		return c >= n
	})
}

// WaitDone blocks until at least n requests have been received and handled
// to the end (complete, cancelled or broken), or ctx ends.
func (s *Server) WaitDone(ctx context.Context, n int) error {
	return s.waitFor(ctx, func(rs []Received) bool {
		c := 0
		for _, r := range rs {
			if r.Done {
				c++
			}
		}
		return c >= n
	})
}

func (s *Server) waitFor(ctx context.Context, ok func([]Received) bool) error {
	for {
		s.mu.Lock()
		rs := make([]Received, len(s.reqs))
		for i, e := range s.reqs {
			rs[i] = e.rec
		}
		met := ok(rs)
		ch := s.changed
		s.mu.Unlock()
		if met {
			return nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return fmt.Errorf("wait for fake vendor: %w", ctx.Err())
		}
	}
}

// Close stops a started Server's listener, aborts requests in flight (they
// are recorded as Cancelled) and waits for their handlers to return. On a
// Server from NewHandler it only aborts and waits for handlers.
func (s *Server) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	close(s.done)
	s.mu.Unlock()
	var err error
	if s.hs != nil {
		if cerr := s.hs.Close(); cerr != nil && !errors.Is(cerr, net.ErrClosed) {
			err = fmt.Errorf("close fake vendor server: %w", cerr)
		}
	}
	s.handlers.Wait()
	return err
}

func (s *Server) notifyLocked() {
	close(s.changed)
	s.changed = make(chan struct{})
}

func cloneReceived(r Received) Received {
	r.Header = r.Header.Clone()
	r.Body = append([]byte(nil), r.Body...)
	return r
}

// entry is one recorded request and its sequence number.
type entry struct {
	seq uint64
	rec Received
}

// begin records a new request and returns its sequence number, or 0 when
// the server is closed.
func (s *Server) begin(rec Received) uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return 0
	}
	s.handlers.Add(1)
	s.seq++
	s.reqs = append(s.reqs, entry{seq: s.seq, rec: rec})
	s.notifyLocked()
	return s.seq
}

// end marks request seq handled. After a Reset it may be gone; then only
// the handler count changes.
func (s *Server) end(seq uint64, status int, cancelled bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	defer s.handlers.Done()
	for i := len(s.reqs) - 1; i >= 0; i-- {
		if s.reqs[i].seq == seq {
			s.reqs[i].rec.Status = status
			s.reqs[i].rec.Cancelled = cancelled
			s.reqs[i].rec.Done = true
			s.notifyLocked()
			return
		}
	}
}

// failFirst reports whether this call must fail under fail-first=n: the
// first n calls with the same key fail.
func (s *Server) failFirst(key string, n int) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.fails[key]++
	return s.fails[key] <= n
}

// maxBody bounds what the fake reads from a request.
const maxBody = 64 << 20

// ServeHTTP serves all vendors: the first path segment names the vendor.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	vendor, rest := splitVendor(r.URL.Path)
	if vendor == "openrouter" && rest == "/api/v1/models" && r.Method == http.MethodGet {
		// The price list, not a call: not recorded.
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, OpenRouterModels)
		return
	}
	if s.serveReport(w, r, vendor, rest) {
		// A report read with the admin key (report.go): not recorded.
		return
	}
	if r.Method == http.MethodGet && strings.HasSuffix(rest, "/models") {
		// A models list (the gateway's own key check): the key is
		// checked, the list is empty, and it is not recorded.
		ex := &exchange{srv: s, w: w, r: r, vendor: vendor, path: rest}
		if st := s.outage(vendor); st != 0 {
			ex.writePlain(st, "fake vendor: outage")
			return
		}
		if verr := ex.checkAuth(); verr != nil {
			ex.writeError(verr)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"object":"list","data":[]}`)
		return
	}
	body, rerr := io.ReadAll(io.LimitReader(r.Body, maxBody))
	rec := Received{
		Vendor:   vendor,
		Method:   r.Method,
		Path:     rest,
		RawQuery: r.URL.RawQuery,
		Header:   r.Header.Clone(),
		Body:     body,
		Time:     time.Now(),
	}
	seq := s.begin(rec)
	if seq == 0 {
		http.Error(w, "fake vendor server closed", http.StatusServiceUnavailable)
		return
	}
	ex := &exchange{srv: s, w: w, r: r, vendor: vendor, path: rest, body: body}
	defer func() {
		s.end(seq, ex.status, !ex.complete && !ex.broken)
	}()
	if rerr != nil {
		return // client gone while sending the body
	}
	ex.serve()
}

// splitVendor splits "/openai/v1/chat/completions" into "openai" and
// "/v1/chat/completions". An unknown first segment yields vendor "".
func splitVendor(p string) (string, string) {
	p = strings.TrimPrefix(p, "/")
	v, rest, _ := strings.Cut(p, "/")
	if _, ok := basePath(v); !ok {
		return "", "/" + p
	}
	return v, "/" + rest
}

// OpenRouterModels is the fake OpenRouter's models endpoint answer (GET
// /openrouter/api/v1/models), in OpenRouter's format: prices in USD per
// token as decimal strings, matching the usage.cost the fake reports ($1
// per million prompt and $2 per million completion tokens), and the
// router pseudo-model at -1 as OpenRouter lists it. Any other model is
// unlisted.
const OpenRouterModels = `{"data":[
{"id":"meta-llama/llama-3.3-70b-instruct","name":"Meta: Llama 3.3 70B Instruct","context_length":131072,"pricing":{"prompt":"0.000001","completion":"0.000002","request":"0","image":"0","web_search":"0","internal_reasoning":"0"},"top_provider":{"context_length":131072,"max_completion_tokens":16384,"is_moderated":false}},
{"id":"openai/gpt-4o-mini","name":"OpenAI: GPT-4o-mini","context_length":128000,"pricing":{"prompt":"0.000001","completion":"0.000002","request":"0","input_cache_read":"0.0000005"},"top_provider":{"context_length":128000,"max_completion_tokens":16384,"is_moderated":true}},
{"id":"anthropic/claude-sonnet-4.5","name":"Anthropic: Claude Sonnet 4.5","context_length":1000000,"pricing":{"prompt":"0.000001","completion":"0.000002","request":"0","input_cache_read":"0.0000001","input_cache_write":"0.00000125"},"top_provider":{"context_length":1000000,"max_completion_tokens":64000,"is_moderated":true}},
{"id":"openrouter/auto","name":"Auto Router","context_length":2000000,"pricing":{"prompt":"-1","completion":"-1"},"top_provider":{"context_length":null,"max_completion_tokens":null,"is_moderated":false}}
]}`
