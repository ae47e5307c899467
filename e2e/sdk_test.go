package e2e

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/anthropics/anthropic-sdk-go"
	aoption "github.com/anthropics/anthropic-sdk-go/option"
	"github.com/gwlabs/gateway/fakevendor"
	"github.com/gwlabs/gateway/route"
	"github.com/openai/openai-go/v3"
	ooption "github.com/openai/openai-go/v3/option"
)

// The official SDKs, unchanged, against the gateway on all eighteen
// routes (two endpoints x nine vendors): non-streaming, streaming through
// the SDKs' own accumulators, and a full tool round trip.

func (e *env) openaiClient() openai.Client {
	return openai.NewClient(ooption.WithBaseURL(e.url+"/v1"), ooption.WithAPIKey(e.key), ooption.WithMaxRetries(0))
}

func (e *env) anthropicClient() anthropic.Client {
	return anthropic.NewClient(aoption.WithBaseURL(e.url), aoption.WithAPIKey(e.key), aoption.WithMaxRetries(0))
}

func weatherSchema() map[string]any {
	return map[string]any{
		"type":       "object",
		"properties": map[string]any{"location": map[string]any{"type": "string"}},
		"required":   []string{"location"},
	}
}

func TestSDKChatCompletions(t *testing.T) {
	e := newEnv(t)
	client := e.openaiClient()
	ctx := context.Background()
	for _, v := range route.Vendors() {
		t.Run(v, func(t *testing.T) {
			model := nativeModels[v]
			want := fakevendor.DefaultText(v, model)
			params := openai.ChatCompletionNewParams{
				Model:    v + "/" + model,
				Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("Say hello.")},
			}
			resp, err := client.Chat.Completions.New(ctx, params)
			if err != nil {
				t.Fatalf("non-stream: %v", err)
			}
			if len(resp.Choices) != 1 || resp.Choices[0].Message.Content != want {
				t.Fatalf("content = %+v, want %q", resp.Choices, want)
			}
			if resp.Choices[0].FinishReason != "stop" {
				t.Errorf("finish_reason = %q", resp.Choices[0].FinishReason)
			}
			if u := resp.Usage; u.PromptTokens <= 0 || u.CompletionTokens <= 0 || u.TotalTokens != u.PromptTokens+u.CompletionTokens {
				t.Errorf("usage = %+v", u)
			}
			if resp.Model != model {
				t.Errorf("model = %q, want %q", resp.Model, model)
			}

			params.StreamOptions = openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)}
			stream := client.Chat.Completions.NewStreaming(ctx, params)
			var acc openai.ChatCompletionAccumulator
			for stream.Next() {
				acc.AddChunk(stream.Current())
			}
			if err := stream.Err(); err != nil {
				t.Fatalf("stream: %v", err)
			}
			if len(acc.Choices) != 1 || acc.Choices[0].Message.Content != want {
				t.Fatalf("streamed content = %+v, want %q", acc.Choices, want)
			}
			if acc.Choices[0].FinishReason != "stop" {
				t.Errorf("streamed finish_reason = %q", acc.Choices[0].FinishReason)
			}
			if acc.Usage.CompletionTokens != resp.Usage.CompletionTokens || acc.Usage.PromptTokens <= 0 {
				t.Errorf("streamed usage = %+v, non-stream %+v", acc.Usage, resp.Usage)
			}
		})
	}
}

func TestSDKMessages(t *testing.T) {
	e := newEnv(t)
	client := e.anthropicClient()
	ctx := context.Background()
	for _, v := range route.Vendors() {
		t.Run(v, func(t *testing.T) {
			model := nativeModels[v]
			want := fakevendor.DefaultText(v, model)
			params := anthropic.MessageNewParams{
				Model:     anthropic.Model(v + "/" + model),
				MaxTokens: 256,
				Messages:  []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("Say hello."))},
			}
			msg, err := client.Messages.New(ctx, params)
			if err != nil {
				t.Fatalf("non-stream: %v", err)
			}
			if got := textOf(msg); got != want {
				t.Fatalf("content = %q, want %q", got, want)
			}
			if msg.StopReason != anthropic.StopReasonEndTurn {
				t.Errorf("stop_reason = %q", msg.StopReason)
			}
			if msg.Usage.OutputTokens <= 0 || msg.Usage.InputTokens+msg.Usage.CacheReadInputTokens <= 0 {
				t.Errorf("usage = %+v", msg.Usage)
			}

			stream := client.Messages.NewStreaming(ctx, params)
			var acc anthropic.Message
			for stream.Next() {
				if err := acc.Accumulate(stream.Current()); err != nil {
					t.Fatalf("accumulate: %v", err)
				}
			}
			if err := stream.Err(); err != nil {
				t.Fatalf("stream: %v", err)
			}
			if got := textOf(&acc); got != want {
				t.Fatalf("streamed content = %q, want %q", got, want)
			}
			if acc.StopReason != msg.StopReason {
				t.Errorf("streamed stop_reason = %q, non-stream %q", acc.StopReason, msg.StopReason)
			}
			if acc.Usage.OutputTokens != msg.Usage.OutputTokens {
				t.Errorf("streamed output tokens = %d, non-stream %d", acc.Usage.OutputTokens, msg.Usage.OutputTokens)
			}
		})
	}
}

