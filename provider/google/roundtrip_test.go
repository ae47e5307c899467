package google

import (
	"encoding/json"
	"strings"
	"testing"

	gw "github.com/gwlabs/gateway"
	"github.com/gwlabs/gateway/shape/gemini"
)

func TestToolCallIDRoundTrip(t *testing.T) {
	tests := []struct {
		name, core, sig, wantID string
	}{
		{"no signature", "call_1", "", "call_1"},
		{"canonical base64 is re-encoded url-safe", "call_1", "+/+/AA==", "call_1_gts_-_-_AA"},
		{"other text is kept verbatim", "abc", "not base64!", "abc_gtr_bm90IGJhc2U2NCE"},
		{"the sentinel itself", "x", SkipSignature, "x_gtr_" + "c2tpcF90aG91Z2h0X3NpZ25hdHVyZV92YWxpZGF0b3I"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			id := ToolCallID(tt.core, tt.sig)
			if id != tt.wantID {
				t.Errorf("ToolCallID = %q, want %q", id, tt.wantID)
			}
			for _, c := range id {
				if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
					t.Fatalf("id %q has %q, outside ^[a-zA-Z0-9_-]+$", id, c)
				}
			}
			core, sig := SplitToolCallID(id)
			if core != tt.core || sig != tt.sig {
				t.Errorf("SplitToolCallID = %q, %q; want %q, %q", core, sig, tt.core, tt.sig)
			}
		})
	}
}

func TestSplitToolCallIDLeavesForeignIDsAlone(t *testing.T) {
	for _, id := range []string{"call_abc123", "toolu_01A09q90qw90lq917835lq9", "_gts_QUE", "x_gts_", "x_gts_!!", "a_gtr_"} {
		if core, sig := SplitToolCallID(id); core != id || sig != "" {
			t.Errorf("SplitToolCallID(%q) = %q, %q", id, core, sig)
		}
	}
}

// nextTurn builds the follow-up request a client sends after resp: the
// assistant turn as the client replays it, then one result per tool call.
// A Chat Completions client keeps only text, tool-call ids, names and
// arguments; a Messages client replays every block with its signature.
func nextTurn(resp *gw.Response, model string, chatCompletions bool) *gw.Request {
	var asst, results []gw.Part
	for _, p := range resp.Content {
		switch {
		case chatCompletions && p.Type == gw.PartThinking:
			continue // reasoning_content is not replayed
		case chatCompletions && p.Type == gw.PartToolCall:
			asst = append(asst, gw.Part{Type: p.Type, ToolCallID: p.ToolCallID, ToolName: p.ToolName, Arguments: p.Arguments})
		default:
			asst = append(asst, p)
		}
		if p.Type == gw.PartToolCall {
			results = append(results, gw.Part{Type: gw.PartToolResult, ToolCallID: p.ToolCallID, Content: []gw.Part{{Type: gw.PartText, Text: "ok " + p.ToolName}}})
		}
	}
	// Chat Completions tool messages arrive one per result, in reverse here.
	var msgs []gw.Message
	msgs = append(msgs, gw.Message{Role: gw.RoleUser, Content: []gw.Part{{Type: gw.PartText, Text: "go"}}}, gw.Message{Role: gw.RoleAssistant, Content: asst})
	if chatCompletions {
		for i := len(results) - 1; i >= 0; i-- {
			msgs = append(msgs, gw.Message{Role: gw.RoleUser, Content: []gw.Part{results[i]}})
		}
	} else {
		msgs = append(msgs, gw.Message{Role: gw.RoleUser, Content: results})
	}
	return &gw.Request{Model: model, Messages: msgs, Tools: []gw.Tool{{Name: "get_weather"}, {Name: "get_time"}}}
}

