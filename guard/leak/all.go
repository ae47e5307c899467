package leak

// Checker reads one answer: a Matcher, or several read together (All).
type Checker interface {
	// Write reads the next piece of the answer and returns how many of
	// its bytes so far can be released, and the leak once found.
	Write(p []byte) (release int64, leak *Leak)
	// Close ends the answer (see Matcher.Close).
	Close() (release int64, leak *Leak)
}

// All reads an answer with every matcher in ms (the cached protected
// text, a request's canary): a leak of any is the answer's, and only
// what all can release is released. It returns nil for none and the
// Matcher itself for one.
func All(ms ...*Matcher) Checker {
	switch len(ms) {
	case 0:
		return nil
	case 1:
		return ms[0]
	}
	return all(ms)
}

type all []*Matcher

func (a all) Write(p []byte) (int64, *Leak) {
	return a.each(func(m *Matcher) (int64, *Leak) { return m.Write(p) })
}

func (a all) Close() (int64, *Leak) { return a.each((*Matcher).Close) }

func (a all) each(f func(*Matcher) (int64, *Leak)) (int64, *Leak) {
	rel := int64(-1)
	for _, m := range a {
		r, l := f(m)
		if l != nil {
			return r, l
		}
		if rel < 0 || r < rel {
			rel = r
		}
	}
	return rel, nil
}

var _ Checker = (*Matcher)(nil)
