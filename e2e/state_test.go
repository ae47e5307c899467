package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/anthropics/anthropic-sdk-go"
	gw "github.com/gwlabs/gateway"
	"github.com/gwlabs/gateway/fakevendor"
	"github.com/gwlabs/gateway/internal/app"
	"github.com/gwlabs/gateway/route"
	"github.com/gwlabs/gateway/sse"
	"github.com/openai/openai-go/v3"
)

// Client state the gateway keeps on mapped routes (package convstate):
// message threads on /v1/messages and DeepSeek reasoning, end to end
// through real HTTP and the fake vendors, on both stores.

const threadBeta = "message-threads-2026-08-12"

// mAnswer is what a test reads of a Messages answer, streamed or not.
type mAnswer struct {
	status     int
	id         string
	stopReason string
	text       string
	toolUseIDs []string
	raw        []byte
}

// postThread sends a Messages request with the threads beta header, as
// Anthropic's SDKs do, and reads the answer.
func (e *env) postThread(t *testing.T, key string, body []byte, stream bool) mAnswer {
	t.Helper()
	resp := e.post("/v1/messages", key, body, "anthropic-beta", threadBeta, "anthropic-version", "2023-06-01")
	raw := readAll(t, resp.Body)
	a := mAnswer{status: resp.StatusCode, raw: raw}
	if resp.StatusCode != http.StatusOK {
		return a
	}
	type block struct {
		Type string `json:"type"`
		ID   string `json:"id"`
		Text string `json:"text"`
	}
	if !stream {
		var m struct {
			ID         string  `json:"id"`
			StopReason string  `json:"stop_reason"`
			Content    []block `json:"content"`
		}
		if err := json.Unmarshal(raw, &m); err != nil {
			t.Fatalf("answer: %v: %s", err, raw)
		}
		a.id, a.stopReason = m.ID, m.StopReason
		for _, b := range m.Content {
			switch b.Type {
			case "text":
				a.text += b.Text
			case "tool_use":
				a.toolUseIDs = append(a.toolUseIDs, b.ID)
			}
		}
		return a
	}
	rd := sse.NewReader(bytes.NewReader(raw))
	for rd.Next() {
		ev := rd.Event()
		if ev.Data == nil {
			continue
		}
		var m struct {
			Type    string `json:"type"`
			Message struct {
				ID string `json:"id"`
			} `json:"message"`
			ContentBlock block `json:"content_block"`
			Delta        struct {
				Type       string `json:"type"`
				Text       string `json:"text"`
				StopReason string `json:"stop_reason"`
			} `json:"delta"`
		}
		if err := json.Unmarshal(ev.Data, &m); err != nil {
			t.Fatalf("event: %v: %s", err, ev.Data)
		}
		switch m.Type {
		case "message_start":
			a.id = m.Message.ID
		case "content_block_start":
			if m.ContentBlock.Type == "tool_use" {
				a.toolUseIDs = append(a.toolUseIDs, m.ContentBlock.ID)
			}
		case "content_block_delta":
			if m.Delta.Type == "text_delta" {
				a.text += m.Delta.Text
			}
		case "message_delta":
			a.stopReason = m.Delta.StopReason
		case "error":
			t.Fatalf("stream error: %s", ev.Data)
		}
	}
	if err := rd.Err(); err != nil {
		t.Fatal(err)
	}
	return a
}

// threadCreate is the first turn of a thread: system, tools and a user
// message asking for a tool call.
func threadCreate(model string, stream bool) []byte {
	return []byte(fmt.Sprintf(`{"model":%q,"max_tokens":256,"stream":%v,
		"system":"You are terse. SYS-7f3e",
		"tools":[{"name":"get_time","description":"the time","input_schema":{"type":"object","properties":{"zone":{"type":"string"}},"required":["zone"]}}],
		"messages":[{"role":"user","content":"What time is it? ASK-91c2 [fake:tool]"}],
		"thread":{"type":"create"}}`, model, stream))
}

// threadContinue continues previous with messages only.
func threadContinue(model string, stream bool, previous, messages string) []byte {
	return []byte(fmt.Sprintf(`{"model":%q,"max_tokens":256,"stream":%v,"messages":%s,
		"thread":{"type":"continue","previous_message_id":%q}}`, model, stream, messages, previous))
}

