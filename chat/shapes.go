package chat

import (
	"github.com/gwlabs/gateway/proxy"
	"github.com/gwlabs/gateway/shape"
)

// shapeOf is the shape of the request's endpoint.
func (s *Lifecycle) shapeOf(in *proxy.Inbound) shape.Shape { return s.cfg.Shapes.Get(in.Endpoint) }

// stateOf is the conversation state the request's shape uses.
func stateOf(sh shape.Shape) shape.State {
	if st, ok := sh.(shape.Stateful); ok {
		return st.State()
	}
	return shape.State{}
}

// unoptimized is the edit that makes a native answer echo the caller's
// request, where the optimizer changed it and the shape echoes it; nil
// otherwise.
func unoptimized(sh shape.Shape, x *proxy.Exchange, stream bool) func([]byte) []byte {
	e, ok := sh.(shape.Echoer)
	if !ok || !x.Optimized {
		return nil
	}
	return e.Unoptimized(x.Inbound().Body, stream)
}
