package gw

import "strconv"

// Usage is one request's token usage, normalised across vendors into
// disjoint billing buckets. Vendors disagree on what their counts include
// (OpenAI's prompt_tokens includes cached tokens, Anthropic's input_tokens
// excludes cache reads and writes, Gemini's candidatesTokenCount excludes
// thoughts); the shape decoders resolve that so that here no bucket
// overlaps another except where a field says "subset of".
type Usage struct {
	// InputTokens are prompt tokens billed at the plain input price:
	// neither read from nor written to a prompt cache.
	InputTokens int64
	// CacheReadTokens are prompt tokens served from the vendor's cache.
	CacheReadTokens int64
	// CacheWrite5mTokens and CacheWrite1hTokens are prompt tokens written
	// to the cache with a 5-minute (or vendor-default) and a 1-hour TTL.
	CacheWrite5mTokens int64
	CacheWrite1hTokens int64
	// OutputTokens are all generated tokens, reasoning included.
	OutputTokens int64
	// ReasoningTokens is the part of OutputTokens spent on reasoning.
	ReasoningTokens int64
	// OptimizerTokens is the part of the prompt that the optimization
	// layer added. It is not billed: pricing takes it off the dearest
	// prompt bucket it may have landed in and leaves it out of the prompt
	// size that picks a long-context tier (package billing).
	OptimizerTokens int64

	// Hosted counts what the vendor bills beyond tokens, as its answer
	// reports it.
	Hosted Hosted `json:",omitzero"`

	// Reported is true when the vendor reported usage at all. A stream cut
	// before its usage arrived has Reported false.
	Reported bool
	// ReportedCost is the vendor's own cost figure in USD when it sends one
	// (OpenRouter's usage.cost); HasReportedCost says it was present.
	ReportedCost    Money
	HasReportedCost bool
	// ReportedCostUSD is that figure exactly as the vendor sent it (a
	// decimal), so that the charge on it is rounded once, not on the
	// already rounded ReportedCost; empty when unknown.
	// With HasReportedCost false it is CostUnreadable when the vendor
	// sent a cost the gateway cannot read as an amount (a string that is
	// no number, an object, an amount out of range): the request is
	// priced from the price list, never refused, and the record says so.
	ReportedCostUSD string

	// Clamped is true when the vendor's counts contradicted each other or
	// the request (cache reads above the prompt, output above the limit)
	// and were bounded: the record is flagged usage_clamped.
	Clamped bool
	// Malformed is true when a vendor usage report of this request could
	// not be read as counts (a float, a string, an exponent, a number
	// beyond int64, a negative count, an object with no count): the
	// request is billed from the gateway's own count of what it relayed,
	// as if no usage had been reported, on every route.
	Malformed bool
}

// Count is one token count as a vendor's JSON gives it. Any JSON value
// decodes without error; Valid says it was a non-negative integer literal
// that fits int64 (N is then its value, else 0), so that one malformed
// count marks the usage malformed instead of failing the whole answer.
type Count struct {
	N     int64
	Valid bool
}

// UnmarshalJSON reads any JSON value (see Count).
func (c *Count) UnmarshalJSON(b []byte) error {
	*c = Count{}
	n, err := strconv.ParseInt(string(b), 10, 64)
	if err == nil && n >= 0 {
		*c = Count{N: n, Valid: true}
	}
	return nil
}

// MarshalJSON writes the count (0 when it was not valid).
func (c Count) MarshalJSON() ([]byte, error) { return strconv.AppendInt(nil, c.N, 10), nil }

// PromptTokens returns all prompt tokens: uncached, cache reads and writes.
func (u Usage) PromptTokens() int64 {
	return u.InputTokens + u.CacheReadTokens + u.CacheWrite5mTokens + u.CacheWrite1hTokens
}

// CacheWriteTokens returns the cache writes of both TTLs.
func (u Usage) CacheWriteTokens() int64 { return u.CacheWrite5mTokens + u.CacheWrite1hTokens }

// TotalTokens returns prompt plus output tokens.
func (u Usage) TotalTokens() int64 { return u.PromptTokens() + u.OutputTokens }

