package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/gwlabs/gateway/internal/agentbody"
	"github.com/gwlabs/gateway/internal/app"
	"github.com/gwlabs/gateway/internal/rawjson"
)

// BenchmarkAgentTurn is one coding-agent turn through the whole gateway
// (the handler called in process: parse, auth, routing, guard, limits,
// hold, vendor body, stream relay, settle on SQLite) against an
// in-process vendor, beside a bare reverse proxy (floor), with
// agent-shaped bodies of 20, 110 and 250 KB (a long system
// prompt, 18 tools, rounds of tool calls and file-sized results):
//
//	first     a conversation's first turn (nothing of it seen before)
//	followup  the next turn of a conversation whose previous turn was
//	          just served (the history again plus one round)
//
// with the guard on and off (off: the guard's share left out).
// cpu-us/op is the process's CPU time per timed turn (the fake vendor's
// included). Run: go test -run '^$' -bench AgentTurn -benchmem ./e2e/
func BenchmarkAgentTurn(b *testing.B) {
	// A vendor that streams at once and reads no more of the body than
	// its model (the fake vendors decode the whole body for every event).
	vendor := httptest.NewServer(http.HandlerFunc(streamingVendor))
	b.Cleanup(vendor.Close)
	vu, _ := url.Parse(vendor.URL)
	for _, target := range []string{"floor", "guard=on", "guard=off"} {
		b.Run(target, func(b *testing.B) {
			// The floor: a bare reverse proxy in front of the same vendor,
			// sent the same bodies with the vendor's model names.
			var h http.Handler = httputil.NewSingleHostReverseProxy(vu)
			key := ""
			if target != "floor" {
				m, _, k := startBenchGateway(b, filepath.Join(b.TempDir(), "bench.db"), true, func(c *app.Config) {
					c.Guard = target == "guard=on"
					c.Vendors["openai"] = app.VendorConfig{BaseURL: vendor.URL + "/v1", APIKey: "k"}
					c.Vendors["anthropic"] = app.VendorConfig{BaseURL: vendor.URL, APIKey: "k"}
				})
				h, key = m.Handler(), k
			}
			for _, shape := range []string{"C", "M", "R"} {
				path, vendorModel, prefix := "/v1/chat/completions", nativeModels["openai"], "openai/"
				switch shape {
				case "M":
					path, vendorModel, prefix = "/v1/messages", nativeModels["anthropic"], "anthropic/"
				case "R":
					path = "/v1/responses"
				}
				model := prefix + vendorModel
				if target == "floor" {
					model = vendorModel
				}
				for _, kb := range []int{20, 110, 250} {
					conv := agentbody.New(shape, model, kb<<10, benchSalt(0), 2)
					first, next := conv.Body(0), conv.Body(1)
					for _, turn := range []string{"first", "followup"} {
						b.Run(fmt.Sprintf("%s/%dKB/%s", shape, kb, turn), func(b *testing.B) {
							b.SetBytes(int64(len(next)))
							b.ReportAllocs()
							var cpu int64
							i := 0
							for b.Loop() {
								i++
								salt := []byte(benchSalt(i + len(path)*1000 + kb*1_000_000))
								if turn == "followup" {
									b.StopTimer()
									agentTurn(b, h, key, path, bytes.ReplaceAll(first, []byte(benchSalt(0)), salt))
									body := bytes.ReplaceAll(next, []byte(benchSalt(0)), salt)
									b.StartTimer()
									c0 := processCPU()
									agentTurn(b, h, key, path, body)
									cpu += processCPU() - c0
									continue
								}
								body := bytes.ReplaceAll(first, []byte(benchSalt(0)), salt)
								c0 := processCPU()
								agentTurn(b, h, key, path, body)
								cpu += processCPU() - c0
							}
							b.ReportMetric(float64(cpu)/float64(b.N), "cpu-us/op")
						})
					}
				}
			}
		})
	}
}

