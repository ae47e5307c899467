package chat

import (
	"github.com/gwlabs/gateway/proxy"
	"github.com/gwlabs/gateway/shape"
)

// letGoBytes is the body size from which a stream lets go of its
// request once the vendor has answered: below it, what the request holds
// is less than the stream's own buffers.
const letGoBytes = 16 << 10

// letGo lets go of what a stream holds of its request once the vendor
// has answered and the stream's writer is made (it has read what it
// echoes of the body): the guard's text, the vendor bodies and the
// canonical form (proxy.Exchange.LetGo), and the caller's body
// (letGoBody). An agent's turn of 110 KB would otherwise be held three
// times over for the stream's whole life.
func (s *Lifecycle) letGo(x *proxy.Exchange) {
	if len(x.Body) < letGoBytes && len(x.Inbound().Body) < letGoBytes {
		return
	}
	x.LetGo()
	s.letGoBody(x)
}

// letGoBody lets go of the caller's body of a stream unless something
// later in the stream reads it (bodyReadLater), its prompt estimate kept
// first (Inbound.BodyTokens). A stream whose models all speak its shape
// does so before the vendor call (see Serve): its vendor bodies are made,
// and only the estimates read the caller's body after.
func (s *Lifecycle) letGoBody(x *proxy.Exchange) {
	in := x.Inbound()
	if len(in.Body) < letGoBytes || s.bodyReadLater(x) {
		return
	}
	in.BodyTokens = promptEstimate(in)
	x.LetGoBody()
	if in.Body != nil {
		// Kept (the guard reads it): the estimate is made from it.
		in.BodyTokens = 0
	}
}

// bodyReadLater reports whether a stream reads the caller's body once it
// has begun: a Responses answer's echo of the caller's instructions
// (unoptimized), and, where client state is kept, a native Responses
// answer marks its owner unless the caller said "store": false
// (markOwner), and a native Messages answer in a vendor-kept thread is
// remembered for the thread (rememberNative). A mapped answer's encoder
// reads it too, before letGo runs (answerMeta).
func (s *Lifecycle) bodyReadLater(x *proxy.Exchange) bool {
	in := x.Inbound()
	sh := s.shapeOf(in)
	if _, echoes := sh.(shape.Echoer); echoes {
		return true
	}
	if s.cfg.State == nil {
		return false
	}
	st := stateOf(sh)
	if st.KeptResponses {
		return true
	}
	if st.Threads {
		t, err := threadOf(in)
		return err == nil && t != nil
	}
	return false
}