func toolResult(id, text string) string {
	return fmt.Sprintf(`[{"role":"user","content":[{"type":"tool_result","tool_use_id":%q,"content":%q}]}]`, id, text)
}

// wantNotFound checks a thread_not_found answer in the Messages envelope.
func wantNotFound(t *testing.T, what string, a mAnswer) {
	t.Helper()
	var env struct {
		Type  string `json:"type"`
		Error struct {
			Type      string `json:"type"`
			Message   string `json:"message"`
			RequestID string `json:"request_id"`
			Details   struct {
				ErrorCode string `json:"error_code"`
			} `json:"details"`
		} `json:"error"`
	}
	if a.status != http.StatusNotFound || json.Unmarshal(a.raw, &env) != nil || env.Type != "error" ||
		env.Error.Type != "not_found" || env.Error.Details.ErrorCode != "thread_not_found" ||
		!strings.HasPrefix(env.Error.RequestID, "req_") || !strings.Contains(env.Error.Message, "previous_message_id") {
		t.Errorf("%s: status %d body %s; want 404 not_found with details.error_code thread_not_found", what, a.status, a.raw)
	}
}

// TestThreadsOnMappedRoutes: on every mapped vendor of /v1/messages, both
// stores, streamed and not: a thread is created (system, tools, a user
// turn that gets a tool call), continued with a lone tool_result (the
// vendor gets the whole conversation, tool call and signatures included,
// and answers from the tool result), and continued again from that
// answer; a continue of an unknown id, of another account's id, of an
// answer already continued, and a repeated system on continue are
// refused before any vendor call.
func TestThreadsOnMappedRoutes(t *testing.T) {
	for store, dbURL := range storesUnderTest(t) {
		t.Run(store, func(t *testing.T) {
			e := newEnv(t, func(c *app.Config) { c.DatabaseURL = dbURL })
			ctx := context.Background()
			other, _, err := createKey(ctx, e.m.Store(), fmt.Sprintf("threads-other-%d", time.Now().UnixNano()), 10*gw.USD)
			if err != nil {
				t.Fatal(err)
			}
			for _, v := range route.Vendors() {
				if v == "anthropic" {
					continue // native: the vendor keeps the thread (TestThreadsPassThroughToAnthropic)
				}
				model := v + "/" + nativeModels[v]
				for _, stream := range []bool{false, true} {
					t.Run(fmt.Sprintf("%s/stream=%v", v, stream), func(t *testing.T) {
						first := e.postThread(t, e.key, threadCreate(model, stream), stream)
						if first.status != 200 || first.stopReason != "tool_use" || len(first.toolUseIDs) != 1 || !strings.HasPrefix(first.id, "req_") {
							t.Fatalf("create: status %d stop %q tools %v id %q: %s", first.status, first.stopReason, first.toolUseIDs, first.id, first.raw)
						}
						second := e.postThread(t, e.key, threadContinue(model, stream, first.id, toolResult(first.toolUseIDs[0], "12:00 RESULT-5d1")), stream)
						if second.status != 200 || second.text != "Tool said: 12:00 RESULT-5d1" {
							t.Fatalf("continue: status %d text %q: %s", second.status, second.text, second.raw)
						}
						got := e.lastRequest().Body
						for _, want := range []string{"SYS-7f3e", "ASK-91c2", "get_time", "RESULT-5d1"} {
							if !bytes.Contains(got, []byte(want)) {
								t.Errorf("the vendor's continue request lacks %q:\n%s", want, got)
							}
						}
						if v == "google" && (!bytes.Contains(got, []byte(`"thoughtSignature"`)) || bytes.Contains(got, []byte("skip_thought_signature_validator"))) {
							t.Errorf("Gemini's thought signature was not kept with the thread:\n%s", got)
						}
						if second.id == first.id {
							t.Errorf("continue answered with the same id %q", second.id)
						}
						third := e.postThread(t, e.key, threadContinue(model, stream, second.id, `[{"role":"user","content":"thanks THANKS-a0b [fake:text=done]"}]`), stream)
						if third.status != 200 || third.text != "done" {
							t.Fatalf("second continue: status %d text %q: %s", third.status, third.text, third.raw)
						}
						got = e.lastRequest().Body
						for _, want := range []string{"SYS-7f3e", "ASK-91c2", "RESULT-5d1", "Tool said", "THANKS-a0b"} {
							if !bytes.Contains(got, []byte(want)) {
								t.Errorf("the vendor's second continue lacks %q:\n%s", want, got)
							}
						}

						calls := len(e.fake.Requests())
						again := e.postThread(t, e.key, threadContinue(model, stream, first.id, toolResult(first.toolUseIDs[0], "again")), stream)
						if again.status != 400 || !bytes.Contains(again.raw, []byte(`"error_code":"thread_already_continued"`)) {
							t.Errorf("second continue of the first answer: status %d: %s", again.status, again.raw)
						}
						wantNotFound(t, "unknown id", e.postThread(t, e.key, threadContinue(model, stream, "req_01unknownunknownunknown00", toolResult("x", "y")), stream))
						wantNotFound(t, "other account's id", e.postThread(t, other, threadContinue(model, stream, first.id, toolResult(first.toolUseIDs[0], "z")), stream))
						sys := e.postThread(t, e.key, []byte(fmt.Sprintf(`{"model":%q,"max_tokens":256,"system":"again","messages":[{"role":"user","content":"hi"}],"thread":{"type":"continue","previous_message_id":%q}}`, model, second.id)), false)
						if sys.status != 400 || !bytes.Contains(sys.raw, []byte(`"invalid_request"`)) {
							t.Errorf("system on continue: status %d: %s", sys.status, sys.raw)
						}
						if n := len(e.fake.Requests()); n != calls {
							t.Errorf("refused continues reached the vendor: %d calls", n-calls)
						}
					})
				}
			}
		})
	}
}

