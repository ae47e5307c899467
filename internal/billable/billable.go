// Package billable finds, in a vendor request body, the features a vendor
// bills beyond prompt and output tokens: service tiers other than the
// standard one, Anthropic's fast mode, hosted tools (web search and
// fetch, code execution, MCP connectors, file search, image generation,
// computer use) and Gemini's grounding. A feature the rate card prices
// for the model is billed from the vendor's answer and held for in
// advance (Plan); one it cannot price is refused (400 naming the field)
// unless the operator allows that unit, rather than let the operator pay
// for it unbilled.
//
// It reads the body as the vendor will (the exact bytes sent), never the
// caller's form, so that a feature cannot slip through a mapping.
package billable

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	gw "github.com/gwlabs/gateway"
	"github.com/gwlabs/gateway/internal/rawjson"
)

// Units, as named in refusals and in the operator's allow list.
const (
	PriorityTier  = "service_tier_priority"
	FlexTier      = "service_tier_flex"
	BatchTier     = "service_tier_batch"
	FastMode      = "fast_mode"
	WebSearch     = "web_search"
	WebFetch      = "web_fetch"
	CodeExecution = "code_execution"
	MCP           = "mcp"
	FileSearch    = "file_search"
	ImageGen      = "image_generation"
	ComputerUse   = "computer_use"
	Grounding     = "grounding"
)

// Units lists every unit Find reports, for documentation and checks.
// The names are the rate card's unit names.
var Units = []string{PriorityTier, FlexTier, BatchTier, FastMode, WebSearch, WebFetch, CodeExecution, MCP, FileSearch, ImageGen, ComputerUse, Grounding}

// Use is one billable feature found in a body: the unit, and the field
// that asks for it as the body spells it (`tools[1].type
// "web_search_20250305"`).
type Use struct {
	Unit  string
	Field string
}

// Find returns the billable features a body of the given shape asks for,
// in body order. A body it cannot read is reported as no use (the vendor
// call fails on it anyway).
func Find(shape gw.Shape, body []byte) []Use {
	obj, err := rawjson.NewObject(body)
	if err != nil {
		return nil
	}
	return FindIn(shape, obj)
}

// FindIn is Find for a body whose members are known.
func FindIn(shape gw.Shape, obj *rawjson.Object) []Use {
	body, ms := obj.Bytes(), obj.Members()
	var out []Use
	for _, m := range ms {
		v := body[m.ValStart:m.ValEnd]
		switch m.Key {
		case "service_tier":
			switch str(v) {
			case "priority":
				out = append(out, Use{PriorityTier, fmt.Sprintf("service_tier %q", "priority")})
			case "flex":
				out = append(out, Use{FlexTier, fmt.Sprintf("service_tier %q", "flex")})
			}
		case "speed":
			if shape == gw.ShapeM && str(v) == "fast" {
				out = append(out, Use{FastMode, `speed "fast"`})
			}
		case "web_search_options":
			if shape == gw.ShapeC && string(v) != "null" {
				out = append(out, Use{WebSearch, "web_search_options"})
			}
		case "mcp_servers":
			if shape == gw.ShapeM && string(v) != "null" && string(v) != "[]" {
				out = append(out, Use{MCP, "mcp_servers"})
			}
		case "tools":
			out = append(out, tools(shape, v)...)
		}
	}
	return out
}

// tools reads a tools array.
func tools(shape gw.Shape, v []byte) []Use {
	els, err := rawjson.Elements(v)
	if err != nil {
		return nil
	}
	var out []Use
	for i, el := range els {
		t := v[el.Start:el.End]
		if shape == gw.ShapeG {
			ms, err := rawjson.Members(t)
			if err != nil {
				continue
			}
			for _, m := range ms {
				k := strings.ToLower(strings.ReplaceAll(m.Key, "_", ""))
				var unit string
				switch k {
				case "googlesearch", "googlesearchretrieval", "urlcontext", "googlemaps", "enterprisewebsearch":
					unit = Grounding
				case "codeexecution":
					unit = CodeExecution
				case "computeruse":
					unit = ComputerUse
				}
				if unit != "" {
					out = append(out, Use{unit, fmt.Sprintf("tools[%d].%s", i, m.Key)})
				}
			}
			continue
		}
		typ := str(rawjson.Get(t, "type"))
		if u := toolUnit(shape, typ); u != "" {
			out = append(out, Use{u, fmt.Sprintf("tools[%d].type %q", i, typ)})
		}
	}
	return out
}