func textOf(m *anthropic.Message) string {
	var b strings.Builder
	for _, c := range m.Content {
		if c.Type == "text" {
			b.WriteString(c.Text)
		}
	}
	return b.String()
}

// TestSDKToolRoundTrip: tool call -> tool result -> final answer, on all
// eighteen routes; the first turn streamed through the SDK accumulators.
func TestSDKToolRoundTrip(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	oc, ac := e.openaiClient(), e.anthropicClient()
	for _, v := range route.Vendors() {
		model := v + "/" + nativeModels[v]
		t.Run("chat/"+v, func(t *testing.T) {
			params := openai.ChatCompletionNewParams{
				Model:    model,
				Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("What is the weather? [fake:tool]")},
				Tools: []openai.ChatCompletionToolUnionParam{openai.ChatCompletionFunctionTool(openai.FunctionDefinitionParam{
					Name: "get_weather", Parameters: openai.FunctionParameters(weatherSchema()),
				})},
			}
			stream := oc.Chat.Completions.NewStreaming(ctx, params)
			var acc openai.ChatCompletionAccumulator
			for stream.Next() {
				acc.AddChunk(stream.Current())
			}
			if err := stream.Err(); err != nil {
				t.Fatalf("stream: %v", err)
			}
			if len(acc.Choices) != 1 || len(acc.Choices[0].Message.ToolCalls) != 1 {
				t.Fatalf("no tool call: %+v", acc.Choices)
			}
			if acc.Choices[0].FinishReason != "tool_calls" {
				t.Errorf("finish_reason = %q", acc.Choices[0].FinishReason)
			}
			call := acc.Choices[0].Message.ToolCalls[0]
			var args map[string]any
			if call.Function.Name != "get_weather" || json.Unmarshal([]byte(call.Function.Arguments), &args) != nil || args["location"] != "x" {
				t.Fatalf("tool call = %+v", call)
			}
			// The SDK does not send back DeepSeek's reasoning_content,
			// which thinking mode needs on tool-call turns: the gateway
			// restores it (TestDeepSeekReasoningRestored).
			assistant := acc.Choices[0].Message.ToAssistantMessageParam()
			params.Messages = append(params.Messages, openai.ChatCompletionMessageParamUnion{OfAssistant: &assistant}, openai.ToolMessage("sunny and 21C", call.ID))
			resp, err := oc.Chat.Completions.New(ctx, params)
			if err != nil {
				t.Fatalf("second turn: %v", err)
			}
			if got := resp.Choices[0].Message.Content; got != "Tool said: sunny and 21C" {
				t.Fatalf("final answer = %q", got)
			}
		})
		t.Run("messages/"+v, func(t *testing.T) {
			params := anthropic.MessageNewParams{
				Model:     anthropic.Model(model),
				MaxTokens: 256,
				Messages:  []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("What is the weather? [fake:tool]"))},
				Tools: []anthropic.ToolUnionParam{anthropic.ToolUnionParamOfTool(anthropic.ToolInputSchemaParam{
					Properties: weatherSchema()["properties"], Required: []string{"location"},
				}, "get_weather")},
			}
			stream := ac.Messages.NewStreaming(ctx, params)
			var acc anthropic.Message
			for stream.Next() {
				if err := acc.Accumulate(stream.Current()); err != nil {
					t.Fatalf("accumulate: %v", err)
				}
			}
			if err := stream.Err(); err != nil {
				t.Fatalf("stream: %v", err)
			}
			if acc.StopReason != anthropic.StopReasonToolUse {
				t.Errorf("stop_reason = %q", acc.StopReason)
			}
			var use *anthropic.ContentBlockUnion
			for i := range acc.Content {
				if acc.Content[i].Type == "tool_use" {
					use = &acc.Content[i]
				}
			}
			if use == nil {
				t.Fatalf("no tool_use block: %+v", acc.Content)
			}
			var args map[string]any
			if use.Name != "get_weather" || json.Unmarshal(use.Input, &args) != nil || args["location"] != "x" {
				t.Fatalf("tool_use = %+v (input %s)", use, use.Input)
			}
			params.Messages = append(params.Messages, acc.ToParam(),
				anthropic.NewUserMessage(anthropic.NewToolResultBlock(use.ID, "sunny and 21C", false)))
			msg, err := ac.Messages.New(ctx, params)
			if err != nil {
				t.Fatalf("second turn: %v", err)
			}
			if got := textOf(msg); got != "Tool said: sunny and 21C" {
				t.Fatalf("final answer = %q", got)
			}
		})
	}
}
