package openai

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	gw "github.com/gwlabs/gateway"
	"github.com/gwlabs/gateway/internal/jsonenc"
	"github.com/gwlabs/gateway/sse"
	sdk "github.com/openai/openai-go/v3"
)

// collect assembles the canonical response that a well-formed event
// stream describes, the way a non-streaming answer would carry it.
func collect(t *testing.T, evs []gw.Event) *gw.Response {
	t.Helper()
	r := &gw.Response{}
	var args []string
	for _, ev := range evs {
		switch ev.Type {
		case gw.EventStart:
			r.ID, r.Model = ev.ID, ev.Model
		case gw.EventBlockStart:
			r.Content = append(r.Content, *ev.Part)
			args = append(args, "")
		case gw.EventDelta:
			p := &r.Content[ev.Index]
			if p.Type == gw.PartToolCall {
				args[ev.Index] += ev.Text
			} else {
				p.Text += ev.Text
			}
		case gw.EventBlockStop:
			if p := &r.Content[ev.Index]; p.Type == gw.PartToolCall {
				p.Arguments = json.RawMessage(args[ev.Index])
			}
		case gw.EventFinish:
			r.StopReason = ev.StopReason
			if ev.Usage != nil {
				r.Usage = *ev.Usage
			}
		case gw.EventError:
			t.Fatalf("stream failed: %v", ev.Err)
		}
	}
	return r
}

// accumulate feeds a client stream through the OpenAI SDK's own chunk
// type and accumulator.
func accumulate(t *testing.T, stream []byte) sdk.ChatCompletion {
	t.Helper()
	var acc sdk.ChatCompletionAccumulator
	rd := sse.NewReader(bytes.NewReader(stream))
	sawDone := false
	for rd.Next() {
		ev := rd.Event()
		if ev.Data == nil {
			continue
		}
		if string(ev.Data) == "[DONE]" {
			sawDone = true
			continue
		}
		var chunk sdk.ChatCompletionChunk
		if err := json.Unmarshal(ev.Data, &chunk); err != nil {
			t.Fatalf("SDK cannot decode chunk %s: %v", ev.Data, err)
		}
		if !acc.AddChunk(chunk) {
			t.Fatalf("accumulator rejected chunk %s", ev.Data)
		}
	}
	if !sawDone {
		t.Fatal("no [DONE]")
	}
	return acc.ChatCompletion
}

type sdkView struct {
	Content      string
	Tools        []string // id name arguments
	FinishReason string
	Usage        [5]int64 // prompt, completion, total, cached, reasoning
}

func viewOf(c sdk.ChatCompletion) sdkView {
	var v sdkView
	if len(c.Choices) > 0 {
		ch := c.Choices[0]
		v.Content = ch.Message.Content
		v.FinishReason = ch.FinishReason
		for _, tc := range ch.Message.ToolCalls {
			v.Tools = append(v.Tools, tc.ID+" "+tc.Function.Name+" "+tc.Function.Arguments)
		}
	}
	v.Usage = [5]int64{c.Usage.PromptTokens, c.Usage.CompletionTokens, c.Usage.TotalTokens,
		c.Usage.PromptTokensDetails.CachedTokens, c.Usage.CompletionTokensDetails.ReasoningTokens}
	return v
}

// TestStreamEncoderWithSDKAccumulator replays every golden stream that
// finishes, encodes it for a C client, accumulates the chunks with the
// OpenAI SDK, and checks the result equals EncodeResponse of the same
// answer as the SDK decodes it.
func TestStreamEncoderWithSDKAccumulator(t *testing.T) {
	for _, g := range loadGoldens(t, "stream") {
		t.Run(g.Name(), func(t *testing.T) {
			g.t = t
			_, evs := decodeAll(t, bytes.NewReader(g.input("upstream.sse")), dialectOf(g))
			var out bytes.Buffer
			enc := NewStreamEncoder(&out, goldenMeta, true)
			for _, ev := range evs {
				if err := enc.Encode(ev); err != nil {
					t.Fatal(err)
				}
			}
			if evs[len(evs)-1].Type == gw.EventError {
				// A stream that failed has no complete answer to compare:
				// the client must get the error chunk the SDK raises on,
				// then the terminator.
				tail := out.String()[max(0, out.Len()-600):]
				if !strings.Contains(tail, `data: {"error":{`) || !strings.HasSuffix(tail, "data: [DONE]\n\n") {
					t.Errorf("failed stream does not end with an error chunk and [DONE]:\n%s", tail)
				}
				return
			}
			got := viewOf(accumulate(t, out.Bytes()))

			body, err := EncodeResponse(collect(t, evs), goldenMeta)
			if err != nil {
				t.Fatal(err)
			}
			var want sdk.ChatCompletion
			if err := json.Unmarshal(body, &want); err != nil {
				t.Fatal(err)
			}
			wv := viewOf(want)
			if got.Content != wv.Content || got.FinishReason != wv.FinishReason || got.Usage != wv.Usage ||
				strings.Join(got.Tools, "\n") != strings.Join(wv.Tools, "\n") {
				t.Errorf("accumulated stream:\n%+v\nnon-streaming response:\n%+v", got, wv)
			}
			if wv.Usage[0] == 0 {
				t.Error("golden stream without usage: the comparison is weak")
			}
		})
	}
}

