package chat

import (
	"github.com/gwlabs/gateway/convstate"
	"github.com/gwlabs/gateway/proxy"
)

// letGoBytes is the body size from which a stream lets go of its
// request once the vendor has answered: below it, what the request holds
// is less than the stream's own buffers.
const letGoBytes = 16 << 10

// letGo lets go of what a stream holds of its request once the vendor
// has answered and the stream's writer is made (it has read what it
// echoes of the body): the guard's text, the vendor bodies and the
// canonical form (proxy.Exchange.LetGo), and the caller's body unless
// something later in the stream reads it (bodyReadLater), its prompt
// estimate kept first (Inbound.BodyTokens). An agent's turn of 110 KB
// would otherwise be held three times over for the stream's whole life.
func (s *Lifecycle) letGo(x *proxy.Exchange) {
	in := x.Inbound()
	if len(in.Body) < letGoBytes {
		return
	}
	body := !s.bodyReadLater(x)
	if body {
		in.BodyTokens = promptEstimate(in)
	}
	x.LetGo(body)
}

// bodyReadLater reports whether a stream reads the caller's body once it
// has begun: a native Responses answer marks its owner unless the
// caller said "store": false (markOwner), a native Messages answer in a
// vendor-kept thread is remembered for the thread (rememberNative).
func (s *Lifecycle) bodyReadLater(x *proxy.Exchange) bool {
	in := x.Inbound()
	if s.cfg.State == nil || !x.Native() {
		return false
	}
	st := stateOf(s.shapeOf(in))
	if st.KeptResponses {
		return true
	}
	if st.Threads {
		t, err := convstate.DecodeThread(in.Body)
		return err == nil && t != nil
	}
	return false
}
