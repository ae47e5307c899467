package main

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// closedAfterRead is a request body that, like the server's own once
// the answer's headers are written, fails every read after Close.
type closedAfterRead struct {
	r      io.Reader
	closed bool
}

func (b *closedAfterRead) Read(p []byte) (int, error) {
	if b.closed {
		return 0, http.ErrBodyReadAfterClose
	}
	return b.r.Read(p)
}

func (b *closedAfterRead) Close() error { b.closed = true; return nil }

// TestFloorReadsBodyWhole: the floor hands the proxy a body of its own,
// read whole, so that the server closing the inbound body (as it does
// when the answer's headers are written) cannot fail the proxy's
// reading of it.
func TestFloorReadsBodyWhole(t *testing.T) {
	orig := &closedAfterRead{r: strings.NewReader(`{"model":"m"}`)}
	var got string
	var n int64
	h := floorHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		orig.Close() // the server drains and closes its body
		b, err := io.ReadAll(r.Body)
		if err != nil {
			t.Errorf("read: %v", err)
		}
		got, n = string(b), r.ContentLength
	}))
	req := httptest.NewRequest(http.MethodPost, "/v1/chat/completions", nil)
	req.Body = orig
	h.ServeHTTP(httptest.NewRecorder(), req)
	if got != `{"model":"m"}` || n != int64(len(got)) {
		t.Errorf("proxied body %q, length %d", got, n)
	}
}
