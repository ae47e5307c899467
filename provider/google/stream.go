package google

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"

	gw "github.com/gwlabs/gateway"
	"github.com/gwlabs/gateway/sse"
)

// StreamDecoder turns a streamGenerateContent?alt=sse body into canonical
// events. Records are "data: {GenerateContentResponse}" blocks separated
// by blank lines (often CRLF), with no terminator: the stream ends at EOF.
// Each record holds only new parts; the assembler (decode.go) turns them
// into blocks. finishReason closes the open block; the last usageMetadata
// wins and goes into Finish, which is sent at EOF (a usage-only record may
// still follow the finishing one). An error record (a data record or a
// bare line holding {"error":...}) ends the stream with EventError, as
// does EOF before any finishReason. Keep-alive comments are skipped.
type StreamDecoder struct {
	body io.ReadCloser
	rd   *sse.Reader
	asm  assembler
	pos  int // next event of asm.events to hand out
	done bool

	closed    atomic.Bool
	closeOnce sync.Once
	closeErr  error
}

// NewStreamDecoder returns a decoder reading body; it takes ownership of
// body and closes it on Close.
func NewStreamDecoder(body io.ReadCloser) *StreamDecoder {
	return &StreamDecoder{body: body, rd: sse.NewReader(body)}
}

// Recv returns the next event, or io.EOF after the last one (Finish or
// Error).
func (d *StreamDecoder) Recv() (gw.Event, error) {
	for {
		if d.pos < len(d.asm.events) {
			ev := d.asm.events[d.pos]
			d.asm.events[d.pos] = gw.Event{}
			d.pos++
			if d.pos == len(d.asm.events) {
				// Everything handed out: reuse the buffer.
				d.asm.events, d.pos = d.asm.events[:0], 0
			}
			return ev, nil
		}
		if d.done || d.closed.Load() {
			return gw.Event{}, io.EOF
		}
		d.step()
	}
}

// step reads one SSE block and feeds it to the assembler.
func (d *StreamDecoder) step() {
	if !d.rd.Next() {
		d.done = true
		if err := d.rd.Err(); err != nil && d.asm.finish == "" {
			// Cut before any finishReason: broken. After one, the
			// answer is whole and ends as a finished stream (billed).
			d.asm.fail(readError(err))
			return
		}
		d.asm.end(true)
		return
	}
	ev := d.rd.Event()
	data := ev.Data
	if data == nil {
		// Not a data record: a comment, a field we do not use, or a
		// bare JSON line (how Gemini sends some errors).
		raw := bytes.TrimSpace(ev.Raw)
		if len(raw) == 0 || ev.Type != "" || ev.ID != "" || ev.Retry >= 0 || (raw[0] != '{' && raw[0] != '[') {
			return
		}
		data = raw
	}
	data = bytes.TrimSpace(data)
	if len(data) == 0 || bytes.Equal(data, []byte("[DONE]")) {
		return
	}
	if data[0] == '[' {
		// An error in array form.
		if st := parseRPC(data); st != nil {
			d.stop(streamError(st))
			return
		}
	}
	var gr genResponse
	if err := json.Unmarshal(data, &gr); err != nil {
		d.stop(&gw.Error{Code: gw.CodeUpstream, Message: "google: malformed stream record", Err: fmt.Errorf("decode gemini stream record: %w", err)})
		return
	}
	if gr.Error != nil {
		d.stop(streamError(gr.Error))
		return
	}
	if d.asm.ended {
		return
	}
	d.asm.record(&gr)
}

// stop ends the stream with an error event.
func (d *StreamDecoder) stop(err *gw.Error) {
	d.done = true
	if !d.asm.ended {
		d.asm.fail(err)
	}
}

// readError maps a failure reading the body: internal/upstream reports a
// silent stream as upstream_timeout; anything else is upstream_error.
func readError(err error) *gw.Error {
	var ge *gw.Error
	if errors.As(err, &ge) {
		return ge
	}
	if errors.Is(err, sse.ErrEventTooLarge) {
		return &gw.Error{Code: gw.CodeUpstream, Message: "google: stream record too large", Err: err}
	}
	return &gw.Error{Code: gw.CodeUpstream, Message: "google: the stream broke", Err: fmt.Errorf("read gemini stream: %w", err)}
}

// Close closes the body. It may be called at any time, more than once;
// Recv returns io.EOF after it.
func (d *StreamDecoder) Close() error {
	d.closed.Store(true)
	d.closeOnce.Do(func() { d.closeErr = d.body.Close() })
	return d.closeErr
}

var _ gw.EventStream = (*StreamDecoder)(nil)