// toolUnit returns the unit of a tool type, "" for a tool the caller runs
// (functions, custom tools, Anthropic's client tools).
func toolUnit(shape gw.Shape, typ string) string {
	switch {
	case strings.HasPrefix(typ, "web_search"):
		return WebSearch
	case strings.HasPrefix(typ, "web_fetch"):
		return WebFetch
	case strings.HasPrefix(typ, "code_execution"), typ == "code_interpreter":
		return CodeExecution
	case typ == "mcp", strings.HasPrefix(typ, "mcp_toolset"):
		return MCP
	case typ == "file_search":
		return FileSearch
	case typ == "image_generation":
		return ImageGen
	case shape != gw.ShapeM && strings.HasPrefix(typ, "computer_use"):
		// Anthropic's computer tool runs on the caller's side (tokens
		// only); OpenAI's computer_use_preview is billed as a tool.
		return ComputerUse
	}
	return ""
}

// str returns a JSON string's value, "" for anything else. A string
// without escapes (every tool type) is sliced out rather than decoded.
func str(v []byte) string {
	if len(v) < 2 || v[0] != '"' {
		return ""
	}
	if bytes.IndexByte(v, '\\') < 0 {
		return string(v[1 : len(v)-1])
	}
	var s string
	if json.Unmarshal(v, &s) != nil {
		return ""
	}
	return s
}

// Refusal is the caller's 400 for the first use that the rate card
// cannot price for the model (priced says it can; nil: none) and the
// operator has not allowed, or nil.
func Refusal(uses []Use, priced func(unit string) bool, allowed map[string]bool, vendor, model string) error {
	for _, u := range uses {
		if allowed[u.Unit] || (priced != nil && priced(u.Unit)) {
			continue
		}
		return &gw.Error{Code: gw.CodeInvalidRequest, NoRetry: true, Message: fmt.Sprintf(
			"the request uses %s (%s), which %s/%s bills beyond tokens and the gateway's rate card cannot price for that model; remove it, or ask the operator to price or allow %s",
			u.Unit, u.Field, vendor, model, u.Unit)}
	}
	return nil
}

// DefaultCalls is the number of calls a hold covers for a hosted tool
// whose request sets no limit (Anthropic's max_uses, the Responses
// max_tool_calls): enough for an ordinary agent turn. An answer that
// made more is still billed in full when the balance covers it; the
// hold only reserves.
const DefaultCalls = 20

// Plan is what a request's billable features mean for its hold and its
// bill, read once from the exact vendor body.
type Plan struct {
	// Hold is the most the request may use beyond tokens: the tier and
	// fast mode it asks for and each hosted tool's call limit.
	Hold gw.Hosted
	// SearchPerRequest: a Chat request with web_search_options, which
	// the vendor bills as one search per request (the answer does not
	// count them).
	SearchPerRequest bool
	// FreeCode: Anthropic runs code execution free of charge when the
	// request carries web_search_20260209 or web_fetch_20260209
	// (dynamic filtering).
	FreeCode bool
	// Bound is the most calls of each hosted tool the request allows
	// when it sets a limit (max_uses, max_tool_calls; 0: no limit): a
	// reported count above it is a vendor error, billed at the limit.
	Bound gw.Hosted
}

// PlanFor reads the limits of the uses Find found in body. It parses the
// body only when there are uses.
func PlanFor(shape gw.Shape, body []byte, uses []Use) Plan {
	if len(uses) == 0 {
		return Plan{}
	}
	obj, err := rawjson.NewObject(body)
	if err != nil {
		obj = rawjson.ObjectFrom(nil, nil) // every member missing, as Get gives
	}
	return PlanIn(shape, obj, uses)
}

