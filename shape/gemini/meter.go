package gemini

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	jsonv2 "github.com/go-json-experiment/json"

	gw "github.com/gwlabs/gateway"
	"github.com/gwlabs/gateway/sse"
)

// meterRecord is what the meter reads of a record: its usage, whether a
// candidate finished, and an error record.
type meterRecord struct {
	Candidates []struct {
		FinishReason string `json:"finishReason"`
	} `json:"candidates"`
	PromptFeedback *PromptFeedback `json:"promptFeedback"`
	UsageMetadata  *UsageMetadata  `json:"usageMetadata"`
	ResponseID     string          `json:"responseId"`
	Error          *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
		Status  string `json:"status"`
	} `json:"error"`
}

// UsageFromBody reads usageMetadata from a whole generateContent answer
// relayed as is (google/ callers). No usageMetadata gives a usage that is
// not Reported; a body that is not a JSON object is an error.
func UsageFromBody(body []byte) (gw.Usage, error) {
	var r meterRecord
	if err := json.Unmarshal(body, &r); err != nil {
		return gw.Usage{}, err
	}
	if r.UsageMetadata == nil {
		return gw.Usage{}, nil
	}
	return r.UsageMetadata.Usage(), nil
}

// Meter reads usage on the side of a relayed streamGenerateContent?alt=sse
// answer (google/ callers): each record's usageMetadata is the report so
// far and replaces the earlier one; a finishReason or a blocked prompt
// marks the answer whole; an error record is the vendor's in-stream
// failure (overloaded for UNAVAILABLE, upstream_error otherwise).
type Meter struct {
	usage gw.Usage
	done  bool
	err   *gw.Error
	id    string
}

// NewMeter returns a Meter.
func NewMeter() *Meter { return &Meter{} }

// observe reads one event. Malformed data is ignored: the relay passes it
// on, and the usage it did not report is estimated.
func (m *Meter) observe(ev *sse.Event) {
	data := bytes.TrimSpace(ev.Data)
	if len(data) == 0 || data[0] != '{' {
		return
	}
	var r meterRecord
	if jsonv2.Unmarshal(data, &r, jsonv2.RejectUnknownMembers(false)) != nil {
		return
	}
	if r.ResponseID != "" && m.id == "" {
		m.id = r.ResponseID
	}
	if r.Error != nil {
		msg := strings.TrimSpace(r.Error.Message)
		if msg == "" {
			msg = "the stream failed"
		}
		if len(msg) > 2000 {
			msg = msg[:2000]
		}
		e := &gw.Error{Code: gw.CodeUpstream, Message: "google: " + msg, Err: fmt.Errorf("google stream error %d %s", r.Error.Code, r.Error.Status)}
		if r.Error.Status == "UNAVAILABLE" || r.Error.Code == http.StatusServiceUnavailable {
			e.Code = gw.CodeOverloaded
		}
		m.err = e
		return
	}
	if r.UsageMetadata != nil {
		m.usage.Merge(r.UsageMetadata.Usage())
	}
	for _, c := range r.Candidates {
		if c.FinishReason != "" {
			m.done = true
		}
	}
	if r.PromptFeedback != nil && r.PromptFeedback.BlockReason != "" {
		m.done = true
	}
}

// Usage is the usage reported so far.
func (m *Meter) Usage() gw.Usage { return m.usage }

// Done reports whether the answer finished.
func (m *Meter) Done() bool { return m.done }

// Err is the vendor's in-stream error, if one came.
func (m *Meter) Err() *gw.Error { return m.err }

// ID is the answer's responseId.
func (m *Meter) ID() string { return m.id }

// Observe looks at one relayed event (see observe). The shape hides no
// event from the caller: hide is always false.
func (m *Meter) Observe(ev *sse.Event) (hide bool) {
	m.observe(ev)
	return false
}
