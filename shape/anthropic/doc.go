// Package anthropic maps the Anthropic Messages wire shape ("M") to and
// from the gateway's canonical chat types.
package anthropic
