package server

import (
	"bytes"
	"fmt"
	"io"

	gw "github.com/gwlabs/gateway"
)

// readAnswer reads a non-streaming vendor answer, failing past
// MaxResponseBytes instead of cutting it.
func (s *Server) readAnswer(vendor string, r io.Reader) ([]byte, error) {
	limit := s.cfg.MaxResponseBytes
	body, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(body)) > limit {
		return nil, &gw.Error{Code: gw.CodeUpstream, Message: fmt.Sprintf("%s: the vendor's answer is over the gateway's %d-byte limit", vendor, limit)}
	}
	return body, nil
}

// lineLimit fails a vendor stream whose line goes past max bytes, so that
// a stream decoder never buffers more (the mapped stream decoders keep a
// whole event in memory).
type lineLimit struct {
	io.ReadCloser
	vendor string
	max    int
	line   int // bytes since the last newline
}

func (l *lineLimit) Read(p []byte) (int, error) {
	n, err := l.ReadCloser.Read(p)
	b := p[:n]
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			l.line += len(b)
			break
		}
		l.line += i
		if l.line > l.max {
			break
		}
		l.line = 0
		b = b[i+1:]
	}
	if l.line > l.max {
		return 0, &gw.Error{Code: gw.CodeUpstream, Message: fmt.Sprintf("%s: a line of the vendor's stream is over the gateway's %d-byte limit", l.vendor, l.max)}
	}
	return n, err
}
