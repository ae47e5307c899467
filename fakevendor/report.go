package fakevendor

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math/big"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"

	gw "github.com/gwlabs/gateway"
)

// The report endpoints: each vendor's admin API, served from the usage log
// (ledger.go) with the fake's prices. They need the admin key
// (AdminKey); an inference key gets 403, any other key 401.
//
//	openai      GET /openai/v1/organization/usage/completions   Bearer admin key
//	            GET /openai/v1/organization/costs
//	anthropic   GET /anthropic/v1/organizations/usage_report/messages   x-api-key admin key, anthropic-version
//	            GET /anthropic/v1/organizations/cost_report
//	openrouter  GET /openrouter/api/v1/generation?id=   Bearer admin key
//	            GET /openrouter/api/v1/key               Bearer (the calling key's own usage)
//	deepseek    GET /deepseek/user/balance               Bearer admin key
func (s *Server) serveReport(w http.ResponseWriter, r *http.Request, vendor, path string) bool {
	if r.Method != http.MethodGet {
		return false
	}
	var h func(w http.ResponseWriter, q url.Values, caller string)
	switch vendor + " " + path {
	case "openai /v1/organization/usage/completions":
		h = s.openaiUsage
	case "openai /v1/organization/costs":
		h = s.openaiCosts
	case "anthropic /v1/organizations/usage_report/messages":
		h = s.anthropicUsage
	case "anthropic /v1/organizations/cost_report":
		h = s.anthropicCosts
	case "openrouter /api/v1/generation":
		h = s.openrouterGeneration
	case "openrouter /api/v1/key":
		h = s.openrouterKey
	case "deepseek /user/balance":
		h = s.deepseekBalance
	default:
		return false
	}
	key := r.Header.Get("X-Api-Key")
	if vendor != "anthropic" {
		key, _ = strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		key = strings.TrimSpace(key)
	}
	switch {
	case vendor == "openrouter" && path == "/api/v1/key" && (key == APIKey(vendor) || key == AdminKey(vendor)):
	case key == AdminKey(vendor):
	case key == APIKey(vendor):
		writeVendorError(w, newVendorError(nil, vendor, http.StatusForbidden, "this endpoint needs an admin key; inference keys are not allowed", 0))
		return true
	default:
		writeVendorError(w, authError(vendor, key == ""))
		return true
	}
	if vendor == "anthropic" && r.Header.Get("Anthropic-Version") == "" {
		writeVendorError(w, newVendorError(nil, vendor, 400, "anthropic-version: header is required", 0))
		return true
	}
	h(w, r.URL.Query(), key)
	return true
}

func writeVendorError(w http.ResponseWriter, e *vendorError) {
	for k, v := range e.header {
		w.Header()[k] = v
	}
	w.WriteHeader(e.status)
	_, _ = w.Write(e.body)
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

func badQuery(w http.ResponseWriter, vendor, msg string) {
	writeVendorError(w, newVendorError(nil, vendor, http.StatusBadRequest, msg, 0))
}

// reportRange reads a report's time range and bucket width: start is
// required; end defaults to now (rounded up to the width).
func reportRange(startS, endS, widthS string, parse func(string) (time.Time, error)) (start, end time.Time, width time.Duration, err error) {
	switch widthS {
	case "", "1d":
		width = 24 * time.Hour
	case "1h":
		width = time.Hour
	default:
		return start, end, 0, fmt.Errorf("bucket_width must be 1d or 1h, not %q", widthS)
	}
	if startS == "" {
		return start, end, 0, fmt.Errorf("a start time is required")
	}
	if start, err = parse(startS); err != nil {
		return start, end, 0, err
	}
	start = start.UTC().Truncate(width)
	end = time.Now().UTC().Add(width).Truncate(width)
	if endS != "" {
		if end, err = parse(endS); err != nil {
			return start, end, 0, err
		}
		end = end.UTC()
	}
	if !end.After(start) {
		return start, end, 0, fmt.Errorf("the end must be after the start")
	}
	if end.Sub(start)/width > 1000 {
		return start, end, 0, fmt.Errorf("too many buckets")
	}
	return start, end, width, nil
}

func unixTime(s string) (time.Time, error) {
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return time.Time{}, fmt.Errorf("want unix seconds, got %q", s)
	}
	return time.Unix(n, 0), nil
}