// streamingVendor answers every request with a 20-event stream of the
// vendor's shape.
func streamingVendor(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Model string `json:"model"`
	}
	body, _ := io.ReadAll(r.Body)
	_ = json.Unmarshal(rawjson.Get(body, "model"), &req.Model)
	w.Header().Set("Content-Type", "text/event-stream")
	f, _ := w.(http.Flusher)
	ev := func(name, data string) {
		if name != "" {
			fmt.Fprintf(w, "event: %s\n", name)
		}
		fmt.Fprintf(w, "data: %s\n\n", data)
		if f != nil {
			f.Flush()
		}
	}
	const n, word = 20, "word "
	mq := strconv.Quote(req.Model)
	switch r.URL.Path {
	case "/v1/messages":
		ev("message_start", `{"type":"message_start","message":{"id":"msg_b","type":"message","role":"assistant","model":`+mq+`,"content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":12,"output_tokens":1}}}`)
		ev("content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`)
		for range n {
			ev("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"`+word+`"}}`)
		}
		ev("content_block_stop", `{"type":"content_block_stop","index":0}`)
		ev("message_delta", `{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":20}}`)
		ev("message_stop", `{"type":"message_stop"}`)
	case "/v1/responses":
		head := `"id":"resp_b","object":"response","created_at":1700000000,"model":` + mq
		ev("response.created", `{"type":"response.created","sequence_number":0,"response":{`+head+`,"status":"in_progress","output":[]}}`)
		ev("response.output_item.added", `{"type":"response.output_item.added","sequence_number":1,"output_index":0,"item":{"type":"message","id":"msg_b","status":"in_progress","role":"assistant","content":[]}}`)
		ev("response.content_part.added", `{"type":"response.content_part.added","sequence_number":2,"item_id":"msg_b","output_index":0,"content_index":0,"part":{"type":"output_text","text":"","annotations":[]}}`)
		for i := range n {
			ev("response.output_text.delta", fmt.Sprintf(`{"type":"response.output_text.delta","sequence_number":%d,"item_id":"msg_b","output_index":0,"content_index":0,"delta":"%s"}`, 3+i, word))
		}
		t := strconv.Quote(strings.Repeat(word, n))
		item := `{"type":"message","id":"msg_b","status":"completed","role":"assistant","content":[{"type":"output_text","text":` + t + `,"annotations":[]}]}`
		ev("response.output_text.done", `{"type":"response.output_text.done","sequence_number":23,"item_id":"msg_b","output_index":0,"content_index":0,"text":`+t+`}`)
		ev("response.output_item.done", `{"type":"response.output_item.done","sequence_number":24,"output_index":0,"item":`+item+`}`)
		ev("response.completed", `{"type":"response.completed","sequence_number":25,"response":{`+head+`,"status":"completed","output":[`+item+`],"usage":{"input_tokens":12,"output_tokens":20,"total_tokens":32}}}`)
	default:
		head := `{"id":"chatcmpl-b","object":"chat.completion.chunk","created":1700000000,"model":` + mq
		for i := range n {
			d := `{"content":"` + word + `"}`
			if i == 0 {
				d = `{"role":"assistant","content":"` + word + `"}`
			}
			ev("", head+`,"choices":[{"index":0,"delta":`+d+`,"finish_reason":null}]}`)
		}
		ev("", head+`,"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`)
		ev("", head+`,"choices":[],"usage":{"prompt_tokens":12,"completion_tokens":20,"total_tokens":32}}`)
		ev("", "[DONE]")
	}
}

// benchSalt is a conversation's mark, the same length for every i.
func benchSalt(i int) string { return fmt.Sprintf("s%07d", i%10_000_000) }

// agentTurn sends body to handler h (key "": no key) and reads the
// stream.
func agentTurn(b *testing.B, h http.Handler, key, path string, body []byte) {
	req := httptest.NewRequest(http.MethodPost, path, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), "data:") && !strings.Contains(rec.Body.String(), "event:") {
		b.Fatalf("%s: %d %.300s", path, rec.Code, rec.Body.String())
	}
}
