package upstream

import (
	"context"
	"io"
	"net"
	"sync"
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

// copyBufs are the body copies' buffers, of the size io.Copy makes.
var copyBufs = sync.Pool{New: func() any { b := make([]byte, 32<<10); return &b }}

// ReadFrom copies r to the connection through a pooled buffer.
func (c *sendConn) ReadFrom(r io.Reader) (int64, error) {
	b := copyBufs.Get().(*[]byte)
	defer copyBufs.Put(b)
	// writerOnly hides ReadFrom from io.CopyBuffer (no recursion).
	return io.CopyBuffer(writerOnly{c.Conn}, r, *b)
}

type writerOnly struct{ io.Writer }
