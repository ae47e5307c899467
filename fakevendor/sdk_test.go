package fakevendor_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/anthropics/anthropic-sdk-go"
	aoption "github.com/anthropics/anthropic-sdk-go/option"
	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/shared"

	"github.com/gwlabs/gateway/fakevendor"
)

// chatVendors are the vendors an OpenAI client can talk to directly.
var chatVendors = []string{"openai", "together", "fireworks", "groq", "mistral", "deepseek", "openrouter"}

func start(t *testing.T) *fakevendor.Server {
	t.Helper()
	s, err := fakevendor.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func openaiClient(s *fakevendor.Server, vendor string) openai.Client {
	return openai.NewClient(option.WithBaseURL(s.BaseURL(vendor)), option.WithAPIKey(s.APIKey(vendor)), option.WithMaxRetries(0))
}

func weatherTool() openai.ChatCompletionToolUnionParam {
	return openai.ChatCompletionFunctionTool(shared.FunctionDefinitionParam{
		Name: "get_weather",
		Parameters: shared.FunctionParameters{
			"type":       "object",
			"properties": map[string]any{"city": map[string]any{"type": "string"}},
			"required":   []string{"city"},
		},
	})
}

func modelOf(vendor string) string {
	if vendor == "openrouter" {
		return "meta-llama/llama-x"
	}
	return "m-" + vendor
}

func TestOpenAISDKTalksToChatFakes(t *testing.T) {
	s := start(t)
	for _, v := range chatVendors {
		t.Run(v, func(t *testing.T) {
			ctx := testCtx(t)
			c := openaiClient(s, v)
			model := modelOf(v)
			resp, err := c.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{
				Model:    model,
				Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("hi")},
			})
			if err != nil {
				t.Fatal(err)
			}
			if got := resp.Choices[0].Message.Content; got != fakevendor.DefaultText(v, model) {
				t.Errorf("content = %q", got)
			}
			if resp.Model != model || resp.Usage.PromptTokens == 0 || resp.Usage.TotalTokens != resp.Usage.PromptTokens+resp.Usage.CompletionTokens {
				t.Errorf("model %q usage %+v", resp.Model, resp.Usage)
			}

			stream := c.Chat.Completions.NewStreaming(ctx, openai.ChatCompletionNewParams{
				Model:         model,
				Messages:      []openai.ChatCompletionMessageParamUnion{openai.UserMessage("weather? [fake:tools=2][fake:reasoning]")},
				Tools:         []openai.ChatCompletionToolUnionParam{weatherTool()},
				StreamOptions: openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)},
			})
			var acc openai.ChatCompletionAccumulator
			for stream.Next() {
				acc.AddChunk(stream.Current())
			}
			if err := stream.Err(); err != nil {
				t.Fatal(err)
			}
			calls := acc.Choices[0].Message.ToolCalls
			if v == "mistral" {
				// Mistral streams tool calls without index and type, so
				// the SDK's accumulator merges them into one: the real
				// vendor's behaviour, which the gateway normalises on its
				// native route (provider/openai).
				if len(calls) != 1 || calls[0].Function.Name != "get_weatherget_weather" {
					t.Fatalf("mistral: want the two calls merged by the accumulator, got %+v", calls)
				}
				return
			}
			if len(calls) != 2 || acc.Choices[0].FinishReason != "tool_calls" {
				t.Fatalf("accumulated %+v", acc.Choices[0])
			}
			for _, tc := range calls {
				if tc.Function.Name != "get_weather" || tc.Function.Arguments != `{"city":"x"}` || tc.ID == "" {
					t.Errorf("tool call %+v", tc)
				}
			}
			if calls[0].ID == calls[1].ID {
				t.Error("tool call ids repeat")
			}
			if acc.Usage.CompletionTokens == 0 {
				t.Errorf("no usage accumulated (%s)", v)
			}

			// Tool round trip. DeepSeek in thinking mode wants a
			// reasoning_content on the tool-call turn ("" is accepted).
			var opts []option.RequestOption
			if v == "deepseek" {
				opts = append(opts, option.WithJSONSet("messages.1.reasoning_content", ""))
			}
			resp, err = c.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{
				Model: model,
				Messages: []openai.ChatCompletionMessageParamUnion{
					openai.UserMessage("weather? [fake:tool]"),
					acc.Choices[0].Message.ToParam(),
					openai.ToolMessage("rainy", calls[0].ID),
					openai.ToolMessage("windy", calls[1].ID),
				},
				Tools: []openai.ChatCompletionToolUnionParam{weatherTool()},
			}, opts...)
			if err != nil {
				t.Fatal(err)
			}
			if got := resp.Choices[0].Message.Content; got != "Tool said: rainy | windy" {
				t.Errorf("round trip reply %q", got)
			}
		})
	}
}

