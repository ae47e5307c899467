package anthropic

import (
	"encoding/json"

	"github.com/gwlabs/gateway"
	"github.com/gwlabs/gateway/sse"
)

// Meter reads the usage of an M stream that the server relays unchanged
// (pass-through). It only looks: usage from message_start and
// message_delta (whose cumulative counts replace earlier ones, never add
// to them), the end of the stream at message_stop, and an in-stream error
// event. Content deltas are not decoded. A Meter is not safe for
// concurrent use.
type Meter struct {
	usage gw.Usage
	// container: the answer ran code in a container (message_start's
	// message or message_delta's delta names one).
	container bool
	done      bool
	err       *gw.Error
	id        string
}

// NewMeter returns a Meter for one stream.
func NewMeter() *Meter { return &Meter{} }

// observe looks at one relayed event. Malformed usage is ignored: the
// relay must not fail on what it only meters, and Usage then reports what
// was seen (Reported false when nothing was).
func (m *Meter) observe(ev *sse.Event) {
	typ := ev.Type
	if typ == "" {
		if len(ev.Data) == 0 {
			return
		}
		// A data-only event; M streams name their events, but fall back
		// on the payload's own type.
		var t struct {
			Type string `json:"type"`
		}
		if json.Unmarshal(ev.Data, &t) != nil {
			return
		}
		typ = t.Type
	}
	switch typ {
	case "message_start":
		var s struct {
			Message struct {
				ID        string          `json:"id"`
				Usage     *wireUsage      `json:"usage"`
				Container json.RawMessage `json:"container"`
			} `json:"message"`
		}
		if json.Unmarshal(ev.Data, &s) == nil {
			m.id = s.Message.ID
			if s.Message.Usage != nil {
				applyUsage(&m.usage, s.Message.Usage)
			}
			m.container = m.container || usedContainer(s.Message.Container)
		}
	case "message_delta":
		var d struct {
			Usage *wireUsage `json:"usage"`
			Delta struct {
				StopReason string          `json:"stop_reason"`
				Container  json.RawMessage `json:"container"`
			} `json:"delta"`
		}
		if json.Unmarshal(ev.Data, &d) == nil {
			if d.Usage != nil {
				applyUsage(&m.usage, d.Usage)
			}
			m.container = m.container || usedContainer(d.Delta.Container)
			if d.Delta.StopReason != "" {
				// The answer is whole: a break before message_stop
				// loses nothing of it, and it is billed.
				m.done = true
			}
		}
	case "message_stop":
		m.done = true
	case "error":
		m.err = decodeErrorEvent(ev.Data)
	}
}

// ID returns the answer's message id (message_start's), "" before it.
func (m *Meter) ID() string { return m.id }

// Usage returns the usage seen so far; after message_stop it is final.
func (m *Meter) Usage() gw.Usage {
	u := m.usage
	if m.container && u.Reported {
		u.Hosted.CodeContainers = max(u.Hosted.CodeContainers, 1)
	}
	return u
}

// Done reports whether the answer is whole: message_stop, or a
// message_delta with a stop_reason, was seen. A stream that ended
// without either was cut short.
func (m *Meter) Done() bool { return m.done }

// Err returns the in-stream error event's error, or nil: CodeOverloaded
// for overloaded_error, CodeUpstream for anything else.
func (m *Meter) Err() *gw.Error { return m.err }

// wireError is the payload of an M error (event or body).
type wireError struct {
	Type  string `json:"type"`
	Error struct {
		Type    string `json:"type"`
		Message string `json:"message"`
	} `json:"error"`
}

// decodeErrorEvent maps an in-stream M error payload to a gateway error.
func decodeErrorEvent(data []byte) *gw.Error {
	var w wireError
	if err := json.Unmarshal(data, &w); err != nil {
		return upstreamErr("malformed error event", err)
	}
	code := gw.CodeUpstream
	if w.Error.Type == "overloaded_error" {
		code = gw.CodeOverloaded
	}
	msg := w.Error.Message
	if msg == "" {
		msg = w.Error.Type
	}
	if msg == "" {
		msg = "stream error"
	}
	return &gw.Error{Code: code, Message: "anthropic: " + msg}
}

// Observe looks at one relayed event (see observe). The shape hides no
// event from the caller: hide is always false.
func (m *Meter) Observe(ev *sse.Event) (hide bool) {
	m.observe(ev)
	return false
}