// TestSignaturesSurviveClientReplay is the multi-turn tool loop through
// both client shapes, stream and not: Gemini's signatures come back on the
// same functionCall parts, calls and responses keep their order and ids.
func TestSignaturesSurviveClientReplay(t *testing.T) {
	answer := `{"candidates":[{"content":{"role":"model","parts":[
		{"text":"thinking...","thought":true,"thoughtSignature":"VEhPVUdIVA=="},
		{"text":"Checking.","thoughtSignature":"VEVYVA=="},
		{"functionCall":{"name":"get_weather","args":{"city":"Paris"}},"thoughtSignature":"RkMx/+8="},
		{"functionCall":{"name":"get_time","args":{}}}]},"finishReason":"STOP"}],"responseId":"r"}`
	stream := "data: " + strings.ReplaceAll(strings.ReplaceAll(answer, "\n", ""), "\t", "") + "\r\n\r\n"
	decoders := map[string]func(t *testing.T) *gw.Response{
		"response": func(t *testing.T) *gw.Response {
			r, err := DecodeResponse([]byte(answer))
			if err != nil {
				t.Fatal(err)
			}
			return r
		},
		"stream": func(t *testing.T) *gw.Response {
			var events []gw.Event
			d := NewStreamDecoder(nopCloser(stream))
			for {
				ev, err := d.Recv()
				if err != nil {
					break
				}
				events = append(events, ev)
			}
			var r gw.Response
			if err := collect(events, &r); err != nil {
				t.Fatal(err)
			}
			return &r
		},
	}
	for dname, decode := range decoders {
		for _, cc := range []bool{true, false} {
			client := "messages"
			if cc {
				client = "chat_completions"
			}
			t.Run(dname+"/"+client, func(t *testing.T) {
				resp := decode(t)
				if resp.StopReason != gw.StopToolUse {
					t.Fatalf("stop = %s", resp.StopReason)
				}
				body, err := EncodeRequest(nextTurn(resp, "gemini-3-pro", cc))
				if err != nil {
					t.Fatal(err)
				}
				var req genRequest
				if err := json.Unmarshal(body, &req); err != nil {
					t.Fatal(err)
				}
				model := req.Contents[1]
				var calls []outPart
				var thought, text *outPart
				for i, p := range model.Parts {
					switch {
					case p.FunctionCall != nil:
						calls = append(calls, p)
					case p.Thought:
						thought = &model.Parts[i]
					case p.Text != nil:
						text = &model.Parts[i]
					}
				}
				if len(calls) != 2 || calls[0].ThoughtSignature != "RkMx/+8=" || calls[1].ThoughtSignature != "" {
					t.Errorf("calls = %+v, want the first signed RkMx/+8= and the second unsigned", calls)
				}
				if cc {
					if thought != nil || text == nil || text.ThoughtSignature != "" {
						t.Errorf("chat completions replay: thought %+v, text %+v", thought, text)
					}
				} else {
					if thought == nil || thought.ThoughtSignature != "VEhPVUdIVA==" || *thought.Text != "thinking..." {
						t.Errorf("thought part = %+v", thought)
					}
					if text == nil || text.ThoughtSignature != "VEVYVA==" {
						t.Errorf("text part = %+v, want signature VEVYVA== back on it", text)
					}
				}
				user := req.Contents[2]
				if len(user.Parts) != 2 || user.Parts[0].FunctionResponse.Name != "get_weather" || user.Parts[1].FunctionResponse.Name != "get_time" {
					t.Fatalf("responses = %s", body)
				}
				for i := range 2 {
					if user.Parts[i].FunctionResponse.ID != calls[i].FunctionCall.ID || calls[i].FunctionCall.ID == "" {
						t.Errorf("response %d id %q, call id %q", i, user.Parts[i].FunctionResponse.ID, calls[i].FunctionCall.ID)
					}
				}
			})
		}
	}
}

func nopCloser(s string) *strReadCloser { return &strReadCloser{Reader: strings.NewReader(s)} }

type strReadCloser struct{ *strings.Reader }

func (strReadCloser) Close() error { return nil }

func TestUsageGolden(t *testing.T) {
	c := func(n int64) *gw.Count { return &gw.Count{N: n, Valid: true} }
	u := usageOf(&gemini.UsageMetadata{PromptTokenCount: c(20), CandidatesTokenCount: c(198), ThoughtsTokenCount: c(405), TotalTokenCount: c(623)})
	if u.OutputTokens != 603 || u.ReasoningTokens != 405 || u.PromptTokens()+u.OutputTokens != 623 {
		t.Errorf("usage = %+v", u)
	}
	// Issue 19.6: cached above the prompt is clamped to the prompt and
	// flagged (it was billed as 30 cached tokens).
	u = usageOf(&gemini.UsageMetadata{PromptTokenCount: c(10), CachedContentTokenCount: c(30)})
	if u.InputTokens != 0 || u.CacheReadTokens != 10 || !u.Clamped {
		t.Errorf("cached above prompt must clamp to the prompt: %+v", u)
	}
	// Issue 29 item 5: negative, float, string or no counts at all are
	// malformed (billed from the gateway's own count), never 0.
	for _, raw := range []string{`{"promptTokenCount":-5,"candidatesTokenCount":7}`, `{"promptTokenCount":1.5}`, `{"promptTokenCount":"12"}`, `{}`, `{"candidatesTokenCount":1e3}`} {
		var m gemini.UsageMetadata
		if err := json.Unmarshal([]byte(raw), &m); err != nil {
			t.Fatalf("%s: %v", raw, err)
		}
		if u := usageOf(&m); !u.Malformed || u.Reported {
			t.Errorf("%s: %+v, want malformed and not reported", raw, u)
		}
	}
}