// PlanIn is PlanFor for a body whose members are known.
func PlanIn(shape gw.Shape, obj *rawjson.Object, uses []Use) Plan {
	var p Plan
	if len(uses) == 0 {
		return p
	}
	limit := int64(0)
	if shape == gw.ShapeR {
		if n, ok := count(obj.Get("max_tool_calls")); ok {
			limit = n
		}
	}
	var toolEls []rawjson.Span
	toolsV := obj.Get("tools")
	if len(toolsV) > 0 {
		toolEls, _ = rawjson.Elements(toolsV)
	}
	// calls is a tool's limit: its own max_uses (Anthropic), else the
	// request's max_tool_calls, else DefaultCalls.
	var bounded bool
	calls := func(u Use) int64 {
		bounded = true
		if i, ok := toolIndex(u.Field); ok && i < len(toolEls) {
			if n, ok := count(rawjson.Get(toolsV[toolEls[i].Start:toolEls[i].End], "max_uses")); ok {
				return n
			}
		}
		if limit > 0 {
			return limit
		}
		bounded = false
		return DefaultCalls
	}
	// bound adds a limit to the per-tool bounds; one unbounded use of a
	// unit leaves it unbounded (-1).
	bound := func(dst *int64, n int64) {
		switch {
		case *dst < 0:
		case !bounded:
			*dst = -1
		default:
			*dst += n
		}
	}
	for _, u := range uses {
		switch u.Unit {
		case PriorityTier:
			p.Hold.ServiceTier = "priority"
		case FlexTier:
			p.Hold.ServiceTier = "flex"
		case FastMode:
			p.Hold.Fast = true
		case WebSearch:
			if u.Field == "web_search_options" {
				p.SearchPerRequest = true
				p.Hold.WebSearches++
				continue
			}
			n := calls(u)
			p.Hold.WebSearches += n
			bound(&p.Bound.WebSearches, n)
			if strings.Contains(u.Field, `"web_search_20260209"`) {
				p.FreeCode = true
			}
		case WebFetch:
			n := calls(u)
			p.Hold.WebFetches += n
			bound(&p.Bound.WebFetches, n)
			if strings.Contains(u.Field, `"web_fetch_20260209"`) {
				p.FreeCode = true
			}
		case CodeExecution:
			// One container per request on Anthropic, held for an hour
			// (its price is by the hour); per container (call) on the
			// Responses API.
			if shape == gw.ShapeR {
				p.Hold.CodeContainers += calls(u)
			} else {
				p.Hold.CodeContainers = max(p.Hold.CodeContainers, 1)
				p.Hold.CodeSeconds = 3600
			}
		case Grounding:
			p.Hold.GroundingQueries += calls(u)
		case FileSearch:
			n := calls(u)
			p.Hold.FileSearches += n
			bound(&p.Bound.FileSearches, n)
		}
	}
	return p
}

// Bill applies the request's side of the vendor's billing to what its
// answer reported: a Chat web_search_options request is at least one
// search; code execution beside Anthropic's dynamic-filtering web tools
// costs nothing.
func (p Plan) Bill(h gw.Hosted) gw.Hosted {
	clamp := func(n *int64, bound int64) {
		if bound > 0 && *n > bound {
			*n = bound
		}
	}
	clamp(&h.WebSearches, p.Bound.WebSearches)
	clamp(&h.WebFetches, p.Bound.WebFetches)
	clamp(&h.FileSearches, p.Bound.FileSearches)
	if p.SearchPerRequest {
		h.WebSearches = max(h.WebSearches, 1)
	}
	if p.FreeCode {
		h.CodeContainers, h.CodeSeconds = 0, 0
	}
	return h
}

// toolIndex reads i from a use's field "tools[i]...".
func toolIndex(field string) (int, bool) {
	rest, ok := strings.CutPrefix(field, "tools[")
	if !ok {
		return 0, false
	}
	end := strings.IndexByte(rest, ']')
	if end <= 0 {
		return 0, false
	}
	n, err := strconv.Atoi(rest[:end])
	return n, err == nil
}

// count reads a positive JSON integer of at most 1e6.
func count(v []byte) (int64, bool) {
	n, err := strconv.ParseInt(string(v), 10, 64)
	if err != nil || n <= 0 {
		return 0, false
	}
	return min(n, 1_000_000), true
}

