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
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
	"sync"
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
	src     io.Reader
	buf     []byte
	start   int // unread bytes are buf[start:end]
	end     int
	srcErr  error
	max     int
	ev      Event
	raw     []byte
	data    []byte
	hasData bool
	err     error
	done    bool
}

// readBufSize is a new Reader's buffer: a vendor's events are a few
// hundred bytes, and the buffer doubles for a longer line.
const readBufSize = 4 << 10

// keptBytes bounds what a released Reader keeps for the next one (its
// buffer and an event's bytes): past it, a stream's one long event is
// not held by the pool.
const keptBytes = 64 << 10

// readers holds released Readers, so that a stream's buffers are reused
// by the next stream rather than made anew.
var readers = sync.Pool{New: func() any { return &Reader{buf: make([]byte, readBufSize)} }}

// NewReader returns a Reader over r. A caller done with it may give its
// buffers back with Release.
func NewReader(r io.Reader) *Reader {
	rd := readers.Get().(*Reader)
	rd.src, rd.max = r, DefaultMaxEventSize
	return rd
}

// Release gives the Reader's buffers to the next NewReader. Neither the
// Reader nor any Event it returned may be used after.
func (r *Reader) Release() {
	buf, raw, data := r.buf, r.raw[:0], r.data[:0]
	if cap(buf) > keptBytes {
		buf = make([]byte, readBufSize)
	}
	if cap(raw) > keptBytes {
		raw = nil
	}
	if cap(data) > keptBytes {
		data = nil
	}
	*r = Reader{buf: buf, raw: raw, data: data}
	readers.Put(r)
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

// readLine returns one line with its terminator (LF, CRLF or lone CR),
// or the rest of the stream without one at its end. The slice is valid
// until the next call.
func (r *Reader) readLine() ([]byte, error) {
	scanned := 0 // bytes of buf[start:end] known to hold no terminator
	for {
		b := r.buf[r.start:r.end]
		if i := lineEnd(b[scanned:]); i >= 0 {
			j := scanned + i
			if b[j] == '\r' {
				if j+1 == len(b) && r.srcErr == nil {
					// A CR at the end of what we have: an LF may follow.
					scanned = j
					r.fill()
					continue
				}
				if j+1 < len(b) && b[j+1] == '\n' {
					j++
				}
			}
			r.start += j + 1
			return b[:j+1], nil
		}
		scanned = len(b)
		if r.srcErr != nil {
			r.start = r.end
			if len(b) == 0 {
				return nil, r.srcErr
			}
			return b, r.srcErr
		}
		if len(b) > r.max {
			// Too long to be a line of an acceptable event; the caller
			// sees the size and stops.
			r.start = r.end
			return b, nil
		}
		r.fill()
	}
}

// lineEnd returns the index of the first CR or LF in b, or -1.
func lineEnd(b []byte) int {
	n := bytes.IndexByte(b, '\n')
	lim := b
	if n >= 0 {
		lim = b[:n]
	}
	if c := bytes.IndexByte(lim, '\r'); c >= 0 {
		return c
	}
	return n
}

// fill reads more input, first moving unread bytes to the front and
// growing the buffer when it is full.
func (r *Reader) fill() {
	if r.start > 0 {
		r.end = copy(r.buf, r.buf[r.start:r.end])
		r.start = 0
	}
	if r.end == len(r.buf) {
		nb := make([]byte, 2*len(r.buf))
		copy(nb, r.buf[:r.end])
		r.buf = nb
	}
	for range 100 {
		n, err := r.src.Read(r.buf[r.end:])
		r.end += n
		if err != nil {
			r.srcErr = err
			return
		}
		if n > 0 {
			return
		}
	}
	r.srcErr = io.ErrNoProgress
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
		r.ev.Type = eventType(value)
	case "id":
		r.ev.ID = string(value)
	case "retry":
		if n, err := strconv.Atoi(string(value)); err == nil && n >= 0 {
			r.ev.Retry = n
		}
	}
}

// eventType returns the event name, without allocating for the names the
// vendors' streams repeat on every event.
func eventType(b []byte) string {
	switch string(b) { // no allocation: the compiler compares in place
	case "message_start":
		return "message_start"
	case "content_block_start":
		return "content_block_start"
	case "content_block_delta":
		return "content_block_delta"
	case "content_block_stop":
		return "content_block_stop"
	case "message_delta":
		return "message_delta"
	case "message_stop":
		return "message_stop"
	case "ping":
		return "ping"
	case "error":
		return "error"
	}
	return string(b)
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
