package server

import (
	"strconv"
	"strings"
	"testing"

	gw "github.com/gwlabs/gateway"
)

// benchBody is a messages body of about n bytes: a system prompt, turns
// of prose, a tool call and its result.
func benchBody(n int) []byte {
	turn := strings.Repeat("The quarterly report shows revenue growth of 12% across all regions. ", 14) // ~1 KB
	var b strings.Builder
	b.WriteString(`{"model":"anthropic/claude-sonnet-5-5","max_tokens":1024,"stream":true,"system":"You are a helpful assistant.","messages":[`)
	for i := 0; b.Len() < n-2048; i++ {
		role := "user"
		if i%2 == 1 {
			role = "assistant"
		}
		b.WriteString(`{"role":"` + role + `","content":[{"type":"text","text":` + strconv.Quote(turn) + `}]},`)
	}
	b.WriteString(`{"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"read","input":{"path":"a.go"}}]},`)
	b.WriteString(`{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"package main"}]}]}`)
	return []byte(b.String())
}

// BenchmarkReadRequest: everything the gateway parses of a body before
// the vendor call (validation, routing fields and the guard's text).
func BenchmarkReadRequest(b *testing.B) {
	for _, n := range []int{1 << 10, 8 << 10, 64 << 10, 1 << 20} {
		body := benchBody(n)
		b.Run(strconv.Itoa(n>>10)+"KB", func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			for b.Loop() {
				p, err := parseEnvelope(gw.ShapeM, body)
				if err != nil || len(p.Text) == 0 {
					b.Fatal(err)
				}
			}
		})
	}
}