// TestStreamEncoderToolIndexes checks that tool call indexes count tool
// calls only, whatever blocks precede them (thinking, text, tool, tool ->
// 0, 1), through the SDK's accumulator.
func TestStreamEncoderToolIndexes(t *testing.T) {
	usage := gw.Usage{InputTokens: 10, CacheReadTokens: 5, OutputTokens: 9, ReasoningTokens: 2, Reported: true}
	evs := []gw.Event{
		{Type: gw.EventStart, ID: "msg_1", Model: "claude"},
		{Type: gw.EventBlockStart, Index: 0, Part: &gw.Part{Type: gw.PartThinking}},
		{Type: gw.EventDelta, Index: 0, Text: "hmm"},
		{Type: gw.EventDelta, Index: 0, Signature: "sig"},
		{Type: gw.EventBlockStop, Index: 0},
		{Type: gw.EventBlockStart, Index: 1, Part: &gw.Part{Type: gw.PartText}},
		{Type: gw.EventDelta, Index: 1, Text: "Two calls."},
		{Type: gw.EventBlockStop, Index: 1},
		{Type: gw.EventBlockStart, Index: 2, Part: &gw.Part{Type: gw.PartToolCall, ToolCallID: "toolu_1", ToolName: "a"}},
		{Type: gw.EventDelta, Index: 2, Text: `{"x":`},
		{Type: gw.EventDelta, Index: 2, Text: `1}`},
		{Type: gw.EventBlockStop, Index: 2},
		{Type: gw.EventBlockStart, Index: 3, Part: &gw.Part{Type: gw.PartToolCall, ToolCallID: "toolu_2", ToolName: "b"}},
		{Type: gw.EventDelta, Index: 3, Text: `{}`},
		{Type: gw.EventBlockStop, Index: 3},
		{Type: gw.EventFinish, StopReason: gw.StopToolUse, Usage: &usage},
	}
	var out bytes.Buffer
	enc := NewStreamEncoder(&out, goldenMeta, true)
	for _, ev := range evs {
		if err := enc.Encode(ev); err != nil {
			t.Fatal(err)
		}
	}
	if !strings.Contains(out.String(), `"tool_calls":[{"index":0,"id":"toolu_1"`) ||
		!strings.Contains(out.String(), `"tool_calls":[{"index":1,"id":"toolu_2"`) {
		t.Errorf("tool indexes are not 0 and 1:\n%s", out.String())
	}
	got := viewOf(accumulate(t, out.Bytes()))
	want := sdkView{
		Content:      "Two calls.",
		Tools:        []string{`toolu_1 a {"x":1}`, `toolu_2 b {}`},
		FinishReason: "tool_calls",
		Usage:        [5]int64{15, 9, 24, 5, 2},
	}
	if got.Content != want.Content || got.FinishReason != want.FinishReason || got.Usage != want.Usage ||
		strings.Join(got.Tools, "|") != strings.Join(want.Tools, "|") {
		t.Errorf("got  %+v\nwant %+v", got, want)
	}
	if !strings.Contains(out.String(), `"reasoning_content":"hmm"`) {
		t.Error("thinking did not reach reasoning_content")
	}
}