// TestThreadExpiresAndIsSwept: a thread past its retention is not found
// (404 thread_not_found), on both stores; with retention 0 threads are
// off and a continue is not found either, while create still answers.
func TestThreadExpiresAndIsSwept(t *testing.T) {
	for store, dbURL := range storesUnderTest(t) {
		t.Run(store, func(t *testing.T) {
			const retention = 300 * time.Millisecond
			e := newEnv(t, func(c *app.Config) { c.DatabaseURL = dbURL; c.ThreadRetention = retention })
			model := "openai/" + nativeModels["openai"]
			first := e.postThread(t, e.key, threadCreate(model, false), false)
			if first.status != 200 || len(first.toolUseIDs) != 1 {
				t.Fatalf("create: %d %s", first.status, first.raw)
			}
			// Past the retention (the entry was written before the answer
			// was sent, so this sleep starts after its expiry clock).
			time.Sleep(retention + 200*time.Millisecond)
			wantNotFound(t, "expired", e.postThread(t, e.key, threadContinue(model, false, first.id, toolResult(first.toolUseIDs[0], "late")), false))
			if n, err := e.m.State().Sweep(context.Background()); err != nil || n < 1 {
				t.Errorf("Sweep = %d, %v; want the expired thread deleted", n, err)
			}
		})
	}
	t.Run("off", func(t *testing.T) {
		e := newEnv(t, func(c *app.Config) { c.ThreadRetention = 0 })
		model := "groq/" + nativeModels["groq"]
		first := e.postThread(t, e.key, threadCreate(model, true), true)
		if first.status != 200 {
			t.Fatalf("create with threads off: %d %s", first.status, first.raw)
		}
		wantNotFound(t, "threads off", e.postThread(t, e.key, threadContinue(model, false, first.id, toolResult(first.toolUseIDs[0], "x")), false))
	})
}