func rfcTime(s string) (time.Time, error) {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("want an RFC 3339 time, got %q", s)
	}
	return t, nil
}

// pageOf cuts buckets into one page from the opaque token page: at most
// limit buckets and (size > 0) size results. It returns the page's
// buckets, each with its slice of results, and the next token ("" at the
// end).
func pageOf[T any](bs []bucket[T], page string, limit, size int) (out []bucket[T], next string, err error) {
	// A position is (bucket, line within it).
	bi, li := 0, 0
	if page != "" {
		raw, derr := base64.RawURLEncoding.DecodeString(strings.TrimPrefix(page, "page_"))
		if _, serr := fmt.Sscanf(string(raw), "%d.%d", &bi, &li); derr != nil || serr != nil || bi < 0 || li < 0 || bi > len(bs) {
			return nil, "", fmt.Errorf("invalid page token %q", page)
		}
	}
	n := 0
	for bi < len(bs) && len(out) < limit {
		b := bs[bi]
		if li > len(b.lines) {
			return nil, "", fmt.Errorf("invalid page token %q", page)
		}
		part := bucket[T]{start: b.start, end: b.end}
		for li < len(b.lines) && (size <= 0 || n < size) {
			part.lines = append(part.lines, b.lines[li])
			li++
			n++
		}
		out = append(out, part)
		if li < len(b.lines) {
			break // the page is full inside this bucket
		}
		bi, li = bi+1, 0
	}
	if bi < len(bs) {
		next = "page_" + base64.RawURLEncoding.EncodeToString([]byte(fmt.Sprintf("%d.%d", bi, li)))
	}
	return out, next, nil
}

