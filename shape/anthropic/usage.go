package anthropic

import (
	"encoding/json"
	"fmt"

	"github.com/gwlabs/gateway"
	"github.com/gwlabs/gateway/internal/rawjson"
)

// wireUsage is an M usage object. Every count is a pointer so that a
// stream's message_delta, which may carry only some counts, replaces
// exactly the counts it carries.
type wireUsage struct {
	InputTokens              *gw.Count            `json:"input_tokens"`
	CacheCreationInputTokens *gw.Count            `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     *gw.Count            `json:"cache_read_input_tokens"`
	CacheCreation            *wireCacheCreation   `json:"cache_creation"`
	OutputTokens             *gw.Count            `json:"output_tokens"`
	OutputTokensDetails      *wireOutputTokensDet `json:"output_tokens_details"`
	// ServerToolUse counts the hosted tools' calls (billed per call);
	// ServiceTier and Speed say how the request was served (priced by
	// the answer's word, not the request's).
	ServerToolUse *wireServerToolUse `json:"server_tool_use"`
	ServiceTier   gw.TierName        `json:"service_tier"`
	Speed         speed              `json:"speed"`
}

// speed is usage.speed: fastSpeed for "fast", standardSpeed for any other
// value, 0 when absent (a message_delta keeps message_start's). It
// allocates nothing.
type speed int8

const (
	standardSpeed speed = iota + 1
	fastSpeed
)

func (s *speed) UnmarshalJSON(b []byte) error {
	*s = standardSpeed
	if string(b) == `"fast"` {
		*s = fastSpeed
	}
	return nil
}

type wireServerToolUse struct {
	WebSearchRequests *gw.Count `json:"web_search_requests"`
	WebFetchRequests  *gw.Count `json:"web_fetch_requests"`
}

type wireCacheCreation struct {
	Ephemeral5m *gw.Count `json:"ephemeral_5m_input_tokens"`
	Ephemeral1h *gw.Count `json:"ephemeral_1h_input_tokens"`
}

type wireOutputTokensDet struct {
	ThinkingTokens *gw.Count `json:"thinking_tokens"`
}

// DecodeUsage decodes an M usage object into disjoint billing buckets.
// Cache writes come from the cache_creation object (5-minute and 1-hour
// TTLs) when it is present, else from cache_creation_input_tokens, counted
// as 5-minute writes; when the legacy total exceeds the object's sum the
// remainder is counted as 5-minute writes, so no write goes unbilled.
// No count is ever negative.
// A missing or null object yields a zero Usage with Reported false.
// A malformed object is an *gw.Error with CodeUpstream.
func DecodeUsage(raw []byte) (gw.Usage, error) {
	var u gw.Usage
	if isNull(raw) {
		return u, nil
	}
	var w wireUsage
	if err := json.Unmarshal(raw, &w); err != nil {
		return u, upstreamErr("malformed usage", err)
	}
	applyUsage(&u, &w)
	return u, nil
}

// UsageFromBody returns the usage of a non-streaming M response body.
func UsageFromBody(body []byte) (gw.Usage, error) {
	var msg struct {
		Usage     *wireUsage      `json:"usage"`
		Container json.RawMessage `json:"container"`
	}
	// Only these members are decoded; the rest is validated, not decoded.
	ok, err := rawjson.DecodeMembers(body, rawjson.Field{Name: "usage", Into: &msg.Usage}, rawjson.Field{Name: "container", Into: &msg.Container})
	if !ok {
		err = json.Unmarshal(body, &msg)
	}
	if err != nil {
		return gw.Usage{}, upstreamErr("malformed response body", err)
	}
	var u gw.Usage
	if msg.Usage != nil {
		applyUsage(&u, msg.Usage)
	}
	if u.Reported && usedContainer(msg.Container) {
		u.Hosted.CodeContainers = 1
	}
	return u, nil
}

// applyUsage overlays the counts present in w onto u: a present count
// replaces the old one (stream usage is cumulative, never added), an
// absent one leaves it alone.
func applyUsage(u *gw.Usage, w *wireUsage) {
	if w.malformed() {
		// Billed from the gateway's own count, on every route.
		u.Malformed = true
		return
	}
	u.Reported = true
	set := func(dst *int64, src *gw.Count) {
		if src != nil {
			*dst = src.N
		}
	}
	set(&u.InputTokens, w.InputTokens)
	if t := w.ServerToolUse; t != nil {
		set(&u.Hosted.WebSearches, t.WebSearchRequests)
		set(&u.Hosted.WebFetches, t.WebFetchRequests)
	}
	if w.ServiceTier != "" {
		u.Hosted.ServiceTier = string(w.ServiceTier)
	}
	if w.Speed != 0 {
		u.Hosted.Fast = w.Speed == fastSpeed
	}
	set(&u.CacheReadTokens, w.CacheReadInputTokens)
	set(&u.OutputTokens, w.OutputTokens)
	if w.OutputTokensDetails != nil {
		set(&u.ReasoningTokens, w.OutputTokensDetails.ThinkingTokens)
	}
	switch {
	case w.CacheCreation != nil:
		var m5, h1 int64
		set(&m5, w.CacheCreation.Ephemeral5m)
		set(&h1, w.CacheCreation.Ephemeral1h)
		if w.CacheCreationInputTokens != nil && w.CacheCreationInputTokens.N > m5+h1 {
			m5 = w.CacheCreationInputTokens.N - h1
		}
		u.CacheWrite5mTokens, u.CacheWrite1hTokens = m5, h1
	case w.CacheCreationInputTokens != nil:
		// Only the total: message_delta never carries the TTL split, so
		// keep the 1-hour part that message_start reported while it still
		// fits in the new total.
		total := w.CacheCreationInputTokens.N
		if u.CacheWrite1hTokens > total {
			u.CacheWrite1hTokens = 0
		}
		u.CacheWrite5mTokens = total - u.CacheWrite1hTokens
	}
}

// malformed reports a usage object that cannot be read as counts: a
// count that is not a non-negative integer (a float, a string, an
// exponent, beyond int64, negative), or no count at all.
func (w *wireUsage) malformed() bool {
	bad := func(c *gw.Count) bool { return c != nil && !c.Valid }
	if w.InputTokens == nil && w.OutputTokens == nil && w.CacheReadInputTokens == nil && w.CacheCreationInputTokens == nil && w.CacheCreation == nil {
		return true
	}
	if bad(w.InputTokens) || bad(w.OutputTokens) || bad(w.CacheReadInputTokens) || bad(w.CacheCreationInputTokens) {
		return true
	}
	if c := w.CacheCreation; c != nil && (bad(c.Ephemeral5m) || bad(c.Ephemeral1h)) {
		return true
	}
	if t := w.ServerToolUse; t != nil && (bad(t.WebSearchRequests) || bad(t.WebFetchRequests)) {
		return true
	}
	return w.OutputTokensDetails != nil && bad(w.OutputTokensDetails.ThinkingTokens)
}

// usedContainer reports whether an answer's container member names a
// code-execution container (Anthropic bills its run time).
func usedContainer(raw json.RawMessage) bool {
	return len(raw) > 0 && !isNull(raw)
}

// encodedUsage is the M usage object of a message, in a stable field
// order; output_tokens_details only when thinking tokens were reported.
type encodedUsage struct {
	InputTokens              int64                `json:"input_tokens"`
	CacheCreationInputTokens int64                `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     int64                `json:"cache_read_input_tokens"`
	CacheCreation            encodedCacheCreation `json:"cache_creation"`
	OutputTokens             int64                `json:"output_tokens"`
	OutputTokensDetails      *encodedOutputDet    `json:"output_tokens_details,omitempty"`
}

