package proxy_test

import (
	"github.com/gwlabs/gateway/optimize"
	"github.com/gwlabs/gateway/provider/anthropic"
	"github.com/gwlabs/gateway/provider/openai"
	"github.com/gwlabs/gateway/proxy"
)

// The pass-through providers and the optimizer edit the caller's body in
// place of copying it (see proxy.PassThroughEditor).
var (
	_ proxy.PassThroughEditor          = (*openai.Provider)(nil)
	_ proxy.ResponsesPassThroughEditor = (*openai.Provider)(nil)
	_ proxy.CacheKeyEditor             = (*openai.Provider)(nil)
	_ proxy.PassThroughEditor          = (*anthropic.Provider)(nil)
	_ proxy.PrepareEditor              = (*optimize.Optimizer)(nil)
	_ proxy.ObjectPlacedCounter        = (*optimize.Optimizer)(nil)
)
