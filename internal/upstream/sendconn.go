package upstream

import (
	"context"
	"io"
	"net"
)

// dialSending dials with d and returns connections whose ReadFrom (the
// transport's copy of a request body, past its buffered first bytes)
// copies through a reused buffer: a plain TCP connection makes a fresh
// 32 KB buffer for every body it is handed.
func dialSending(d *net.Dialer) func(ctx context.Context, network, addr string) (net.Conn, error) {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := d.DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return &sendConn{Conn: c}, nil
	}
}

// sendConn is a vendor connection whose body copies reuse their buffer.
type sendConn struct{ net.Conn }

// copyBufs are the body copies' buffers, of the size io.Copy makes: a
// few kept for the next copies, not one per copy of a burst (a pool
// that kept them all would hold a burst's worth of buffers live for the
// garbage collector's next cycles, raising the heap it paces to).
var copyBufs = make(chan []byte, 32)

// ReadFrom copies r to the connection through a reused buffer.
func (c *sendConn) ReadFrom(r io.Reader) (int64, error) {
	var b []byte
	select {
	case b = <-copyBufs:
	default:
		b = make([]byte, 32<<10)
	}
	// writerOnly hides ReadFrom from io.CopyBuffer (no recursion).
	n, err := io.CopyBuffer(writerOnly{c.Conn}, r, b)
	select {
	case copyBufs <- b:
	default:
	}
	return n, err
}

type writerOnly struct{ io.Writer }
