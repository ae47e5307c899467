// Package sse reads and writes Server-Sent Events.
//
// Reader is a pull iterator (Next, Event, Err) over the blocks of a
// stream. Besides the parsed fields it keeps each block's exact bytes
// (Event.Raw), so a pass-through relay can forward what the vendor sent
// unchanged while still looking at every event: comment-only blocks
// (": keep-alive") and stray blank lines come out as blocks too. It accepts
// LF, CRLF and lone CR line ends, "data:" with or without the space,
// "retry:" and "id:" fields, and events up to MaxEventSize bytes. A final
// block that the stream ends without a blank line (Gemini closes its
// stream that way) is still returned.
//
// The writers (WriteEvent, WriteData, WriteComment) encode one event each.
package sse

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
)

// DefaultMaxEventSize bounds one event's bytes unless the Reader is told
// otherwise.
const DefaultMaxEventSize = 32 << 20

// ErrEventTooLarge is returned by Err when an event exceeds the limit.
var ErrEventTooLarge = errors.New("sse: event too large")

// Event is one block of a stream.
type Event struct {
	// Type is the "event:" field, empty when absent.
	Type string
	// Data is the "data:" lines joined with "\n"; nil when the block had
	// no data field.
	Data []byte
	// ID and Retry are the "id:" and "retry:" fields (Retry in ms, -1
	// when absent).
	ID    string
	Retry int
	// Comments counts ":" lines.
	Comments int
	// Raw is the block's exact bytes, its terminating blank line included
	// when there was one.
	Raw []byte
}

// Empty reports whether the block carries no field at all (only blank
// lines or comments).
func (e *Event) Empty() bool { return e.Type == "" && e.Data == nil && e.ID == "" && e.Retry < 0 }

// Reader reads events from a stream.
type Reader struct {
	br      *bufio.Reader
	max     int
	ev      Event
	raw     []byte
	data    []byte
	hasData bool
	err     error
	done    bool
}

// NewReader returns a Reader over r.
func NewReader(r io.Reader) *Reader {
	return &Reader{br: bufio.NewReaderSize(r, 16<<10), max: DefaultMaxEventSize}
}

// SetMaxEventSize changes the per-event byte limit.
func (r *Reader) SetMaxEventSize(n int) { r.max = n }

// Next advances to the next block. It returns false at the end of the
// stream or on an error (see Err).
func (r *Reader) Next() bool {
	if r.done {
		return false
	}
	r.ev = Event{Retry: -1}
	r.raw = r.raw[:0]
	r.data = r.data[:0]
	r.hasData = false
	sawField := false
	for {
		line, err := r.readLine()
		if len(line) > 0 {
			r.raw = append(r.raw, line...)
			if len(r.raw) > r.max {
				r.err, r.done = ErrEventTooLarge, true
				return false
			}
			content := trimEOL(line)
			if len(content) == 0 {
				// A blank line ends the block.
				return r.emit()
			}
			r.field(content)
			sawField = true
		}
		if err != nil {
			r.done = true
			if err != io.EOF {
				r.err = err
				return false
			}
			if sawField || len(r.raw) > 0 {
				return r.emit()
			}
			return false
		}
	}
}

func (r *Reader) emit() bool {
	if r.hasData {
		if r.data == nil {
			r.data = []byte{}
		}
		r.ev.Data = r.data
	}
	r.ev.Raw = r.raw
	return true
}

// readLine returns one line with its terminator (LF, CRLF or lone CR).
func (r *Reader) readLine() ([]byte, error) {
	var line []byte
	for {
		b, err := r.br.ReadSlice('\n')
		if i := bytes.IndexByte(b, '\r'); i >= 0 && i+1 < len(b) && b[i+1] != '\n' {
			// A lone CR ends the line early; push the rest back by
			// handling it on the next call.
			line = append(line, b[:i+1]...)
			r.unread(b[i+1:])
			return line, nil
		}
		if err == bufio.ErrBufferFull {
			line = append(line, b...)
			if len(line) > r.max {
				return line, nil
			}
			continue
		}
		if line == nil {
			// Copy: ReadSlice's buffer is reused.
			line = append([]byte(nil), b...)
		} else {
			line = append(line, b...)
		}
		if err == nil && len(b) >= 1 && b[len(b)-1] == '\n' {
			return line, nil
		}
		if err == nil {
			return line, nil
		}
		if len(line) > 0 && line[len(line)-1] == '\r' && err == io.EOF {
			return line, io.EOF
		}
		return line, err
	}
}

// unread puts b back in front of the buffered input.
func (r *Reader) unread(b []byte) {
	rest := append([]byte(nil), b...)
	r.br = bufio.NewReaderSize(io.MultiReader(bytes.NewReader(rest), r.br), 16<<10)
}

func trimEOL(b []byte) []byte {
	if n := len(b); n > 0 && b[n-1] == '\n' {
		b = b[:n-1]
	}
	if n := len(b); n > 0 && b[n-1] == '\r' {
		b = b[:n-1]
	}
	return b
}

func (r *Reader) field(line []byte) {
	if line[0] == ':' {
		r.ev.Comments++
		return
	}
	name, value := line, []byte(nil)
	if i := bytes.IndexByte(line, ':'); i >= 0 {
		name, value = line[:i], line[i+1:]
		if len(value) > 0 && value[0] == ' ' {
			value = value[1:]
		}
	}
	switch string(name) {
	case "data":
		if r.hasData {
			r.data = append(r.data, '\n')
		}
		r.data = append(r.data, value...)
		r.hasData = true
	case "event":
		r.ev.Type = string(value)
	case "id":
		r.ev.ID = string(value)
	case "retry":
		if n, err := strconv.Atoi(string(value)); err == nil && n >= 0 {
			r.ev.Retry = n
		}
	}
}

// Event returns the current block. Its byte slices are valid until the
// next call to Next.
func (r *Reader) Event() Event { return r.ev }

// Err returns the error that stopped the Reader, or nil at a clean end.
func (r *Reader) Err() error { return r.err }

// WriteEvent writes one event with an "event:" line (omitted when typ is
// empty) and data, split into one "data:" line per line of data.
func WriteEvent(w io.Writer, typ string, data []byte) error {
	buf := make([]byte, 0, len(typ)+len(data)+24)
	buf = AppendEvent(buf, typ, data)
	_, err := w.Write(buf)
	return err
}

// AppendEvent appends the encoding of one event to buf.
func AppendEvent(buf []byte, typ string, data []byte) []byte {
	if typ != "" {
		buf = append(buf, "event: "...)
		buf = append(buf, typ...)
		buf = append(buf, '\n')
	}
	for {
		i := bytes.IndexAny(data, "\r\n")
		buf = append(buf, "data: "...)
		if i < 0 {
			buf = append(buf, data...)
			buf = append(buf, '\n')
			break
		}
		buf = append(buf, data[:i]...)
		buf = append(buf, '\n')
		if data[i] == '\r' && i+1 < len(data) && data[i+1] == '\n' {
			i++
		}
		data = data[i+1:]
	}
	return append(buf, '\n')
}

// WriteData writes a data-only event.
func WriteData(w io.Writer, data []byte) error { return WriteEvent(w, "", data) }

// WriteComment writes a comment block (": text").
func WriteComment(w io.Writer, text string) error {
	_, err := fmt.Fprintf(w, ": %s\n\n", text)
	return err
}
