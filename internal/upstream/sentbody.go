package upstream

import (
	"errors"
	"io"
	"sync"
)

// letGoBytes is the request body size from which a call's body is sent
// through a sentBody: below it, what the transport keeps of the request
// during a stream is less than the stream's own buffers.
const letGoBytes = 16 << 10

// sentBody is a request body the transport reads once, with the copy a
// resend reads (http.Request.GetBody), that stops holding the bytes once
// the vendor has answered: the transport keeps the request as long as
// the answer is read, which for a stream is its whole life.
type sentBody struct {
	mu sync.Mutex
	b  []byte // nil once answered: no resend can start after the answer
}

func newSentBody(b []byte) *sentBody { return &sentBody{b: b} }

// open is a reader of the body that lets go of its bytes at its end or
// when closed.
func (s *sentBody) open() io.ReadCloser {
	s.mu.Lock()
	defer s.mu.Unlock()
	return &onceReader{b: s.b}
}

// reopen is GetBody: a fresh reader, until the answer came.
func (s *sentBody) reopen() (io.ReadCloser, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.b == nil {
		return nil, errors.New("the request body was let go once answered")
	}
	return &onceReader{b: s.b}, nil
}

// answered lets go of the bytes kept for a resend.
func (s *sentBody) answered() {
	s.mu.Lock()
	s.b = nil
	s.mu.Unlock()
}

// onceReader reads b once, dropping it at the end or on Close.
type onceReader struct {
	mu sync.Mutex
	b  []byte
}

func (r *onceReader) Read(p []byte) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.b) == 0 {
		r.b = nil
		return 0, io.EOF
	}
	n := copy(p, r.b)
	r.b = r.b[n:]
	if len(r.b) == 0 {
		r.b = nil
	}
	return n, nil
}

func (r *onceReader) Close() error {
	r.mu.Lock()
	r.b = nil
	r.mu.Unlock()
	return nil
}