func TestOpenAISDKSeesErrors(t *testing.T) {
	s := start(t)
	ctx := testCtx(t)
	c := openaiClient(s, "openai")
	_, err := c.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{
		Model:    "gpt-x",
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("[fake:status=429][fake:retry=3]")},
	})
	var apiErr *openai.Error
	if !errors.As(err, &apiErr) || apiErr.StatusCode != 429 || apiErr.Code != "rate_limit_exceeded" {
		t.Fatalf("err = %v", err)
	}
	if apiErr.Response.Header.Get("Retry-After") != "3" {
		t.Errorf("retry-after %q", apiErr.Response.Header.Get("Retry-After"))
	}
	stream := c.Chat.Completions.NewStreaming(ctx, openai.ChatCompletionNewParams{
		Model:    "gpt-x",
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("[fake:error-after=1]")},
	})
	for stream.Next() {
	}
	if stream.Err() == nil {
		t.Error("in-stream error not surfaced by the SDK")
	}
	// The SDK retries 503s; fail-first lets the second attempt through.
	retrying := openai.NewClient(option.WithBaseURL(s.BaseURL("openai")), option.WithAPIKey(s.APIKey("openai")),
		option.WithMaxRetries(2), option.WithRequestTimeout(5*time.Second))
	s.Reset()
	resp, err := retrying.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{
		Model:    "gpt-x",
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("[fake:fail-first=1][fake:text=ok]")},
	})
	if err != nil || resp.Choices[0].Message.Content != "ok" {
		t.Fatalf("retry: %v", err)
	}
	if rs := s.Requests(); len(rs) != 2 || rs[0].Status != 503 || rs[1].Status != 200 {
		t.Errorf("requests = %d", len(rs))
	}
}

func TestAnthropicSDKTalksToAnthropicFake(t *testing.T) {
	s := start(t)
	ctx := testCtx(t)
	c := anthropic.NewClient(aoption.WithBaseURL(s.BaseURL("anthropic")), aoption.WithAPIKey(s.APIKey("anthropic")), aoption.WithMaxRetries(0))
	tool := anthropic.ToolUnionParam{OfTool: &anthropic.ToolParam{
		Name: "get_weather",
		InputSchema: anthropic.ToolInputSchemaParam{
			Properties: map[string]any{"city": map[string]any{"type": "string"}},
			Required:   []string{"city"},
		},
	}}
	msg, err := c.Messages.New(ctx, anthropic.MessageNewParams{
		Model:     "claude-x",
		MaxTokens: 100,
		Messages:  []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("hi [fake:cache]"))},
	})
	if err != nil {
		t.Fatal(err)
	}
	if msg.Content[0].Text != fakevendor.DefaultText("anthropic", "claude-x") || msg.StopReason != "end_turn" {
		t.Errorf("message %+v", msg)
	}
	if msg.Usage.CacheReadInputTokens == 0 || msg.Usage.CacheCreation.Ephemeral5mInputTokens == 0 {
		t.Errorf("usage %+v", msg.Usage)
	}

	stream := c.Messages.NewStreaming(ctx, anthropic.MessageNewParams{
		Model:     "claude-x",
		MaxTokens: 100,
		Messages:  []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("weather? [fake:tool][fake:reasoning]"))},
		Tools:     []anthropic.ToolUnionParam{tool},
	})
	var acc anthropic.Message
	for stream.Next() {
		if err := acc.Accumulate(stream.Current()); err != nil {
			t.Fatal(err)
		}
	}
	if err := stream.Err(); err != nil {
		t.Fatal(err)
	}
	if len(acc.Content) != 2 || acc.Content[0].Type != "thinking" || acc.Content[0].Signature == "" || acc.Content[1].Type != "tool_use" {
		t.Fatalf("accumulated content %+v", acc.Content)
	}
	var in map[string]string
	if err := json.Unmarshal(acc.Content[1].Input, &in); err != nil || in["city"] != "x" {
		t.Errorf("tool input %s", acc.Content[1].Input)
	}
	if acc.StopReason != "tool_use" || acc.Usage.OutputTokens == 0 || acc.Usage.InputTokens == 0 {
		t.Errorf("stop %q usage %+v", acc.StopReason, acc.Usage)
	}

	// Tool round trip.
	msg, err = c.Messages.New(ctx, anthropic.MessageNewParams{
		Model:     "claude-x",
		MaxTokens: 100,
		Tools:     []anthropic.ToolUnionParam{tool},
		Messages: []anthropic.MessageParam{
			anthropic.NewUserMessage(anthropic.NewTextBlock("weather? [fake:tool]")),
			acc.ToParam(),
			anthropic.NewUserMessage(anthropic.NewToolResultBlock(acc.Content[1].ID, "foggy", false)),
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	if msg.Content[0].Text != "Tool said: foggy" {
		t.Errorf("round trip reply %q", msg.Content[0].Text)
	}

	// Errors: status and in-stream.
	_, err = c.Messages.New(ctx, anthropic.MessageNewParams{
		Model: "claude-x", MaxTokens: 10,
		Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("[fake:status=529]"))},
	})
	var apiErr *anthropic.Error
	if !errors.As(err, &apiErr) || apiErr.StatusCode != 529 || !strings.Contains(apiErr.Error(), "overloaded_error") {
		t.Errorf("err = %v", err)
	}
	stream = c.Messages.NewStreaming(ctx, anthropic.MessageNewParams{
		Model: "claude-x", MaxTokens: 10,
		Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("[fake:error-after=2]"))},
	})
	for stream.Next() {
	}
	if err := stream.Err(); err == nil || !strings.Contains(err.Error(), "overloaded") {
		t.Errorf("in-stream error = %v", err)
	}
}
