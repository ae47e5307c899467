package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	gw "github.com/gwlabs/gateway"
	"github.com/gwlabs/gateway/fakevendor"
	"github.com/openai/openai-go/v3"
)

// TestNativeDeviationsThroughSDK: on native C routes the vendors'
// SDK-breaking deviations reach openai-go's helpers fixed (Mistral's
// streamed tool calls without index and type, its non-stream ones without
// type, Together's "eos"), and
// Together's top-level usage.cached_tokens is billed as cache reads.
func TestNativeDeviationsThroughSDK(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	oc := e.openaiClient()

	t.Run("mistral parallel tool calls survive the accumulator", func(t *testing.T) {
		params := openai.ChatCompletionNewParams{
			Model:    "mistral/" + nativeModels["mistral"],
			Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("Weather in two places? [fake:tools=2]")},
			Tools: []openai.ChatCompletionToolUnionParam{openai.ChatCompletionFunctionTool(openai.FunctionDefinitionParam{
				Name: "get_weather", Parameters: openai.FunctionParameters(weatherSchema()),
			})},
		}
		stream := oc.Chat.Completions.NewStreaming(ctx, params)
		var acc openai.ChatCompletionAccumulator
		finished := 0
		for stream.Next() {
			acc.AddChunk(stream.Current())
			if _, ok := acc.JustFinishedToolCall(); ok {
				finished++
			}
		}
		if err := stream.Err(); err != nil {
			t.Fatal(err)
		}
		calls := acc.Choices[0].Message.ToolCalls
		if len(calls) != 2 || calls[0].ID == calls[1].ID {
			t.Fatalf("tool calls = %+v, want two distinct calls", calls)
		}
		for _, c := range calls {
			if c.Type != "function" || c.Function.Name != "get_weather" || c.Function.Arguments != `{"location":"x"}` {
				t.Errorf("tool call = %+v", c)
			}
		}
		if finished < 1 {
			t.Errorf("the accumulator reported %d finished tool calls", finished)
		}
		// The round trip with both results, as the SDK built the turn.
		assistant := acc.Choices[0].Message.ToAssistantMessageParam()
		params.Messages = append(params.Messages, openai.ChatCompletionMessageParamUnion{OfAssistant: &assistant},
			openai.ToolMessage("sunny", calls[0].ID), openai.ToolMessage("windy", calls[1].ID))
		resp, err := oc.Chat.Completions.New(ctx, params)
		if err != nil {
			t.Fatal(err)
		}
		if got := resp.Choices[0].Message.Content; got != "Tool said: sunny | windy" {
			t.Errorf("final answer = %q", got)
		}
	})

	t.Run("mistral non-stream tool calls say function", func(t *testing.T) {
		params := openai.ChatCompletionNewParams{
			Model:    "mistral/" + nativeModels["mistral"],
			Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("Weather in two places? [fake:tools=2]")},
			Tools: []openai.ChatCompletionToolUnionParam{openai.ChatCompletionFunctionTool(openai.FunctionDefinitionParam{
				Name: "get_weather", Parameters: openai.FunctionParameters(weatherSchema()),
			})},
		}
		resp, err := oc.Chat.Completions.New(ctx, params)
		if err != nil {
			t.Fatal(err)
		}
		calls := resp.Choices[0].Message.ToolCalls
		if len(calls) != 2 {
			t.Fatalf("tool calls = %s, want 2", resp.Choices[0].Message.RawJSON())
		}
		for _, c := range calls {
			if c.Type != "function" || c.Function.Name != "get_weather" {
				t.Errorf("tool call = %s, want type function", c.RawJSON())
			}
		}
	})

	t.Run("mistral list content reaches the SDK as a string", func(t *testing.T) {
		model := nativeModels["mistral"]
		params := openai.ChatCompletionNewParams{
			Model:    "mistral/" + model,
			Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("Think, then say hello. [fake:reasoning]")},
		}
		resp, err := oc.Chat.Completions.New(ctx, params)
		if err != nil {
			t.Fatal(err)
		}
		msg := resp.Choices[0].Message
		if msg.Content != fakevendor.DefaultText("mistral", model) || !strings.Contains(msg.RawJSON(), `"reasoning_content":"`+fakevendor.ReasoningText(model)+`"`) {
			t.Errorf("message = %s", msg.RawJSON())
		}
		stream := oc.Chat.Completions.NewStreaming(ctx, params)
		var acc openai.ChatCompletionAccumulator
		for stream.Next() {
			acc.AddChunk(stream.Current())
		}
		if err := stream.Err(); err != nil {
			t.Fatal(err)
		}
		if got := acc.Choices[0].Message.Content; got != fakevendor.DefaultText("mistral", model) {
			t.Errorf("streamed content = %q", got)
		}
	})

	t.Run("together eos is stop and cached_tokens are cache reads", func(t *testing.T) {
		params := openai.ChatCompletionNewParams{
			Model:    "together/" + nativeModels["together"],
			Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("Say hello. [fake:cache=8]")},
		}
		resp, err := oc.Chat.Completions.New(ctx, params)
		if err != nil {
			t.Fatal(err)
		}
		if resp.Choices[0].FinishReason != "stop" {
			t.Errorf("finish_reason = %q, want stop", resp.Choices[0].FinishReason)
		}
		stream := oc.Chat.Completions.NewStreaming(ctx, params)
		var acc openai.ChatCompletionAccumulator
		for stream.Next() {
			acc.AddChunk(stream.Current())
		}
		if err := stream.Err(); err != nil {
			t.Fatal(err)
		}
		if acc.Choices[0].FinishReason != "stop" || acc.Choices[0].Message.Content != fakevendor.DefaultText("together", nativeModels["together"]) {
			t.Errorf("streamed choice = %+v", acc.Choices[0])
		}
		// A stream is settled after its last byte: wait for its record.
		var recs []gw.Record
		for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
			var err error
			recs, err = e.m.Store().Records(ctx, gw.RecordFilter{AccountID: e.acct, Vendor: "together"})
			if err != nil {
				t.Fatal(err)
			}
			if len(recs) >= 2 || time.Now().After(deadline) {
				break
			}
		}
		if len(recs) != 2 {
			t.Fatalf("%d records, want 2", len(recs))
		}
		for _, r := range recs {
			if r.Usage.CacheReadTokens != 8 || r.Usage.InputTokens <= 0 {
				t.Errorf("recorded usage %+v, want 8 cache reads", r.Usage)
			}
		}
	})
}
