package leak

import (
	"strings"
	"testing"
)

// A matcher closed without a leak gives its tracks' buffers to the next
// matcher: every form is found the same on recycled buffers (left dirty
// by answers that opened candidates) as on fresh ones, and a matcher
// written after its Close does not disturb the one that got its
// buffers.
func TestRecycledBuffersFindTheSame(t *testing.T) {
	s := New(Protected{Texts: []string{system}})
	drain := func() {
		for {
			select {
			case <-freeBufs:
			default:
				return
			}
		}
	}
	type found struct {
		form        string
		words       int
		at          int64
		rel, closed int64
	}
	read := func(m *Matcher, answer string) found {
		var f found
		for i := 0; i < len(answer); i += 7 {
			r, l := m.Write([]byte(answer[i:min(i+7, len(answer))]))
			f.rel = r
			if l != nil {
				return found{form: l.Form, words: l.Words, at: l.At, rel: r}
			}
		}
		r, l := m.Close()
		if l != nil {
			return found{form: l.Form, words: l.Words, at: l.At, rel: r, closed: 1}
		}
		f.closed = r
		return f
	}
	// Most of a protected sentence, then something else: candidates
	// open and die, leaving the buffers written.
	near := strings.Join(strings.Fields(system)[:MaxWords], " ") + " and then something else entirely. "
	for name, form := range forms {
		answer := form(system)
		drain()
		want := read(s.NewMatcher(), answer)
		if want.form == "" {
			t.Fatalf("%s: no leak found on fresh buffers", name)
		}
		// Dirty buffers in the free list.
		for range 8 {
			m := s.NewMatcher()
			if f := read(m, strings.Repeat(form(near), 3)); f.form != "" {
				t.Fatalf("%s: the near miss leaked (%s)", name, f.form)
			}
			if m.bufs != nil {
				t.Fatalf("%s: a clean close kept its buffers", name)
			}
			// Written after its Close: its own buffers, not the list's.
			m.Write([]byte(form(near)))
		}
		if got := read(s.NewMatcher(), answer); got != want {
			t.Errorf("%s: recycled buffers found %+v, fresh ones %+v", name, got, want)
		}
		// The matcher that closed and gave its buffers away keeps
		// writing while the next one, on those buffers, reads a leak.
		done := s.NewMatcher()
		read(done, ordinary)
		next := s.NewMatcher()
		junk := form(near) + form(system)
		var got found
		for i := 0; ; i += 7 {
			done.Write([]byte(junk[i%len(junk) : min(i%len(junk)+7, len(junk))]))
			if i >= len(answer) {
				r, l := next.Close()
				got = found{rel: r, closed: r}
				if l != nil {
					got = found{form: l.Form, words: l.Words, at: l.At, rel: r, closed: 1}
				}
				break
			}
			r, l := next.Write([]byte(answer[i:min(i+7, len(answer))]))
			got.rel = r
			if l != nil {
				got = found{form: l.Form, words: l.Words, at: l.At, rel: r}
				break
			}
		}
		if got != want {
			t.Errorf("%s: beside a matcher written after its close, found %+v, want %+v", name, got, want)
		}
	}
}
