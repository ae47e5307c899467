package responses

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"

	gw "github.com/gwlabs/gateway"
	"github.com/gwlabs/gateway/internal/rawjson"
	"github.com/gwlabs/gateway/sse"
)

// wireUsage is a vendor's Responses usage object. Counts are gw.Count
// pointers: "absent" and "0" differ, and a count that is not a
// non-negative integer marks the usage malformed instead of failing the
// answer.
type wireUsage struct {
	InputTokens        *gw.Count `json:"input_tokens"`
	InputTokensDetails *struct {
		CachedTokens *gw.Count `json:"cached_tokens"`
	} `json:"input_tokens_details"`
	OutputTokens        *gw.Count `json:"output_tokens"`
	OutputTokensDetails *struct {
		ReasoningTokens *gw.Count `json:"reasoning_tokens"`
	} `json:"output_tokens_details"`
	TotalTokens *gw.Count `json:"total_tokens"`
}

// malformed reports a usage object that cannot be read as counts, by the
// rule of every route: a count that is not a non-negative integer, or no
// input and no output count at all ("usage":{}, total_tokens alone).
func (w *wireUsage) malformed() bool {
	bad := func(c *gw.Count) bool { return c != nil && !c.Valid }
	if w.InputTokens == nil && w.OutputTokens == nil {
		return true
	}
	if bad(w.InputTokens) || bad(w.OutputTokens) || bad(w.TotalTokens) {
		return true
	}
	if d := w.InputTokensDetails; d != nil && bad(d.CachedTokens) {
		return true
	}
	return w.OutputTokensDetails != nil && bad(w.OutputTokensDetails.ReasoningTokens)
}

func val(c *gw.Count) int64 {
	if c == nil {
		return 0
	}
	return c.N
}

// normalize maps a Responses usage object to the disjoint buckets:
// input_tokens includes cached_tokens (cache reads); output_tokens
// includes reasoning_tokens. Contradicting counts are bounded (Clamped).
// A malformed object is not the vendor's word: Malformed, billed from the
// gateway's own count.
func (w *wireUsage) normalize() gw.Usage {
	if w.malformed() {
		return gw.Usage{Malformed: true}
	}
	u := gw.Usage{Reported: true, OutputTokens: val(w.OutputTokens)}
	in := val(w.InputTokens)
	if d := w.InputTokensDetails; d != nil && val(d.CachedTokens) > 0 {
		u.CacheReadTokens = val(d.CachedTokens)
		if u.CacheReadTokens > in {
			u.CacheReadTokens, u.Clamped = in, true
		}
	}
	u.InputTokens = in - u.CacheReadTokens
	if d := w.OutputTokensDetails; d != nil && val(d.ReasoningTokens) > 0 {
		u.ReasoningTokens = val(d.ReasoningTokens)
		if u.ReasoningTokens > u.OutputTokens {
			u.ReasoningTokens, u.Clamped = u.OutputTokens, true
		}
	}
	return u
}

// billedItem is what billing reads of a response's output item: hosted
// tool calls are billed per call (web and file search) or per container
// (code interpreter).
type billedItem struct {
	Type        itemType `json:"type"`
	ContainerID string   `json:"container_id"`
}

// itemType is an output item's type as billing sees it: only the hosted
// tool calls matter. It allocates nothing.
type itemType int8

const (
	otherItem itemType = iota
	webSearchItem
	fileSearchItem
	codeInterpreterItem
)

func (t *itemType) UnmarshalJSON(b []byte) error {
	switch string(b) {
	case `"web_search_call"`:
		*t = webSearchItem
	case `"file_search_call"`:
		*t = fileSearchItem
	case `"code_interpreter_call"`:
		*t = codeInterpreterItem
	default:
		*t = otherItem
	}
	return nil
}

// hosted counts the hosted-tool calls among a response's output items
// and takes the tier that served it.
func hosted(tier gw.TierName, items []billedItem) gw.Hosted {
	h := gw.Hosted{ServiceTier: string(tier)}
	var containers []string
	for _, it := range items {
		switch it.Type {
		case webSearchItem:
			h.WebSearches++
		case fileSearchItem:
			h.FileSearches++
		case codeInterpreterItem:
			if !slices.Contains(containers, it.ContainerID) {
				containers = append(containers, it.ContainerID)
			}
		}
	}
	h.CodeContainers = int64(len(containers))
	return h
}

// UsageFromBody reads the usage of a vendor's Responses answer (a
// response object): its token counts, the tier that served it and its
// hosted-tool calls. Reported is false when it has none.
func UsageFromBody(body []byte) (gw.Usage, error) {
	var v struct {
		Usage       *wireUsage   `json:"usage"`
		ServiceTier gw.TierName  `json:"service_tier"`
		Output      []billedItem `json:"output"`
	}
	// Only these members are decoded; the rest is validated, not decoded.
	ok, err := rawjson.DecodeMembers(body, rawjson.Field{Name: "usage", Into: &v.Usage}, rawjson.Field{Name: "service_tier", Into: &v.ServiceTier},
		rawjson.Field{Name: "output", Into: &v.Output})
	if !ok {
		err = json.Unmarshal(body, &v)
	}
	if err != nil {
		return gw.Usage{}, fmt.Errorf("responses: usage: %w", err)
	}
	if v.Usage == nil {
		return gw.Usage{}, nil
	}
	u := v.Usage.normalize()
	if u.Reported {
		u.Hosted = hosted(v.ServiceTier, v.Output)
	}
	return u, nil
}