func limitOf(q url.Values, def, max int) (int, error) {
	s := q.Get("limit")
	if s == "" {
		return def, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 || n > max {
		return 0, fmt.Errorf("limit must be between 1 and %d", max)
	}
	return n, nil
}

// usdDecimal writes x (1e-6 micro-cents) as exact USD: x / 1e14.
func usdDecimal(x *big.Int) string { return fixed(x, 14) }

// centsDecimal writes x (1e-6 micro-cents) as exact cents: x / 1e12.
func centsDecimal(x *big.Int) string { return fixed(x, 12) }

// fixed writes x / 10^scale with trailing zeros trimmed (x >= 0).
func fixed(x *big.Int, scale int) string {
	s := x.String()
	for len(s) <= scale {
		s = "0" + s
	}
	s = s[:len(s)-scale] + "." + s[len(s)-scale:]
	s = strings.TrimRight(s, "0")
	return strings.TrimSuffix(s, ".")
}

// moneyUnits is m in 1e-6 micro-cents.
func moneyUnits(m gw.Money) *big.Int {
	return new(big.Int).Mul(big.NewInt(int64(m)), big.NewInt(1_000_000))
}

func nullable(s string) any {
	if s == "" {
		return nil
	}
	return s
}

func groupBy(q url.Values, name string) (model, key, description bool) {
	for _, g := range append(q[name], strings.Split(q.Get(strings.TrimSuffix(name, "[]")), ",")...) {
		switch strings.TrimSpace(g) {
		case "model":
			model = true
		case "api_key_id":
			key = true
		case "description", "line_item":
			description = true
		}
	}
	return
}

// openaiUsage serves GET /v1/organization/usage/completions.
func (s *Server) openaiUsage(w http.ResponseWriter, q url.Values, _ string) {
	start, end, width, err := reportRange(q.Get("start_time"), q.Get("end_time"), q.Get("bucket_width"), unixTime)
	if err != nil {
		badQuery(w, "openai", err.Error())
		return
	}
	def, max := 7, 31
	if width == time.Hour {
		def, max = 24, 168
	}
	limit, err := limitOf(q, def, max)
	if err != nil {
		badQuery(w, "openai", err.Error())
		return
	}
	byModel, byKey, _ := groupBy(q, "group_by")
	bs := s.ledger.buckets("openai", start, end, width, byModel, byKey, false)
	page, next, err := pageOf(bs, q.Get("page"), limit, s.ledger.page())
	if err != nil {
		badQuery(w, "openai", err.Error())
		return
	}
	data := []any{}
	for _, b := range page {
		results := []any{}
		for _, ln := range b.lines {
			t := ln.tokens
			res := map[string]any{
				"object":              "organization.usage.completions.result",
				"input_tokens":        t[clsInput] + t[clsCacheRead] + t[clsCache5m] + t[clsCache1h],
				"input_cached_tokens": t[clsCacheRead],
				"output_tokens":       t[clsOutput],
				"input_audio_tokens":  0, "output_audio_tokens": 0,
				"num_model_requests": ln.requests,
				"project_id":         nil, "user_id": nil, "batch": nil,
				"api_key_id": nullable(ln.key), "model": nullable(ln.model),
			}
			if cw := t[clsCache5m] + t[clsCache1h]; cw > 0 {
				// Cache writes (GPT-5.6 and later) are inside
				// input_tokens and also counted apart.
				res["input_cache_write_tokens"] = cw
			}
			results = append(results, res)
		}
		data = append(data, map[string]any{"object": "bucket", "start_time": b.start.Unix(), "end_time": b.end.Unix(), "results": results})
	}
	writeJSON(w, map[string]any{"object": "page", "data": data, "has_more": next != "", "next_page": nullable(next)})
}

// openaiCosts serves GET /v1/organization/costs (daily buckets only).
func (s *Server) openaiCosts(w http.ResponseWriter, q url.Values, _ string) {
	if bw := q.Get("bucket_width"); bw != "" && bw != "1d" {
		badQuery(w, "openai", "bucket_width must be 1d")
		return
	}
	start, end, width, err := reportRange(q.Get("start_time"), q.Get("end_time"), "1d", unixTime)
	if err != nil {
		badQuery(w, "openai", err.Error())
		return
	}
	limit, err := limitOf(q, 7, 180)
	if err != nil {
		badQuery(w, "openai", err.Error())
		return
	}
	_, _, byItem := groupBy(q, "group_by")
	costs := costBuckets(s.ledger.buckets("openai", start, end, width, true, false, true), byItem)
	page, next, err := pageOf(costs, q.Get("page"), limit, s.ledger.page())
	if err != nil {
		badQuery(w, "openai", err.Error())
		return
	}
	data := []any{}
	for _, b := range page {
		results := []any{}
		for _, ln := range b.lines {
			item := any(nil)
			if byItem {
				item = openaiItem(ln)
			}
			results = append(results, map[string]any{
				"object":     "organization.costs.result",
				"amount":     map[string]any{"value": json.Number(usdDecimal(ln.amount)), "currency": "usd"},
				"line_item":  item,
				"project_id": nil,
			})
		}
		data = append(data, map[string]any{"object": "bucket", "start_time": b.start.Unix(), "end_time": b.end.Unix(), "results": results})
	}
	writeJSON(w, map[string]any{"object": "page", "data": data, "has_more": next != "", "next_page": nullable(next)})
}

// costLine is one cost line of a report bucket.
type costLine struct {
	model  string // "" for a line not tied to a model
	class  string // the token class ("input", ...) or the surcharge's name
	tokens bool   // a token class (false: a surcharge)
	amount *big.Int
}

var classNames = [nClasses]string{"input", "cache_read", "cache_write_5m", "cache_write_1h", "output"}

// costLines turns usage lines into cost lines: one per model and token
// class (and surcharge) when grouped by item, else one total line.
func costLines(lines []*line, byItem bool) []costLine {
	var out []costLine
	total := new(big.Int)
	for _, ln := range lines {
		for c := 0; c < nClasses; c++ {
			if ln.tokens[c] == 0 {
				continue
			}
			total.Add(total, ln.cost[c])
			out = append(out, costLine{model: ln.model, class: classNames[c], tokens: true, amount: new(big.Int).Set(ln.cost[c])})
		}
		names := make([]string, 0, len(ln.charges))
		for n := range ln.charges {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			u := moneyUnits(ln.charges[n])
			total.Add(total, u)
			out = append(out, costLine{model: ln.model, class: n, amount: u})
		}
	}
	if !byItem {
		if len(lines) == 0 {
			return nil
		}
		return []costLine{{amount: total}}
	}
	return out
}

func costBuckets(bs []bucket[*line], byItem bool) []bucket[costLine] {
	out := make([]bucket[costLine], len(bs))
	for i, b := range bs {
		out[i] = bucket[costLine]{start: b.start, end: b.end, lines: costLines(b.lines, byItem)}
	}
	return out
}

// openaiItem is OpenAI's line_item for a cost line ("gpt-4.1, input").
func openaiItem(cl costLine) string {
	if cl.model == "" {
		return cl.class
	}
	name := map[string]string{"input": "input", "cache_read": "cached input", "cache_write_5m": "cache write", "cache_write_1h": "cache write", "output": "output"}[cl.class]
	if name == "" {
		name = cl.class
	}
	return cl.model + ", " + name
}

// anthropicUsage serves GET /v1/organizations/usage_report/messages.
func (s *Server) anthropicUsage(w http.ResponseWriter, q url.Values, _ string) {
	start, end, width, err := reportRange(q.Get("starting_at"), q.Get("ending_at"), q.Get("bucket_width"), rfcTime)
	if err != nil {
		badQuery(w, "anthropic", err.Error())
		return
	}
	def, max := 7, 31
	if width == time.Hour {
		def, max = 24, 168
	}
	limit, err := limitOf(q, def, max)
	if err != nil {
		badQuery(w, "anthropic", err.Error())
		return
	}
	byModel, byKey, _ := groupBy(q, "group_by[]")
	bs := s.ledger.buckets("anthropic", start, end, width, byModel, byKey, false)
	page, next, err := pageOf(bs, q.Get("page"), limit, s.ledger.page())
	if err != nil {
		badQuery(w, "anthropic", err.Error())
		return
	}
	data := []any{}
	for _, b := range page {
		results := []any{}
		for _, ln := range b.lines {
			t := ln.tokens
			results = append(results, map[string]any{
				"uncached_input_tokens":   t[clsInput],
				"cache_read_input_tokens": t[clsCacheRead],
				"cache_creation": map[string]any{
					"ephemeral_5m_input_tokens": t[clsCache5m],
					"ephemeral_1h_input_tokens": t[clsCache1h],
				},
				"output_tokens":   t[clsOutput],
				"server_tool_use": map[string]any{"web_search_requests": 0},
				"api_key_id":      nullable(ln.key), "workspace_id": nil,
				"model": nullable(ln.model), "service_tier": "standard", "context_window": "0-200k",
			})
		}
		data = append(data, map[string]any{"starting_at": b.start.Format(time.RFC3339), "ending_at": b.end.Format(time.RFC3339), "results": results})
	}
	writeJSON(w, map[string]any{"data": data, "has_more": next != "", "next_page": nullable(next)})
}

// anthropicTokenType is the cost report's token_type of a class.
var anthropicTokenType = map[string]string{
	"input": "uncached_input_tokens", "cache_read": "cache_read_input_tokens",
	"cache_write_5m": "cache_creation.ephemeral_5m_input_tokens",
	"cache_write_1h": "cache_creation.ephemeral_1h_input_tokens", "output": "output_tokens",
}

// anthropicCosts serves GET /v1/organizations/cost_report: amounts are
// decimal strings in cents.
func (s *Server) anthropicCosts(w http.ResponseWriter, q url.Values, _ string) {
	if bw := q.Get("bucket_width"); bw != "" && bw != "1d" {
		badQuery(w, "anthropic", "bucket_width must be 1d")
		return
	}
	start, end, width, err := reportRange(q.Get("starting_at"), q.Get("ending_at"), "1d", rfcTime)
	if err != nil {
		badQuery(w, "anthropic", err.Error())
		return
	}
	limit, err := limitOf(q, 7, 31)
	if err != nil {
		badQuery(w, "anthropic", err.Error())
		return
	}
	_, _, byDesc := groupBy(q, "group_by[]")
	costs := costBuckets(s.ledger.buckets("anthropic", start, end, width, true, false, true), byDesc)
	page, next, err := pageOf(costs, q.Get("page"), limit, s.ledger.page())
	if err != nil {
		badQuery(w, "anthropic", err.Error())
		return
	}
	data := []any{}
	for _, b := range page {
		results := []any{}
		for _, cl := range b.lines {
			res := map[string]any{
				"currency": "USD", "amount": centsDecimal(cl.amount), "workspace_id": nil,
				"description": nil, "cost_type": nil, "context_window": nil, "model": nil,
				"service_tier": nil, "token_type": nil,
			}
			if byDesc {
				res["model"] = nullable(cl.model)
				if cl.tokens {
					res["cost_type"], res["token_type"] = "tokens", anthropicTokenType[cl.class]
					res["description"] = cl.model + " Usage - " + cl.class
					res["service_tier"], res["context_window"] = "standard", "0-200k"
				} else {
					res["cost_type"], res["description"] = cl.class, cl.model+" "+cl.class
				}
			}
			results = append(results, res)
		}
		data = append(data, map[string]any{"starting_at": b.start.Format(time.RFC3339), "ending_at": b.end.Format(time.RFC3339), "results": results})
	}
	writeJSON(w, map[string]any{"data": data, "has_more": next != "", "next_page": nullable(next)})
}

// openrouterGeneration serves GET /api/v1/generation?id=: 404 until the
// record is ready (SetGenerationLag) or for an unknown id.
func (s *Server) openrouterGeneration(w http.ResponseWriter, q url.Values, _ string) {
	id := q.Get("id")
	if id == "" {
		badQuery(w, "openrouter", "id is required")
		return
	}
	u, ok := s.ledger.generation(id)
	if !ok {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusNotFound)
		_ = json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{"message": "Generation " + id + " not found", "code": 404}})
		return
	}
	total := json.Number(usdDecimal(moneyUnits(u.Cost)))
	writeJSON(w, map[string]any{"data": map[string]any{
		"id": u.GenerationID, "model": u.Model, "created_at": u.Time.UTC().Format(time.RFC3339Nano),
		"total_cost": total, "usage": total, "upstream_inference_cost": nil, "is_byok": false,
		"provider_name": openrouterProvider(u.Model),
		"tokens_prompt": u.prompt(), "tokens_completion": u.Output,
		"native_tokens_prompt": u.prompt(), "native_tokens_completion": u.Output,
		"native_tokens_cached": u.CacheRead, "native_tokens_reasoning": 0,
		"streamed": false, "cancelled": false, "finish_reason": "stop",
	}})
}

