package chat

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"

	gw "github.com/gwlabs/gateway"
	"github.com/gwlabs/gateway/proxy"
)

// ReadAnswer reads a non-streaming vendor answer, failing past
// MaxResponseBytes instead of cutting it.
func (s *Lifecycle) ReadAnswer(vendor string, r io.Reader) ([]byte, error) {
	limit := s.cfg.MaxResponseBytes
	body, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(body)) > limit {
		return nil, &tooLarge{&gw.Error{Code: gw.CodeUpstream, Message: fmt.Sprintf("%s: the vendor's answer is over the gateway's %d-byte limit", vendor, limit)}, limit}
	}
	return body, nil
}

// tooLarge is a vendor answer over MaxResponseBytes: refused to the
// caller, but the vendor generated (and bills) it, so it is billed.
type tooLarge struct {
	err  *gw.Error
	read int64
}

func (t *tooLarge) Error() string { return t.err.Error() }

func (t *tooLarge) Unwrap() error { return t.err }

// billTooLarge settles an answer refused for its size: the prompt
// estimate and, as output, the bytes read (one token a byte, clamped to
// the most output the request allowed), noted answer_too_large. It
// reports whether err was such an answer.
func (s *Lifecycle) billTooLarge(w http.ResponseWriter, ctx context.Context, x *proxy.Exchange, err error) bool {
	var tl *tooLarge
	if !errors.As(err, &tl) {
		return false
	}
	in := x.Inbound()
	s.finish(ctx, x, proxy.Outcome{Status: tl.err.Code.Status(), Err: tl.err, Success: true, Usage: estimateUsage(in, tl.read), Note: "answer_too_large"})
	WriteError(w, s.shapeOf(in), in.RequestID, tl.err)
	return true
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