// Meter reads the usage of a Responses stream relayed unchanged: the
// usage of response.completed, response.incomplete or response.failed
// (the terminal events), the end of the stream (completed or incomplete),
// and a failure (response.failed or an error event). It decodes only
// events whose type says they may carry one of these.
type Meter struct {
	id     string
	seq    int64 // the last sequence_number seen, -1 before any
	seqSet bool
	vendor string
	usage  gw.Usage
	done   bool
	err    *gw.Error
}

// NewMeter returns a Meter for one stream of vendor.
func NewMeter(vendor string) *Meter { return &Meter{vendor: vendor} }

var (
	keySeq        = []byte(`"sequence_number":`)
	keyCreated    = []byte(`"response.created"`)
	keyCompleted  = []byte(`"response.completed"`)
	keyIncomplete = []byte(`"response.incomplete"`)
	keyFailed     = []byte(`"response.failed"`)
	keyError      = []byte(`"error"`)
)

// observe looks at one relayed event.
func (m *Meter) observe(ev *sse.Event) {
	d := ev.Data
	if len(d) == 0 {
		return
	}
	if i := bytes.Index(d, keySeq); i >= 0 {
		n, ok := int64(0), false
		for _, c := range d[i+len(keySeq):] {
			if c < '0' || c > '9' || n > 1<<40 {
				break
			}
			n, ok = n*10+int64(c-'0'), true
		}
		if ok && (!m.seqSet || n > m.seq) {
			m.seq, m.seqSet = n, true
		}
	}
	if m.id == "" && (ev.Type == "response.created" || bytes.Contains(d, keyCreated)) {
		var v struct {
			Response *struct {
				ID string `json:"id"`
			} `json:"response"`
		}
		if json.Unmarshal(d, &v) == nil && v.Response != nil {
			m.id = v.Response.ID
		}
		return
	}
	terminal := ev.Type == "response.completed" || ev.Type == "response.incomplete" || ev.Type == "response.failed" ||
		bytes.Contains(d, keyCompleted) || bytes.Contains(d, keyIncomplete) || bytes.Contains(d, keyFailed)
	isErr := ev.Type == "error" || bytes.Contains(d, keyError)
	if !terminal && !isErr {
		return
	}
	var v struct {
		Type     string `json:"type"`
		Code     any    `json:"code"`
		Message  string `json:"message"`
		Response *struct {
			ID          string       `json:"id"`
			Usage       *wireUsage   `json:"usage"`
			ServiceTier gw.TierName  `json:"service_tier"`
			Output      []billedItem `json:"output"`
			Error       *struct {
				Code    any    `json:"code"`
				Message string `json:"message"`
			} `json:"error"`
		} `json:"response"`
	}
	if json.Unmarshal(d, &v) != nil {
		return
	}
	if v.Response != nil && m.id == "" {
		m.id = v.Response.ID
	}
	if v.Response != nil && v.Response.Usage != nil {
		u := v.Response.Usage.normalize()
		if u.Reported {
			u.Hosted = hosted(v.Response.ServiceTier, v.Response.Output)
		}
		m.usage.Merge(u)
	}
	switch v.Type {
	case "response.completed", "response.incomplete":
		m.done = true
	case "response.failed":
		msg := "the response failed"
		if v.Response != nil && v.Response.Error != nil && v.Response.Error.Message != "" {
			msg = v.Response.Error.Message
		}
		m.err = &gw.Error{Code: gw.CodeUpstream, Message: m.vendor + ": " + msg}
	case "error":
		msg := v.Message
		if msg == "" {
			msg = "the vendor's stream failed"
		}
		m.err = &gw.Error{Code: gw.CodeUpstream, Message: m.vendor + ": " + msg}
	}
}

// NextSeq is the sequence_number an event the gateway adds to the
// stream takes: one past the last the vendor sent (0 before any).
func (m *Meter) NextSeq() int64 {
	if !m.seqSet {
		return 0
	}
	return m.seq + 1
}

// ID returns the response id the stream announced ("" before).
func (m *Meter) ID() string { return m.id }

// IDFromBody reads a response object's id ("" when it has none).
func IDFromBody(body []byte) string {
	var v struct {
		ID string `json:"id"`
	}
	_ = json.Unmarshal(body, &v)
	return v.ID
}

// Usage returns the usage seen so far.
func (m *Meter) Usage() gw.Usage { return m.usage }

// Done reports whether the stream reached its terminal event.
func (m *Meter) Done() bool { return m.done }

// Err returns the in-stream failure, if any.
func (m *Meter) Err() *gw.Error { return m.err }

// ErrorEvent is the in-stream error the gateway sends on a Responses
// stream it must end itself: an error event (sequence_number seq).
func ErrorEvent(seq int64, e *gw.Error, requestID string) []byte {
	obj := map[string]any{"type": "error", "code": string(e.Code), "message": e.Message, "param": nil, "sequence_number": seq, "request_id": requestID}
	if e.IncidentID != "" {
		obj["incident_id"] = e.IncidentID
	}
	data, _ := json.Marshal(obj)
	return sse.AppendEvent(nil, "error", data)
}

// Observe looks at one relayed event (see observe). The shape hides no
// event from the caller: hide is always false.
func (m *Meter) Observe(ev *sse.Event) (hide bool) {
	m.observe(ev)
	return false
}
