package upstream

import (
	"bytes"
	"io"
	"net"
	"testing"
)

// A body copied through a sendConn arrives whole, as the transport's
// copy of a sized body (a LimitedReader) hands it over.
func TestSendConnReadFrom(t *testing.T) {
	for _, n := range []int{0, 1, 32 << 10, 110<<10 + 7} {
		a, b := net.Pipe()
		body := bytes.Repeat([]byte("0123456789"), n/10+1)[:n]
		got := make(chan []byte)
		go func() {
			all, _ := io.ReadAll(b)
			got <- all
		}()
		c := &sendConn{Conn: a}
		m, err := c.ReadFrom(io.LimitReader(bytes.NewReader(body), int64(n)))
		if err != nil || m != int64(n) {
			t.Fatalf("%d bytes: copied %d, %v", n, m, err)
		}
		a.Close()
		if all := <-got; !bytes.Equal(all, body) {
			t.Fatalf("%d bytes: %d arrived, not the body", n, len(all))
		}
	}
}