// externalMarks are the members by which a body points at input the
// vendor fetches itself (documents and images by URL, uploaded files):
// their size is not in the body.
var externalMarks = [][]byte{
	[]byte(`"type":"url"`), []byte(`"type": "url"`), // M document/image source
	[]byte(`"file_id"`),                       // M, C, R uploaded files
	[]byte(`"file_url"`),                      // R input_file
	[]byte(`"fileUri"`), []byte(`"file_uri"`), // G fileData
	[]byte(`"url":"http`), []byte(`"url": "http`), // C image_url
	[]byte(`"image_url":"http`), []byte(`"image_url": "http`), // R input_image
}

// ExternalInput reports whether body points at input the vendor fetches
// and bills as prompt although the body does not hold it (a document or
// image by URL, an uploaded file): its hold must cover the model's whole
// context window. The members are matched as written (a JSON key, never
// text inside a string, where the quotes would be escaped).
func ExternalInput(body []byte) bool {
	// One search per anchor instead of one per mark: every mark holds an
	// anchor at a known offset, so a mark's match is an anchor's match
	// with the mark around it.
	for _, a := range externalAnchors {
		for from := 0; ; {
			j := bytes.Index(body[from:], a.anchor)
			if j < 0 {
				break
			}
			j += from
			for _, m := range a.marks {
				if p := j - m.off; p >= 0 && bytes.HasPrefix(body[p:], m.mark) {
					return true
				}
			}
			from = j + 1
		}
	}
	return false
}

type anchoredMark struct {
	mark []byte
	off  int // of the anchor in mark
}

// externalAnchors groups externalMarks by the anchor each holds (the
// first of `"file` and `url"` it contains).
var externalAnchors = func() []struct {
	anchor []byte
	marks  []anchoredMark
} {
	out := []struct {
		anchor []byte
		marks  []anchoredMark
	}{{anchor: []byte(`"file`)}, {anchor: []byte(`url"`)}}
	for _, m := range externalMarks {
		placed := false
		for i := range out {
			if off := bytes.Index(m, out[i].anchor); off >= 0 {
				out[i].marks = append(out[i].marks, anchoredMark{m, off})
				placed = true
				break
			}
		}
		if !placed {
			panic("billable: external mark " + string(m) + " holds no anchor")
		}
	}
	return out
}()

// StripTools returns body without the entries of its top-level tools
// array whose unit keep refuses, and the types of the entries it
// took out (nil, and body itself, when it took none). It is for a route
// whose callers always send a hosted tool they can do without (Codex
// declares web_search on every turn): the tool is left out of the vendor
// request and named to the caller instead of refused. Gemini's tools
// (one object holding several) are left as they are.
func StripTools(shape gw.Shape, body []byte, keep func(unit string) bool) ([]byte, []string) {
	if shape == gw.ShapeG {
		return body, nil
	}
	obj, err := rawjson.NewObject(body)
	if err != nil {
		return body, nil
	}
	e := obj.Edit()
	stripped := StripToolsEdit(shape, e, keep)
	if len(stripped) == 0 {
		return body, nil
	}
	return e.Bytes(), stripped
}

// StripToolsEdit is StripTools on an edit of the body: the tools array
// without the entries taken out is set in e.
func StripToolsEdit(shape gw.Shape, e *rawjson.Editor, keep func(unit string) bool) []string {
	if shape == gw.ShapeG {
		return nil
	}
	v := e.Value("tools")
	if len(v) == 0 {
		return nil
	}
	els, err := rawjson.Elements(v)
	if err != nil {
		return nil
	}
	var kept [][]byte
	var stripped []string
	for _, el := range els {
		t := v[el.Start:el.End]
		typ := str(rawjson.Get(t, "type"))
		if u := toolUnit(shape, typ); u != "" && !keep(u) {
			stripped = append(stripped, typ)
			continue
		}
		kept = append(kept, t)
	}
	if len(stripped) == 0 {
		return nil
	}
	arr := append([]byte{'['}, bytes.Join(kept, []byte{','})...)
	arr = append(arr, ']')
	e.Set("tools", arr)
	return stripped
}
