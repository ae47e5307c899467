// Package pairtest holds the cross-shape golden tests: a caller of one
// shape and a vendor of the other, composed from package
// shape/anthropic and package shape/openai the way the server composes
// them. Each case in testdata is a txtar archive holding the caller's
// request, the vendor request the gateway sends, the vendor's answer
// (a body and/or a stream) and what the caller gets back. The package
// has no code of its own; see pair_test.go.
package pairtest
