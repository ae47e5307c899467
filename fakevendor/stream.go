package fakevendor

import (
	"context"
	"encoding/json"
	"net/http"
)

// frameKind says what a stream frame carries.
type frameKind int

const (
	framePre     frameKind = iota // comments, role chunk, message_start, ping
	frameContent                  // reasoning, text or tool-argument payload
	frameOther                    // block boundaries, finish, usage, terminator
)

// frame is one piece of a stream, written and flushed at once.
type frame struct {
	kind frameKind
	b    []byte
}

// dataFrame returns an SSE "data:" frame of v, ended by sep.
func dataFrame(kind frameKind, v any, sep string) frame {
	b, _ := json.Marshal(v)
	return frame{kind: kind, b: []byte("data: " + string(b) + sep)}
}

// eventFrame returns a named SSE event frame of v.
func eventFrame(kind frameKind, event string, v any) frame {
	b, _ := json.Marshal(v)
	return frame{kind: kind, b: []byte("event: " + event + "\ndata: " + string(b) + "\n\n")}
}

func rawFrame(kind frameKind, s string) frame { return frame{kind: kind, b: []byte(s)} }

// triggerIndex returns the frame index before which a break or error-after
// of n content chunks takes effect: right after the n-th content frame, or
// after the last one when there are fewer, or before the first content
// frame (first non-preamble frame) for n == 0.
func triggerIndex(frames []frame, n int) int {
	seen, lastContent, firstBody := 0, -1, len(frames)
	for i, f := range frames {
		if f.kind != framePre && firstBody == len(frames) {
			firstBody = i
		}
		if f.kind == frameContent {
			if n == 0 {
				return i
			}
			seen++
			lastContent = i
			if seen == n {
				return i + 1
			}
		}
	}
	if lastContent >= 0 {
		return lastContent + 1
	}
	return firstBody
}

// writeStream writes frames as an event stream, honouring the delay,
// break, error-after and malformed directives.
func (ex *exchange) writeStream(ctx context.Context, c *call, frames []frame, errFrames []frame) {
	d := c.dirs
	breakAt, errorAt, garbageAt := -1, -1, -1
	if d.breakAt >= 0 {
		breakAt = triggerIndex(frames, d.breakAt)
	}
	if d.errorAt >= 0 {
		errorAt = triggerIndex(frames, d.errorAt)
	}
	if d.malformed {
		garbageAt = triggerIndex(frames, 1)
	}
	h := ex.w.Header()
	h.Set("Content-Type", "text/event-stream; charset=utf-8")
	h.Set("Cache-Control", "no-cache")
	ex.setIDHeaders(c)
	ex.status = http.StatusOK
	ex.w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(ex.w)
	if rc.Flush() != nil {
		return
	}
	write := func(f frame) bool {
		if _, err := ex.w.Write(f.b); err != nil {
			return false
		}
		return rc.Flush() == nil
	}
	for i := 0; i <= len(frames); i++ {
		if i == breakAt {
			ex.breakConn(rc)
			return
		}
		if i == garbageAt {
			if !write(rawFrame(frameOther, "data: {\"id\":\"broken\",\"choices\":[{\"delta\":{\"content\":\"oops\"}\n\n")) {
				return
			}
		}
		if i == errorAt {
			for _, f := range errFrames {
				if !write(f) {
					return
				}
			}
			ex.complete = true
			return
		}
		if i == len(frames) {
			break
		}
		if i > 0 && d.delay > 0 && !ex.wait(ctx, d.delay) {
			return
		}
		if !write(frames[i]) {
			return
		}
	}
	ex.complete = true
}

// breakConn cuts the connection without finishing the response.
func (ex *exchange) breakConn(rc *http.ResponseController) {
	_ = rc.Flush()
	ex.broken = true
	conn, _, err := rc.Hijack()
	if err != nil {
		// HTTP/2 or a recorder: abort the handler, which resets the stream.
		panic(http.ErrAbortHandler)
	}
	_ = conn.Close()
}
