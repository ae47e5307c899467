package openai

import (
	"bytes"
	"encoding/json"

	"github.com/gwlabs/gateway"
	"github.com/gwlabs/gateway/sse"
)

// Meter reads the usage of a C stream that the server relays unchanged
// (pass-through). It only looks at each event, never changes it, and
// decodes a chunk only when a cheap byte scan shows it may carry usage,
// an error or a finish reason; ordinary content chunks cost one scan.
// A Meter is not safe for concurrent use.
type Meter struct {
	hideUsage bool
	vendor    string
	usage     gw.Usage
	done      bool
	err       *gw.Error
}

// NewMeter returns a Meter for one stream. hideUsage says the gateway
// itself added stream_options.include_usage, so the usage-only chunk must
// be held back from the caller (Observe reports it).
func NewMeter(hideUsage bool) *Meter { return &Meter{hideUsage: hideUsage} }

// SetVendor names the vendor whose stream is metered; Err's message is
// prefixed with it ("groq: ..."). Without it the prefix is "upstream".
func (m *Meter) SetVendor(vendor string) { m.vendor = vendor }

// meterChunk is the part of a chunk the meter reads.
type meterChunk struct {
	Choices []struct {
		FinishReason *string `json:"finish_reason"`
	} `json:"choices"`
	Usage       *wireUsage  `json:"usage"`
	ServiceTier gw.TierName `json:"service_tier"`
	XGroq       *struct {
		Usage *wireUsage      `json:"usage"`
		Error json.RawMessage `json:"error"`
	} `json:"x_groq"`
	Error json.RawMessage `json:"error"`
}

// doneMarker is the C stream terminator.
const doneMarker = "[DONE]"

// Observe looks at one relayed event. It records usage (a top-level usage
// object on any chunk, Groq's x_groq.usage, OpenRouter's cost; a later
// usage object replaces an earlier one, since each is cumulative), the
// end of the stream ([DONE] or a finish_reason other than "error"), and an
// in-stream error (an {"error":...} chunk, OpenRouter's finish_reason
// "error", Groq's x_groq.error). It returns hide=true for the usage-only
// chunk (no choices, usage set) when the Meter was made with hideUsage.
// Malformed chunks are not the meter's concern: it ignores what it cannot
// read, and Usage then reports what was seen.
func (m *Meter) Observe(ev *sse.Event) (hide bool) {
	data := ev.Data
	if len(data) == 0 {
		return false
	}
	if data[0] == '[' || data[0] == ' ' {
		if string(bytes.TrimSpace(data)) == doneMarker {
			m.done = true
		}
		return false
	}
	if !hasNonNullKey(data, "usage") && !hasNonNullKey(data, "error") && !hasNonNullKey(data, "finish_reason") {
		return false
	}
	var c meterChunk
	if json.Unmarshal(data, &c) != nil {
		return false
	}
	if c.Usage != nil {
		if u, err := c.Usage.normalise(); err == nil {
			u.Malformed = u.Malformed || m.usage.Malformed
			if u.Reported {
				// The usage chunk says which tier served the request.
				u.Hosted.ServiceTier = string(c.ServiceTier)
			}
			m.usage = u
		}
	} else if c.XGroq != nil && c.XGroq.Usage != nil {
		if u, err := c.XGroq.Usage.normalise(); err == nil {
			u.Malformed = u.Malformed || m.usage.Malformed
			m.usage = u
		}
	}
	if isJSONValue(c.Error) {
		if m.err == nil {
			m.err = streamError(m.vendor, c.Error)
		}
	} else if c.XGroq != nil && isJSONValue(c.XGroq.Error) {
		if m.err == nil {
			m.err = streamError(m.vendor, c.XGroq.Error)
		}
	}
	for _, ch := range c.Choices {
		if ch.FinishReason == nil || *ch.FinishReason == "" {
			continue
		}
		if *ch.FinishReason == "error" {
			if m.err == nil {
				m.err = vendorError(m.vendor, "stream ended with finish_reason error", "", "")
			}
			continue
		}
		m.done = true
	}
	return m.hideUsage && c.Usage != nil && len(c.Choices) == 0
}

// Usage returns the usage seen so far; after the usage chunk it is final.
// Reported is false when the stream carried none.
func (m *Meter) Usage() gw.Usage { return m.usage }

// Done reports whether the stream finished: [DONE] or a finish_reason
// (other than "error") was seen. A stream that ended without either was
// cut short.
func (m *Meter) Done() bool { return m.done }

// Err returns the in-stream error seen, or nil: CodeOverloaded for an
// overload signal, CodeUpstream for anything else.
func (m *Meter) Err() *gw.Error { return m.err }

// isJSONValue reports whether raw holds a JSON value other than null.
func isJSONValue(raw json.RawMessage) bool {
	raw = bytes.TrimSpace(raw)
	return len(raw) > 0 && !bytes.Equal(raw, []byte("null"))
}

// hasNonNullKey reports whether data may hold the object key `"key"` with
// a value other than null. It is a byte scan, not a parse: a match inside
// a string is impossible for keys (quotes there are escaped) and a false
// positive only costs a decode.
func hasNonNullKey(data []byte, key string) bool {
	for {
		i := indexQuoted(data, key)
		if i < 0 {
			return false
		}
		rest := data[i+len(key)+2:]
		rest = skipSpace(rest)
		if len(rest) > 0 && rest[0] == ':' {
			rest = skipSpace(rest[1:])
			if len(rest) > 0 && rest[0] != 'n' {
				return true
			}
		}
		data = rest
	}
}

// indexQuoted returns the index of `"key"` in data, or -1.
func indexQuoted(data []byte, key string) int {
	off := 0
	for {
		i := bytes.Index(data[off:], []byte(key))
		if i < 0 {
			return -1
		}
		i += off
		end := i + len(key)
		if i > 0 && data[i-1] == '"' && end < len(data) && data[end] == '"' {
			return i - 1
		}
		off = end
	}
}

func skipSpace(b []byte) []byte {
	for len(b) > 0 && (b[0] == ' ' || b[0] == '\t' || b[0] == '\n' || b[0] == '\r') {
		b = b[1:]
	}
	return b
}