// Merge takes in v, a later report of the same request's usage. Every
// vendor's stream usage is cumulative, and the stream decoders hand out
// the whole picture known at that point (Anthropic's message_start counts
// with message_delta's laid over them; Gemini's latest usageMetadata; the
// last OpenAI-dialect usage object), so a reported v replaces every
// vendor count in u, zeros included: a cache bucket that a later report
// sets to 0 is 0, never the earlier value. The counts are never added.
// A v that is not Reported (an estimate, not the vendor's word) only
// overlays its non-zero counts. OptimizerTokens is the gateway's own
// count, not the vendor's: v's replaces u's only when set.
func (u *Usage) Merge(v Usage) {
	malformed := u.Malformed || v.Malformed
	defer func() { u.Malformed = malformed }()
	if v.Reported {
		opt := u.OptimizerTokens
		cost, hasCost, exact := u.ReportedCost, u.HasReportedCost, u.ReportedCostUSD
		*u = v
		if v.OptimizerTokens == 0 {
			u.OptimizerTokens = opt
		}
		if !v.HasReportedCost && v.ReportedCostUSD == "" {
			u.ReportedCost, u.HasReportedCost, u.ReportedCostUSD = cost, hasCost, exact
		}
		return
	}
	set := func(dst *int64, src int64) {
		if src != 0 {
			*dst = src
		}
	}
	set(&u.InputTokens, v.InputTokens)
	set(&u.CacheReadTokens, v.CacheReadTokens)
	set(&u.CacheWrite5mTokens, v.CacheWrite5mTokens)
	set(&u.CacheWrite1hTokens, v.CacheWrite1hTokens)
	set(&u.OutputTokens, v.OutputTokens)
	set(&u.ReasoningTokens, v.ReasoningTokens)
	set(&u.OptimizerTokens, v.OptimizerTokens)
	if v.HasReportedCost || v.ReportedCostUSD != "" {
		u.ReportedCost, u.HasReportedCost, u.ReportedCostUSD = v.ReportedCost, v.HasReportedCost, v.ReportedCostUSD
	}
}

// CostUnreadable is Usage.ReportedCostUSD of a vendor cost figure that
// could not be read as an amount (HasReportedCost false).
const CostUnreadable = "unreadable"

// CostUnreadable reports whether the vendor sent a cost figure the
// gateway could not read (see Usage.ReportedCostUSD).
func (u Usage) CostUnreadable() bool {
	return !u.HasReportedCost && u.ReportedCostUSD == CostUnreadable
}

// Hosted is what a vendor bills beyond tokens for one request, read from
// its answer: the mode that served it and the hosted-tool calls it made.
// The zero value is a plain request at the standard tier.
type Hosted struct {
	// ServiceTier is the tier the vendor says served the request when it
	// is priced apart from the standard one ("priority", "flex",
	// "batch"; see NonStandardTier); "" for the standard tier or when
	// the answer does not say.
	ServiceTier string
	// Fast is true when Anthropic served the request in fast mode
	// (usage.speed "fast").
	Fast bool
	// WebSearches and WebFetches are hosted web-search and fetch calls
	// (Anthropic's usage.server_tool_use counts, OpenAI's web_search_call
	// output items, one per Chat request with web_search_options).
	WebSearches, WebFetches int64
	// CodeContainers is the number of code-execution containers the
	// answer used; CodeSeconds their run time when the vendor reports it
	// (else 0: billed at the card's minimum per container).
	CodeContainers, CodeSeconds int64
	// GroundingQueries is the number of Google Search queries that
	// grounded a Gemini answer (at least 1 when it carried grounding
	// metadata).
	GroundingQueries int64
	// FileSearches is the number of hosted file-search calls.
	FileSearches int64
}

// Calls reports whether h has any hosted-tool call.
func (h Hosted) Calls() bool {
	return h.WebSearches > 0 || h.WebFetches > 0 || h.CodeContainers > 0 || h.CodeSeconds > 0 || h.GroundingQueries > 0 || h.FileSearches > 0
}

// Max returns, count by count, the larger of h and o; the tier and fast
// mode are h's unless h has none.
func (h Hosted) Max(o Hosted) Hosted {
	r := h
	if r.ServiceTier == "" {
		r.ServiceTier = o.ServiceTier
	}
	r.Fast = r.Fast || o.Fast
	r.WebSearches = max(r.WebSearches, o.WebSearches)
	r.WebFetches = max(r.WebFetches, o.WebFetches)
	r.CodeContainers = max(r.CodeContainers, o.CodeContainers)
	r.CodeSeconds = max(r.CodeSeconds, o.CodeSeconds)
	r.GroundingQueries = max(r.GroundingQueries, o.GroundingQueries)
	r.FileSearches = max(r.FileSearches, o.FileSearches)
	return r
}

// NonStandardTier returns a vendor's service-tier name when it is one
// priced apart from the standard tier ("priority", "flex", "batch"),
// lower-cased; "" for the standard tier under any of its names
// ("default", "standard", "auto", "on_demand", ...).
func NonStandardTier(s string) string {
	switch s {
	case "priority", "flex", "batch":
		return s
	case "Priority", "PRIORITY":
		return "priority"
	case "Flex", "FLEX":
		return "flex"
	case "Batch", "BATCH":
		return "batch"
	}
	return ""
}

// TierName is a vendor's service_tier member decoded straight into
// NonStandardTier's form: "" for the standard tier, a JSON null or
// anything that is not a string. It allocates nothing.
type TierName string

// UnmarshalJSON reads any JSON value (see TierName).
func (t *TierName) UnmarshalJSON(b []byte) error {
	switch string(b) {
	case `"priority"`, `"Priority"`, `"PRIORITY"`:
		*t = "priority"
	case `"flex"`, `"Flex"`, `"FLEX"`:
		*t = "flex"
	case `"batch"`, `"Batch"`, `"BATCH"`:
		*t = "batch"
	default:
		*t = ""
	}
	return nil
}
