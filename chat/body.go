package chat

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"time"

	gw "github.com/gwlabs/gateway"
)

// readBody reads the body, at most MaxBodyBytes, within BodyReadTimeout,
// answering 413 as soon as the body goes past the limit. Memory is taken
// as bytes arrive (Content-Length only sizes each step, see growBody),
// and counted against
// MaxInflightBytes: past it, 503 with Retry-After. held is what the
// caller must give back to the count when the request is done.
func (s *Lifecycle) readBody(w http.ResponseWriter, r *http.Request) (body []byte, held int64, err error) {
	return s.ReadBodyMax(w, r, s.cfg.MaxBodyBytes)
}

// ReadBodyMax is readBody with a limit of its own (the token counts'
// bodies, counted in the same bytes in flight); the caller gives held
// back with Unhold.
func (s *Lifecycle) ReadBodyMax(w http.ResponseWriter, r *http.Request, limit int64) (body []byte, held int64, err error) {
	return s.readBodyAs(w, r, limit, nil)
}

// ReadBodyFor is ReadBodyMax for the caller p: the bytes held count
// toward p's account's and key's shares of the bytes in flight too
// (MaxInflightBytesPerAccount, MaxInflightBytesPerKey); past a share,
// 429 with Retry-After. The caller gives the bytes back with release.
func (s *Lifecycle) ReadBodyFor(w http.ResponseWriter, r *http.Request, limit int64, p *gw.Principal) (body []byte, release func(), err error) {
	body, held, err := s.readBodyAs(w, r, limit, p)
	return body, func() { s.bodyBytes.release(p, held) }, err
}

func (s *Lifecycle) readBodyAs(w http.ResponseWriter, r *http.Request, limit int64, p *gw.Principal) (body []byte, held int64, err error) {
	if r.ContentLength > limit {
		return nil, 0, gw.Errorf(gw.CodeRequestTooLarge, "request body is %d bytes; the limit is %d", r.ContentLength, limit)
	}
	rc := http.NewResponseController(w)
	if rc.SetReadDeadline(time.Now().Add(s.cfg.BodyReadTimeout)) == nil {
		// Cleared once read: the server's background read must not hit
		// it while a long answer streams.
		defer func() { _ = rc.SetReadDeadline(time.Time{}) }()
	}
	rd := http.MaxBytesReader(w, r.Body, limit)
	// One byte past the announced length, so the read that finds the
	// end needs no room of its own.
	var buf []byte
	var first []byte // a body past firstBytes arrives first in a reused buffer
	if r.ContentLength+1 > firstBytes {
		first = getFirst()
		buf = first[:0]
		defer func() {
			if first != nil {
				putFirst(first)
			}
		}()
	} else {
		buf = make([]byte, 0, max(r.ContentLength+1, 512))
	}
	for {
		if len(buf) == cap(buf) {
			buf = growBody(buf, r.ContentLength)
			if first != nil {
				putFirst(first)
				first = nil
			}
		}
		if grow := int64(cap(buf)) - held; grow > 0 {
			if err := s.bodyBytes.reserve(p, grow); err != nil {
				return nil, held, err
			}
			held += grow
		}
		n, err := rd.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			if first != nil {
				// Shorter than announced: the body is its own copy.
				buf = append(make([]byte, 0, len(buf)), buf...)
			}
			return buf, held, nil
		}
		if err != nil {
			var mbe *http.MaxBytesError
			if errors.As(err, &mbe) {
				return nil, held, gw.Errorf(gw.CodeRequestTooLarge, "request body is over the %d-byte limit", limit)
			}
			if errors.Is(err, os.ErrDeadlineExceeded) {
				return nil, held, &gw.Error{Code: gw.CodeInvalidRequest, Message: fmt.Sprintf("the request body did not arrive within %v", s.cfg.BodyReadTimeout), Err: err}
			}
			return nil, held, gw.Errorf(gw.CodeInvalidRequest, "could not read the request body")
		}
	}
}

// firstBytes is the buffer a body's first bytes arrive in when its
// announced length is past it; a larger body then moves to a
// buffer of its own (growBody), and firstBytes goes back to firstBufs
// for the next request rather than to the garbage collector.
const firstBytes = 16 << 10

// firstBufs keeps a few first buffers, not one per body of a burst (a
// pool that kept them all would hold a burst's worth live for the
// garbage collector's next cycles, raising the heap it paces to).
var firstBufs = make(chan []byte, 32)

func getFirst() []byte {
	select {
	case b := <-firstBufs:
		return b
	default:
		return make([]byte, firstBytes)
	}
}

func putFirst(b []byte) {
	select {
	case firstBufs <- b:
	default:
	}
}

// growBody makes room for more of a body whose len(buf) bytes have
// arrived: straight to the announced length (and the byte that finds the
// end) when that is at most eight times what has arrived, else eight
// times; doubling when the length is not announced. Memory still follows
// the bytes that arrive: a client announcing a large body and sending
// little never gets more than eight times what it sent.
func growBody(buf []byte, announced int64) []byte {
	want := 2 * cap(buf)
	if announced >= int64(len(buf)) {
		want = int(min(announced+1, 8*int64(len(buf))))
		want = max(want, len(buf)+1)
	}
	grown := make([]byte, len(buf), want)
	copy(grown, buf)
	return grown
}

// Unhold gives back to the bytes in flight a body's held bytes (read
// with ReadBodyMax).
func (s *Lifecycle) Unhold(held int64) { s.bodyBytes.release(nil, held) }