type encodedOutputDet struct {
	ThinkingTokens int64 `json:"thinking_tokens"`
}

type encodedCacheCreation struct {
	Ephemeral5m int64 `json:"ephemeral_5m_input_tokens"`
	Ephemeral1h int64 `json:"ephemeral_1h_input_tokens"`
}

func toEncodedUsage(u gw.Usage) encodedUsage {
	var det *encodedOutputDet
	if u.ReasoningTokens > 0 {
		det = &encodedOutputDet{ThinkingTokens: u.ReasoningTokens}
	}
	return encodedUsage{
		OutputTokensDetails:      det,
		InputTokens:              u.InputTokens,
		CacheCreationInputTokens: u.CacheWriteTokens(),
		CacheReadInputTokens:     u.CacheReadTokens,
		CacheCreation:            encodedCacheCreation{Ephemeral5m: u.CacheWrite5mTokens, Ephemeral1h: u.CacheWrite1hTokens},
		OutputTokens:             u.OutputTokens,
	}
}

func isNull(raw []byte) bool {
	for _, c := range raw {
		switch c {
		case ' ', '\t', '\r', '\n':
			continue
		case 'n':
			return true
		}
		return false
	}
	return true
}

func upstreamErr(msg string, err error) *gw.Error {
	return &gw.Error{Code: gw.CodeUpstream, Message: "anthropic: " + msg, Err: err}
}

func invalidf(format string, args ...any) *gw.Error {
	return &gw.Error{Code: gw.CodeInvalidRequest, Message: fmt.Sprintf(format, args...)}
}
