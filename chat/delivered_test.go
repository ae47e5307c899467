package chat

import (
	"context"
	"testing"
)

// Item 7: an answer that finished after the shutdown grace was noted
// abandoned although it was delivered and charged.
func TestAnsweredNote(t *testing.T) {
	if n := answeredNote(context.Background()); n != "" {
		t.Fatalf("a live request: %q", n)
	}
	left, cancel := context.WithCancel(context.Background())
	cancel()
	if n := answeredNote(left); n != "abandoned" {
		t.Fatalf("the caller left: %q", n)
	}
	cut, stop := context.WithCancelCause(context.Background())
	stop(ErrShutdown)
	if n := answeredNote(cut); n != NoteAfterGrace {
		t.Fatalf("the grace ran out: %q, want %q", n, NoteAfterGrace)
	}
}