// TestThreadSizeBound: a thread larger than GATEWAY_THREAD_MAX_BYTES is
// answered but not kept, so continuing it is not found (the client then
// replays it in full).
func TestThreadSizeBound(t *testing.T) {
	e := newEnv(t, func(c *app.Config) { c.ThreadMaxBytes = 4096 })
	model := "mistral/" + nativeModels["mistral"]
	small := e.postThread(t, e.key, threadCreate(model, false), false)
	if small.status != 200 {
		t.Fatalf("create: %d %s", small.status, small.raw)
	}
	big := []byte(strings.Replace(string(threadCreate(model, false)), "You are terse.", strings.Repeat("long system prompt ", 300), 1))
	large := e.postThread(t, e.key, big, false)
	if large.status != 200 {
		t.Fatalf("create large: %d %s", large.status, large.raw)
	}
	if a := e.postThread(t, e.key, threadContinue(model, false, small.id, toolResult(small.toolUseIDs[0], "ok")), false); a.status != 200 {
		t.Errorf("continue of the small thread: %d %s", a.status, a.raw)
	}
	wantNotFound(t, "over the size bound", e.postThread(t, e.key, threadContinue(model, false, large.id, toolResult(large.toolUseIDs[0], "ok")), false))
}

// TestThreadsPassThroughToAnthropic: on the native route the thread field
// and the beta header reach Anthropic as sent and the vendor keeps the
// thread (the gateway keeps nothing): create, continue with a lone
// tool_result, and an unknown id answered 404 with the vendor's
// error_code thread_not_found carried into the gateway's envelope.
func TestThreadsPassThroughToAnthropic(t *testing.T) {
	e := newEnv(t)
	model := "anthropic/" + nativeModels["anthropic"]
	for _, stream := range []bool{false, true} {
		first := e.postThread(t, e.key, threadCreate(model, stream), stream)
		if first.status != 200 || len(first.toolUseIDs) != 1 || !strings.HasPrefix(first.id, "msg_") {
			t.Fatalf("create: status %d: %s", first.status, first.raw)
		}
		rec := e.lastRequest()
		if !bytes.Contains(rec.Body, []byte(`"thread":{"type":"create"}`)) {
			t.Errorf("thread field not passed through: %s", rec.Body)
		}
		if got := rec.Header.Get("anthropic-beta"); got != threadBeta {
			t.Errorf("anthropic-beta = %q, want %q", got, threadBeta)
		}
		cont := threadContinue(model, stream, first.id, toolResult(first.toolUseIDs[0], "12:00 RESULT-5d1"))
		second := e.postThread(t, e.key, cont, stream)
		if second.status != 200 || second.text != "Tool said: 12:00 RESULT-5d1" {
			t.Fatalf("continue: status %d text %q: %s", second.status, second.text, second.raw)
		}
		if got := e.lastRequest().Body; !bytes.Equal(got, bytes.Replace(cont, []byte(model), []byte(nativeModels["anthropic"]), 1)) {
			t.Errorf("continue not passed through as sent:\n%s", got)
		}
		wantNotFound(t, "unknown id at Anthropic", e.postThread(t, e.key, threadContinue(model, stream, "msg_01unknown", toolResult("x", "y")), stream))
	}
}

