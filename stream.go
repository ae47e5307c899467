package gw

import "io"

// EventType tells the kind of an Event.
type EventType int

// Stream event types. A well-formed stream is: Start, then per block
// BlockStart, Delta*, BlockStop (blocks strictly sequential, Index
// counting from 0), then Finish; or Error at any point, after which
// nothing follows.
const (
	EventStart EventType = iota + 1
	EventBlockStart
	EventDelta
	EventBlockStop
	EventFinish
	EventError
)

// Event is one canonical stream event.
type Event struct {
	Type EventType

	// Start: the vendor's model id and message id (may be empty), and any
	// usage known up front (input and cache counts).
	Model string
	ID    string

	// BlockStart, Delta, BlockStop: the block index. BlockStart carries
	// the block in Part (for a tool call: Type, ToolCallID, ToolName; for
	// redacted thinking: the whole block).
	Index int
	Part  *Part

	// Delta: Text is a text or thinking fragment, or a fragment of a tool
	// call's argument JSON, by the type of the block at Index. Signature
	// is a signature fragment of a thinking block.
	Text      string
	Signature string

	// Finish: the stop reason and matched stop sequence.
	StopReason   StopReason
	StopSequence string

	// Start and Finish: usage so far (Finish: final and cumulative).
	Usage *Usage

	// Error: what broke the stream.
	Err *Error
}

// EventStream is a pull iterator over canonical events. Recv returns
// io.EOF after the last event. Close releases the underlying body and may
// be called at any time, more than once.
type EventStream interface {
	Recv() (Event, error)
	Close() error
}

// Upstream is a vendor's raw successful answer: the status (2xx), its
// headers and its body, to be relayed or decoded.
type Upstream struct {
	Status int
	Header map[string][]string
	Body   io.ReadCloser
}
