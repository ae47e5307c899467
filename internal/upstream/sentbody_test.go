package upstream

import (
	"bytes"
	"io"
	"testing"
)

// TestSentBodyLetsGo: the transport's reader gives the body whole and
// then holds none of it; a resend's copy is had until the answer only.
func TestSentBodyLetsGo(t *testing.T) {
	b := bytes.Repeat([]byte("0123456789"), 5000)
	s := newSentBody(b)
	r := s.open()
	got, err := io.ReadAll(r)
	if err != nil || !bytes.Equal(got, b) {
		t.Fatalf("read %d bytes, %v; want %d", len(got), err, len(b))
	}
	if or := r.(*onceReader); or.b != nil {
		t.Errorf("the reader holds %d bytes at its end", len(or.b))
	}
	again, err := s.reopen()
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := io.ReadAll(again); !bytes.Equal(got, b) {
		t.Errorf("a resend read %d bytes, want %d", len(got), len(b))
	}
	half := s.open()
	_, _ = half.Read(make([]byte, 100))
	_ = half.Close()
	if or := half.(*onceReader); or.b != nil {
		t.Errorf("a closed reader holds %d bytes", len(or.b))
	}
	s.answered()
	if s.b != nil {
		t.Error("the body is held after the answer")
	}
	if _, err := s.reopen(); err == nil {
		t.Error("a resend after the answer got a body")
	}
}