// TestDeepSeekReasoningRestored: in thinking mode DeepSeek answers with
// reasoning_content and refuses a tool round trip whose assistant turn
// lacks it; the official openai-go SDK does not send it back. The gateway
// restores it from the answer it relayed, on both stores, streamed and
// not, for the same account only; with the retention off the round trip
// fails as it does without the gateway. On /v1/messages (mapped) a client
// that drops the thinking block gets it restored as well.
func TestDeepSeekReasoningRestored(t *testing.T) {
	model := "deepseek/" + nativeModels["deepseek"]
	reasoning := `"reasoning_content":` + quote(fakevendor.ReasoningText(nativeModels["deepseek"]))
	// roundTrip runs a C tool round trip through openai-go and returns
	// the second turn's error and the params it sent.
	roundTrip := func(t *testing.T, e *env, stream bool) (openai.ChatCompletionNewParams, error) {
		ctx := context.Background()
		oc := e.openaiClient()
		params := openai.ChatCompletionNewParams{
			Model:    model,
			Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("What is the weather? [fake:tool]")},
			Tools: []openai.ChatCompletionToolUnionParam{openai.ChatCompletionFunctionTool(openai.FunctionDefinitionParam{
				Name: "get_weather", Parameters: openai.FunctionParameters(weatherSchema()),
			})},
		}
		var msg openai.ChatCompletionMessage
		if stream {
			s := oc.Chat.Completions.NewStreaming(ctx, params)
			var acc openai.ChatCompletionAccumulator
			for s.Next() {
				acc.AddChunk(s.Current())
			}
			if err := s.Err(); err != nil {
				t.Fatalf("stream: %v", err)
			}
			msg = acc.Choices[0].Message
		} else {
			resp, err := oc.Chat.Completions.New(ctx, params)
			if err != nil {
				t.Fatalf("first turn: %v", err)
			}
			msg = resp.Choices[0].Message
		}
		if len(msg.ToolCalls) != 1 {
			t.Fatalf("no tool call: %+v", msg)
		}
		assistant := msg.ToAssistantMessageParam()
		params.Messages = append(params.Messages, openai.ChatCompletionMessageParamUnion{OfAssistant: &assistant}, openai.ToolMessage("sunny", msg.ToolCalls[0].ID))
		b, _ := json.Marshal(assistant)
		if bytes.Contains(b, []byte("reasoning_content")) {
			t.Fatalf("the SDK sent reasoning_content back itself: %s", b)
		}
		resp, err := oc.Chat.Completions.New(ctx, params)
		if err == nil && resp.Choices[0].Message.Content != "Tool said: sunny" {
			t.Errorf("final answer = %q", resp.Choices[0].Message.Content)
		}
		return params, err
	}
	for store, dbURL := range storesUnderTest(t) {
		t.Run(store, func(t *testing.T) {
			e := newEnv(t, func(c *app.Config) { c.DatabaseURL = dbURL })
			for _, stream := range []bool{false, true} {
				t.Run(fmt.Sprintf("chat/stream=%v", stream), func(t *testing.T) {
					params, err := roundTrip(t, e, stream)
					if err != nil {
						t.Fatalf("second turn: %v", err)
					}
					if got := e.lastRequest().Body; !bytes.Contains(got, []byte(reasoning)) {
						t.Errorf("the vendor did not get the reasoning back:\n%s", got)
					}
					// The same second turn from another account: nothing
					// of the first account's is restored.
					secret, _, err := createKey(context.Background(), e.m.Store(), fmt.Sprintf("reasoning-other-%d", time.Now().UnixNano()), 10*gw.USD)
					if err != nil {
						t.Fatal(err)
					}
					body, _ := json.Marshal(params)
					resp := e.post("/v1/chat/completions", secret, body)
					b := readAll(t, resp.Body)
					if resp.StatusCode != 400 || !bytes.Contains(b, []byte("Missing `reasoning_content` field in the assistant message")) {
						t.Errorf("other account: status %d: %s", resp.StatusCode, b)
					}
				})
			}
			t.Run("messages/thinking dropped", func(t *testing.T) {
				ac := e.anthropicClient()
				ctx := context.Background()
				params := anthropic.MessageNewParams{
					Model:     anthropic.Model(model),
					MaxTokens: 256,
					Messages:  []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("What is the weather? [fake:tool]"))},
					Tools: []anthropic.ToolUnionParam{anthropic.ToolUnionParamOfTool(anthropic.ToolInputSchemaParam{
						Properties: weatherSchema()["properties"], Required: []string{"location"},
					}, "get_weather")},
				}
				first, err := ac.Messages.New(ctx, params)
				if err != nil {
					t.Fatal(err)
				}
				var use *anthropic.ContentBlockUnion
				thinking := false
				for i := range first.Content {
					switch first.Content[i].Type {
					case "tool_use":
						use = &first.Content[i]
					case "thinking":
						thinking = true
					}
				}
				if use == nil || !thinking {
					t.Fatalf("want thinking and tool_use: %+v", first.Content)
				}
				// The client keeps only the tool call of its turn.
				params.Messages = append(params.Messages,
					anthropic.NewAssistantMessage(anthropic.NewToolUseBlock(use.ID, json.RawMessage(use.Input), use.Name)),
					anthropic.NewUserMessage(anthropic.NewToolResultBlock(use.ID, "sunny", false)))
				if _, err := ac.Messages.New(ctx, params); err != nil {
					t.Fatalf("second turn: %v", err)
				}
				if got := e.lastRequest().Body; !bytes.Contains(got, []byte(reasoning)) {
					t.Errorf("the vendor did not get the reasoning back:\n%s", got)
				}
			})
		})
	}
	t.Run("retention off", func(t *testing.T) {
		e := newEnv(t, func(c *app.Config) { c.ReasoningRetention = 0 })
		_, err := roundTrip(t, e, false)
		var apiErr *openai.Error
		if !errors.As(err, &apiErr) || apiErr.StatusCode != 400 || !strings.Contains(apiErr.RawJSON(), "Missing `reasoning_content` field in the assistant message") {
			t.Errorf("second turn with reasoning not kept: err = %v, want DeepSeek's 400", err)
		}
	})
}