// openrouterKey serves GET /api/v1/key: the calling key's own usage in
// USD (OpenRouter's reported costs) and no limit.
func (s *Server) openrouterKey(w http.ResponseWriter, _ url.Values, key string) {
	usage := json.Number(usdDecimal(moneyUnits(s.ledger.keyUsage("openrouter", key))))
	writeJSON(w, map[string]any{"data": map[string]any{
		"label": "fake-openrouter", "usage": usage, "limit": nil, "limit_remaining": nil,
		"is_free_tier": false, "is_provisioning_key": key == AdminKey("openrouter"),
	}})
}

// deepseekBalance serves GET /user/balance: the starting balance less
// the cost of every logged DeepSeek request, in USD with two decimals
// (rounded half up), as DeepSeek shows it.
func (s *Server) deepseekBalance(w http.ResponseWriter, _ url.Values, _ string) {
	left := s.ledger.startBalance("deepseek") - s.ledger.spent("deepseek")
	neg := left < 0
	if neg {
		left = -left
	}
	cents := (left + gw.Cent/2) / gw.Cent
	txt := fmt.Sprintf("%d.%02d", cents/100, cents%100)
	if neg {
		txt = "-" + txt
	}
	writeJSON(w, map[string]any{"is_available": !neg, "balance_infos": []any{map[string]any{
		"currency": "USD", "total_balance": txt, "granted_balance": "0.00", "topped_up_balance": txt,
	}}})
}