// TestStreamEncoderWithoutUsage checks that without include_usage no
// chunk carries a usage key and no usage chunk is sent.
func TestStreamEncoderWithoutUsage(t *testing.T) {
	u := gw.Usage{InputTokens: 1, OutputTokens: 1, Reported: true}
	var out writeRecorder
	enc := NewStreamEncoder(&out, goldenMeta, false)
	for _, ev := range []gw.Event{
		{Type: gw.EventStart},
		{Type: gw.EventBlockStart, Index: 0, Part: &gw.Part{Type: gw.PartText}},
		{Type: gw.EventDelta, Index: 0, Text: "x"},
		{Type: gw.EventBlockStop, Index: 0},
		{Type: gw.EventFinish, StopReason: gw.StopMaxTokens, Usage: &u},
		{Type: gw.EventDelta, Index: 0, Text: "after finish"},
	} {
		if err := enc.Encode(ev); err != nil {
			t.Fatal(err)
		}
	}
	checkClientStream(t, out.writes)
	if strings.Contains(out.String(), `"usage"`) {
		t.Errorf("usage present without include_usage:\n%s", out.String())
	}
	if len(out.writes) != 4 {
		t.Errorf("%d writes, want 4 (role, content, finish, [DONE])", len(out.writes))
	}
	if !strings.Contains(out.String(), `"finish_reason":"length"`) {
		t.Error("max_tokens did not become length")
	}
}

func TestFinishReason(t *testing.T) {
	tests := map[gw.StopReason]string{
		gw.StopEndTurn: "stop", gw.StopSequence: "stop", gw.StopPauseTurn: "stop",
		gw.StopMaxTokens: "length", gw.StopContextLimit: "length",
		gw.StopToolUse: "tool_calls", gw.StopRefusal: "content_filter", "": "stop",
	}
	for in, want := range tests {
		if got := finishReason(in); got != want {
			t.Errorf("finishReason(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestStopReason(t *testing.T) {
	tests := []struct {
		reason string
		tools  bool
		want   gw.StopReason
	}{
		{"stop", false, gw.StopEndTurn},
		{"eos", false, gw.StopEndTurn},
		{"stop", true, gw.StopToolUse},
		{"length", false, gw.StopMaxTokens},
		{"model_length", false, gw.StopMaxTokens},
		{"tool_calls", true, gw.StopToolUse},
		{"function_call", true, gw.StopToolUse},
		{"content_filter", false, gw.StopRefusal},
		{"insufficient_system_resource", false, gw.StopError},
		{"error", false, gw.StopError},
		{"", false, gw.StopEndTurn},
	}
	for _, tt := range tests {
		if got := stopReason(tt.reason, tt.tools); got != tt.want {
			t.Errorf("stopReason(%q, %v) = %q, want %q", tt.reason, tt.tools, got, tt.want)
		}
	}
}

func TestAppendString(t *testing.T) {
	for _, s := range []string{"", "plain", "q\"b\\s", "ctl\x00\x01\x1f\t\n\r", "<&>", "é中😀", "bad\xffutf8", "\u2028\u2029"} {
		got := jsonenc.AppendString(nil, s)
		want, _ := json.Marshal(s)
		var back string
		if err := json.Unmarshal(got, &back); err != nil {
			t.Errorf("jsonenc.AppendString(%q) = %s: invalid JSON: %v", s, got, err)
			continue
		}
		var wantBack string
		_ = json.Unmarshal(want, &wantBack)
		if back != wantBack {
			t.Errorf("jsonenc.AppendString(%q) decodes to %q, want %q", s, back, wantBack)
		}
	}
}

func TestShortToolID(t *testing.T) {
	a := ShortToolID("toolu_01XyZ-long-anthropic-id")
	if len(a) != 9 || !isAlnum(a) {
		t.Errorf("ShortToolID = %q, want 9 alphanumerics", a)
	}
	if b := ShortToolID("toolu_01XyZ-long-anthropic-id"); b != a {
		t.Errorf("not deterministic: %q vs %q", a, b)
	}
	if c := ShortToolID("toolu_other"); c == a {
		t.Error("different ids collide")
	}
	if k := ShortToolID("Ab3dE6gH9"); k != "Ab3dE6gH9" {
		t.Errorf("a valid Mistral id was rewritten to %q", k)
	}
}

func TestDialectFor(t *testing.T) {
	for _, v := range []string{"openai", "together", "fireworks", "groq", "mistral", "deepseek", "openrouter"} {
		d, ok := DialectFor(v)
		if !ok || d.Vendor != v {
			t.Errorf("DialectFor(%q) = %+v, %v", v, d, ok)
		}
	}
	for _, v := range []string{"anthropic", "google", ""} {
		if _, ok := DialectFor(v); ok {
			t.Errorf("DialectFor(%q) succeeded", v)
		}
	}
	a, _ := DialectFor("groq")
	a.Unsupported[0] = "changed"
	a.MaxTokensField = "changed"
	b, _ := DialectFor("groq")
	if b.Unsupported[0] == "changed" || b.MaxTokensField == "changed" {
		t.Error("DialectFor shares state between calls")
	}
}