// TestGeminiTextSignatureRoundTrip: a Gemini 3 answer's signature on its
// text (in streams on a last part with empty text, after the text) does
// not reach a Messages client as a block after the answer (Claude Code
// would show an empty result), and comes back onto the text part when
// the client replays the turn, on both endpoints.
func TestGeminiTextSignatureRoundTrip(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	ac := e.anthropicClient()
	model := "google/" + nativeModels["google"]
	sigRE := regexp.MustCompile(`"thoughtSignature":\s*"([^"]+)"`)
	// vendorSignature is the signature the fake put on the last answer.
	vendorSignature := func(t *testing.T) string {
		m := sigRE.FindSubmatch(e.direct("google", e.lastRequest()))
		if m == nil {
			t.Fatal("the fake Gemini sent no text signature")
		}
		return string(m[1])
	}
	// replayed checks the model turn the vendor got back.
	replayed := func(t *testing.T, text, sig string) {
		var req struct {
			Contents []struct {
				Role  string `json:"role"`
				Parts []struct {
					Text             string `json:"text"`
					ThoughtSignature string `json:"thoughtSignature"`
				} `json:"parts"`
			} `json:"contents"`
		}
		if err := json.Unmarshal(e.lastRequest().Body, &req); err != nil {
			t.Fatal(err)
		}
		if len(req.Contents) != 3 || req.Contents[1].Role != "model" || len(req.Contents[1].Parts) != 1 {
			t.Fatalf("contents = %+v", req.Contents)
		}
		if p := req.Contents[1].Parts[0]; p.Text != text || p.ThoughtSignature != sig {
			t.Errorf("replayed model part = %+v, want text %q with signature %q", p, text, sig)
		}
	}
	for _, stream := range []bool{false, true} {
		t.Run(fmt.Sprintf("messages stream=%v", stream), func(t *testing.T) {
			params := anthropic.MessageNewParams{
				Model: anthropic.Model(model), MaxTokens: 256,
				Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("Say hi"))},
			}
			var msg anthropic.Message
			if stream {
				s := ac.Messages.NewStreaming(ctx, params)
				for s.Next() {
					if err := msg.Accumulate(s.Current()); err != nil {
						t.Fatal(err)
					}
				}
				if err := s.Err(); err != nil {
					t.Fatal(err)
				}
			} else {
				m, err := ac.Messages.New(ctx, params)
				if err != nil {
					t.Fatal(err)
				}
				msg = *m
			}
			if len(msg.Content) != 1 || msg.Content[0].Type != "text" || msg.Content[0].Text == "" {
				t.Fatalf("content = %+v, want the answer's text block alone", msg.Content)
			}
			sig := vendorSignature(t)
			params.Messages = append(params.Messages, msg.ToParam(), anthropic.NewUserMessage(anthropic.NewTextBlock("Thanks")))
			if _, err := ac.Messages.New(ctx, params); err != nil {
				t.Fatal(err)
			}
			replayed(t, msg.Content[0].Text, sig)
		})
	}
	t.Run("chat completions", func(t *testing.T) {
		oc := e.openaiClient()
		params := openai.ChatCompletionNewParams{
			Model:    model,
			Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("Say hi")},
		}
		resp, err := oc.Chat.Completions.New(ctx, params)
		if err != nil {
			t.Fatal(err)
		}
		sig := vendorSignature(t)
		text := resp.Choices[0].Message.Content
		params.Messages = append(params.Messages, openai.AssistantMessage(text), openai.UserMessage("Thanks"))
		if _, err := oc.Chat.Completions.New(ctx, params); err != nil {
			t.Fatal(err)
		}
		replayed(t, text, sig)
	})
}
