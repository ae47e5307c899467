package main

import (
	"fmt"
	"net/http"
	"sync/atomic"

	"github.com/gwlabs/gateway/internal/agentbody"
)

// Agent-shaped load: the turns of coding agents (a long system prompt,
// 18 tools, rounds of tool calls and file-sized results, streamed), each
// turn the whole history again plus a new round, as agents send them.

// agentConversations is how many conversations a run's turns go round;
// each makes agentTurns turns, so a run sends agentConversations x
// agentTurns distinct bodies before any repeats.
const (
	agentConversations = 8
	agentTurns         = 16
)

// agentRoute is the ingress of an agent shape: the path, the model as
// the gateway is asked for it, and as the vendor is.
func agentRoute(shape string) (path, gatewayModel, vendorModel string) {
	switch shape {
	case "M":
		return "/v1/messages", "anthropic/claude-sonnet-5-5", "claude-sonnet-5-5"
	case "R":
		return "/v1/responses", "openai/gpt-6-sol", "gpt-6-sol"
	}
	return "/v1/chat/completions", "openai/gpt-6-sol", "gpt-6-sol"
}

// agentRequests returns the request supplier of an agent scenario for a
// target: key "" is the floor (the vendor's own model name and key).
// salt makes the conversations differ from other runs' (no cache of the
// target has seen them). Request n is turn n/agentConversations (round
// the turns) of conversation n%agentConversations: every conversation
// moves on by one turn in each pass.
func agentRequests(shape string, kb int, key, salt string) func(bool) (string, http.Header, []byte) {
	path, model, vendorModel := agentRoute(shape)
	auth := "Bearer " + key
	if key == "" {
		model, auth = vendorModel, "Bearer mock"
	}
	bodies := make([][]byte, 0, agentConversations*agentTurns)
	convs := make([]*agentbody.Conversation, agentConversations)
	for c := range convs {
		convs[c] = agentbody.New(shape, model, kb<<10, fmt.Sprintf("%s-%d", salt, c), agentTurns)
	}
	for t := range agentTurns {
		for _, c := range convs {
			bodies = append(bodies, c.Body(t))
		}
	}
	var n atomic.Int64
	return func(bool) (string, http.Header, []byte) {
		i := int(n.Add(1)-1) % len(bodies)
		h := http.Header{"Content-Type": {"application/json"}, "Authorization": {auth}}
		return path, h, bodies[i]
	}
}
