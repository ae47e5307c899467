package server

import (
	gw "github.com/gwlabs/gateway"
	"github.com/gwlabs/gateway/shape"
	anthropicshape "github.com/gwlabs/gateway/shape/anthropic"
	geminishape "github.com/gwlabs/gateway/shape/gemini"
	openaishape "github.com/gwlabs/gateway/shape/openai"
	"github.com/gwlabs/gateway/shape/responses"
)

// shapes are the ingress shapes the gateway serves. Adding one is its
// package (a shape.Shape) and a line here.
var shapes = shape.NewRegistry(
	anthropicshape.Shape{},
	openaishape.Shape{},
	responses.Shape{},
	geminishape.Shape{},
)

// plain answers the endpoints of no shape (health, balance, admin,
// unknown paths): the C envelope.
var plain shape.Shape = openaishape.Shape{}

// The shapes that serve endpoints beyond their chat path (token counts,
// model lists, kept responses) answer those in their envelope.
var (
	mShape = shapes.Get(gw.ShapeM)
	rShape = shapes.Get(gw.ShapeR)
	gShape = shapes.Get(gw.ShapeG)
)
