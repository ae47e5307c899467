package chat

import (
	"bytes"
	"io"
	"net/http/httptest"
	"testing"
)

// A body of announced length is read into one buffer of that length
// (plus the byte that finds its end) after the first 16 KB, and its
// bytes come back as sent; an unannounced one still doubles.
func TestReadBodySizedFromContentLength(t *testing.T) {
	s := New(Config{})
	for _, n := range []int{0, 200, 16 << 10, 110 << 10, 250 << 10} {
		sent := bytes.Repeat([]byte("0123456789abcdef"), n/16+1)[:n]
		r := httptest.NewRequest("POST", "/v1/chat/completions", bytes.NewReader(sent))
		body, held, err := s.readBody(httptest.NewRecorder(), r)
		if err != nil {
			t.Fatalf("%d bytes: %v", n, err)
		}
		if !bytes.Equal(body, sent) {
			t.Fatalf("%d bytes: read %d bytes that differ from those sent", n, len(body))
		}
		// 16 KB, then the rest at once: never more than one buffer
		// beyond the first, and never a doubling past the length.
		if limit := int64(max(n+1, 512)); held > limit {
			t.Errorf("%d bytes announced: held %d bytes, want at most %d", n, held, limit)
		}
		s.Unhold(held)

		r = httptest.NewRequest("POST", "/v1/chat/completions", io.MultiReader(bytes.NewReader(sent)))
		r.ContentLength = -1
		body, held, err = s.readBody(httptest.NewRecorder(), r)
		if err != nil || !bytes.Equal(body, sent) {
			t.Fatalf("%d bytes unannounced: %d bytes, %v", n, len(body), err)
		}
		if held < int64(n) {
			t.Errorf("%d bytes unannounced: held %d, less than the body", n, held)
		}
		s.Unhold(held)
	}
}

// A client that announces far more than it sends gets at most eight
// times what it sent at each step.
func TestGrowBodyFollowsArrivedBytes(t *testing.T) {
	buf := make([]byte, 16<<10)
	if got := cap(growBody(buf, 110<<10)); got != 110<<10+1 {
		t.Errorf("110 KB announced, 16 KB arrived: room for %d, want %d", got, 110<<10+1)
	}
	if got := cap(growBody(buf, 64<<20)); got != 8*(16<<10) {
		t.Errorf("64 MB announced, 16 KB arrived: room for %d, want %d", got, 8*(16<<10))
	}
	if got := cap(growBody(buf, -1)); got != 2*(16<<10) {
		t.Errorf("unannounced: room for %d, want %d", got, 2*(16<<10))
	}
	grown := growBody([]byte("abc"), 10)
	if string(grown) != "abc" {
		t.Errorf("grown buffer holds %q, want %q", grown, "abc")
	}
}

// A body whose first bytes arrived in the reused first buffer owns its
// bytes: one announced longer than it is, and one past the first buffer,
// keep what was sent while later bodies are read.
func TestReadBodyOwnsItsBytes(t *testing.T) {
	s := New(Config{})
	var kept [][]byte
	var sent [][]byte
	for i, n := range []int{1000, 20 << 10, 3000, 40 << 10} {
		b := bytes.Repeat([]byte{byte('a' + i)}, n)
		r := httptest.NewRequest("POST", "/v1/chat/completions", bytes.NewReader(b))
		if n < 16<<10 {
			r.ContentLength = 100 << 10 // announced longer than sent
		}
		body, held, err := s.readBody(httptest.NewRecorder(), r)
		if err != nil {
			t.Fatalf("%d bytes: %v", n, err)
		}
		s.Unhold(held)
		kept, sent = append(kept, body), append(sent, b)
	}
	for i := range kept {
		if !bytes.Equal(kept[i], sent[i]) {
			t.Errorf("body %d changed after later reads", i)
		}
	}
}
