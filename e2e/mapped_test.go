package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/anthropics/anthropic-sdk-go"
	aoption "github.com/anthropics/anthropic-sdk-go/option"
	gw "github.com/gwlabs/gateway"
	"github.com/gwlabs/gateway/fakevendor"
	"github.com/gwlabs/gateway/internal/app"
	"github.com/gwlabs/gateway/sse"
	"github.com/openai/openai-go/v3"
	ooption "github.com/openai/openai-go/v3/option"
)

// End-to-end checks of the mapped routes (caller shape != vendor shape):
// the M endpoint in front of the C vendors and Google, the C endpoint in
// front of Anthropic and Google, each streamed and not, through the
// official SDKs (raw HTTP where a wire detail matters).

// mappedRoute is one endpoint+vendor pair whose shapes differ.
type mappedRoute struct {
	path   string
	vendor string
}

func (r mappedRoute) messages() bool { return r.path == "/v1/messages" }
func (r mappedRoute) model() string  { return r.vendor + "/" + nativeModels[r.vendor] }

func (r mappedRoute) String() string {
	if r.messages() {
		return "M-" + r.vendor
	}
	return "C-" + r.vendor
}

func mappedRoutes() []mappedRoute {
	var out []mappedRoute
	for _, v := range []string{"openai", "together", "fireworks", "groq", "mistral", "deepseek", "openrouter", "google"} {
		out = append(out, mappedRoute{"/v1/messages", v})
	}
	for _, v := range []string{"anthropic", "google"} {
		out = append(out, mappedRoute{"/v1/chat/completions", v})
	}
	return out
}

// mq is a gateway with both SDK clients and a per-call case counter.
type mq struct {
	*env
	oc openai.Client
	ac anthropic.Client
	n  atomic.Int64
	// bodies, when set, lists the vendor's received bodies instead of
	// the fake's records.
	bodies func() [][]byte
}

func newMQ(t *testing.T) *mq {
	e := newEnv(t, func(c *app.Config) { c.RPM, c.TPM = 0, 0 })
	// The OpenAI SDK closes a stream's body at [DONE]; the charge trailer
	// follows it, so this client reads each body to its end first.
	oc := openai.NewClient(ooption.WithBaseURL(e.url+"/v1"), ooption.WithAPIKey(e.key), ooption.WithMaxRetries(0),
		ooption.WithHTTPClient(&http.Client{Transport: drainingTransport{http.DefaultTransport}}))
	return &mq{env: e, oc: oc, ac: e.anthropicClient()}
}

// drainingTransport makes response bodies read to EOF when closed.
type drainingTransport struct{ rt http.RoundTripper }

func (d drainingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := d.rt.RoundTrip(r)
	if err == nil {
		resp.Body = drainingBody{resp.Body}
	}
	return resp, err
}

type drainingBody struct{ io.ReadCloser }

func (b drainingBody) Close() error {
	_, _ = io.Copy(io.Discard, b.ReadCloser)
	return b.ReadCloser.Close()
}

// caseTag returns a system text unique to one call, by which the call's
// upstream request is found among the fake's records.
func (q *mq) caseTag() string { return fmt.Sprintf("QA case %d.", q.n.Add(1)) }

// vendorBody returns the body the vendor received for the call tagged tag.
func (q *mq) vendorBody(t *testing.T, tag string) []byte {
	t.Helper()
	var all [][]byte
	if q.bodies != nil {
		all = q.bodies()
	} else {
		for _, r := range q.fake.Requests() {
			all = append(all, r.Body)
		}
	}
	var found []byte
	for _, b := range all {
		if bytes.Contains(b, []byte(tag)) {
			found = b
		}
	}
	if found == nil {
		t.Fatalf("no vendor request carries %q", tag)
	}
	return found
}

// callerUsage is the usage a caller saw, in both shapes' terms: Input is
// the uncached prompt (M input_tokens; C prompt_tokens - cached - writes).
type callerUsage struct {
	Input, CacheRead, CacheWrite, Output, Prompt, Reasoning int64
}

type toolCallSeen struct {
	ID, Name, Args string
}

type thinkingSeen struct {
	Thinking, Signature string
}

// turn is one call's outcome as the caller saw it.
type turn struct {
	rid          string
	charge       string // header or trailer
	vendorBody   []byte
	text         string
	reasoning    string
	thinking     []thinkingSeen // M only
	calls        []toolCallSeen
	stop         string // caller's vocabulary
	stopSeq      string
	usage        callerUsage
	startUsage   *callerUsage // M stream: message_start's usage
	events       [][]byte     // stream: raw event data, in order
	mNext        anthropic.MessageParam
	cNext        openai.ChatCompletionMessageParamUnion
	cToolIndices []int64 // C stream: tool-call index of each fragment carrying an id
}

// mUsageWire is an M usage object.
type mUsageWire struct {
	InputTokens              int64 `json:"input_tokens"`
	CacheReadInputTokens     int64 `json:"cache_read_input_tokens"`
	CacheCreationInputTokens int64 `json:"cache_creation_input_tokens"`
	OutputTokens             int64 `json:"output_tokens"`
	OutputTokensDetails      *struct {
		ThinkingTokens int64 `json:"thinking_tokens"`
	} `json:"output_tokens_details"`
}

func (u mUsageWire) caller() callerUsage {
	c := callerUsage{Input: u.InputTokens, CacheRead: u.CacheReadInputTokens, CacheWrite: u.CacheCreationInputTokens, Output: u.OutputTokens}
	c.Prompt = c.Input + c.CacheRead + c.CacheWrite
	if u.OutputTokensDetails != nil {
		c.Reasoning = u.OutputTokensDetails.ThinkingTokens
	}
	return c
}

// cUsageWire is a C usage object.
type cUsageWire struct {
	PromptTokens        int64 `json:"prompt_tokens"`
	CompletionTokens    int64 `json:"completion_tokens"`
	TotalTokens         int64 `json:"total_tokens"`
	PromptTokensDetails *struct {
		CachedTokens     int64 `json:"cached_tokens"`
		CacheWriteTokens int64 `json:"cache_write_tokens"`
	} `json:"prompt_tokens_details"`
	CompletionTokensDetails *struct {
		ReasoningTokens int64 `json:"reasoning_tokens"`
	} `json:"completion_tokens_details"`
}

func (u cUsageWire) caller(t *testing.T) callerUsage {
	t.Helper()
	c := callerUsage{Prompt: u.PromptTokens, Output: u.CompletionTokens}
	if d := u.PromptTokensDetails; d != nil {
		c.CacheRead, c.CacheWrite = d.CachedTokens, d.CacheWriteTokens
	}
	if d := u.CompletionTokensDetails; d != nil {
		c.Reasoning = d.ReasoningTokens
	}
	c.Input = c.Prompt - c.CacheRead - c.CacheWrite
	if u.TotalTokens != u.PromptTokens+u.CompletionTokens {
		t.Errorf("total_tokens %d != prompt %d + completion %d", u.TotalTokens, u.PromptTokens, u.CompletionTokens)
	}
	return c
}

// cWire is a chat.completion or chunk, read for what the SDK keeps in
// extra fields.
type cWire struct {
	Choices []struct {
		Message *struct {
			ReasoningContent *string `json:"reasoning_content"`
		} `json:"message"`
		Delta *struct {
			Content          *string `json:"content"`
			ReasoningContent *string `json:"reasoning_content"`
			ToolCalls        []struct {
				Index    *int64 `json:"index"`
				ID       string `json:"id"`
				Function struct {
					Name      string  `json:"name"`
					Arguments *string `json:"arguments"`
				} `json:"function"`
			} `json:"tool_calls"`
		} `json:"delta"`
		FinishReason *string `json:"finish_reason"`
	} `json:"choices"`
	Usage *cUsageWire `json:"usage"`
}

// mTurn makes one M call through the Anthropic SDK.
func (q *mq) mTurn(t *testing.T, p anthropic.MessageNewParams, stream bool) *turn {
	t.Helper()
	tag := q.caseTag()
	p.System = []anthropic.TextBlockParam{{Text: tag}}
	ctx := context.Background()
	tr := &turn{}
	var hr *http.Response
	var msg *anthropic.Message
	if !stream {
		var err error
		msg, err = q.ac.Messages.New(ctx, p, aoption.WithResponseInto(&hr))
		if err != nil {
			t.Fatalf("messages: %v", err)
		}
		var w struct {
			Usage mUsageWire `json:"usage"`
		}
		if err := json.Unmarshal([]byte(msg.RawJSON()), &w); err != nil {
			t.Fatal(err)
		}
		tr.usage = w.Usage.caller()
		tr.charge = hr.Header.Get("X-Gateway-Customer-Charge-Cents")
	} else {
		s := q.ac.Messages.NewStreaming(ctx, p, aoption.WithResponseInto(&hr))
		msg = &anthropic.Message{}
		for s.Next() {
			ev := s.Current()
			raw := []byte(ev.RawJSON())
			tr.events = append(tr.events, raw)
			if err := msg.Accumulate(ev); err != nil {
				t.Fatalf("accumulate: %v", err)
			}
			switch ev.Type {
			case "message_start":
				var w struct {
					Message struct {
						Usage mUsageWire `json:"usage"`
					} `json:"message"`
				}
				_ = json.Unmarshal(raw, &w)
				u := w.Message.Usage.caller()
				tr.startUsage = &u
			case "message_delta":
				var w struct {
					Usage mUsageWire `json:"usage"`
				}
				_ = json.Unmarshal(raw, &w)
				tr.usage = w.Usage.caller()
			}
		}
		if err := s.Err(); err != nil {
			t.Fatalf("messages stream: %v", err)
		}
		s.Close()
		tr.charge = hr.Trailer.Get("X-Gateway-Customer-Charge-Cents")
		checkMEvents(t, tr.events)
		// Clients read the prompt size from message_start: an estimate
		// where the vendor tells it only at the end, never a zero.
		if su := tr.startUsage; su == nil || su.Prompt <= 0 {
			t.Errorf("message_start usage %+v", su)
		}
	}
	tr.rid = hr.Header.Get("X-Gateway-Request-Id")
	if msg.ID != tr.rid {
		t.Errorf("message id %q, want the request id %q", msg.ID, tr.rid)
	}
	for _, c := range msg.Content {
		switch c.Type {
		case "text":
			tr.text += c.Text
		case "thinking":
			tr.thinking = append(tr.thinking, thinkingSeen{c.Thinking, c.Signature})
			tr.reasoning += c.Thinking
		case "tool_use":
			tr.calls = append(tr.calls, toolCallSeen{c.ID, c.Name, string(c.Input)})
		}
	}
	tr.stop, tr.stopSeq = string(msg.StopReason), msg.StopSequence
	tr.mNext = msg.ToParam()
	tr.vendorBody = q.vendorBody(t, tag)
	return tr
}

// checkMEvents asserts the M stream's structure: indices sequential from
// 0, each block started, delta'd and stopped in order, no empty deltas.
func checkMEvents(t *testing.T, events [][]byte) {
	t.Helper()
	open, next := -1, 0
	for _, raw := range events {
		var ev struct {
			Type         string `json:"type"`
			Index        int    `json:"index"`
			ContentBlock struct {
				Type string `json:"type"`
			} `json:"content_block"`
			Delta struct {
				Type        string  `json:"type"`
				Text        *string `json:"text"`
				Thinking    *string `json:"thinking"`
				Signature   *string `json:"signature"`
				PartialJSON *string `json:"partial_json"`
			} `json:"delta"`
		}
		if err := json.Unmarshal(raw, &ev); err != nil {
			t.Fatalf("event not JSON: %s", raw)
		}
		switch ev.Type {
		case "content_block_start":
			if open >= 0 || ev.Index != next {
				t.Errorf("content_block_start %d while block %d open, next %d", ev.Index, open, next)
			}
			open = ev.Index
			next++
		case "content_block_delta":
			if ev.Index != open {
				t.Errorf("delta for block %d while %d is open: %s", ev.Index, open, raw)
			}
			for _, s := range []*string{ev.Delta.Text, ev.Delta.Thinking, ev.Delta.Signature} {
				if s != nil && *s == "" {
					t.Errorf("empty delta: %s", raw)
				}
			}
		case "content_block_stop":
			if ev.Index != open {
				t.Errorf("content_block_stop %d while %d is open", ev.Index, open)
			}
			open = -1
		}
	}
	if open >= 0 {
		t.Errorf("block %d never stopped", open)
	}
}

// cTurn makes one C call through the OpenAI SDK.
func (q *mq) cTurn(t *testing.T, p openai.ChatCompletionNewParams, stream bool) *turn {
	t.Helper()
	tag := q.caseTag()
	p.Messages = append([]openai.ChatCompletionMessageParamUnion{openai.SystemMessage(tag)}, p.Messages...)
	ctx := context.Background()
	tr := &turn{}
	var hr *http.Response
	if !stream {
		resp, err := q.oc.Chat.Completions.New(ctx, p, ooption.WithResponseInto(&hr))
		if err != nil {
			t.Fatalf("chat: %v", err)
		}
		var w cWire
		if err := json.Unmarshal([]byte(resp.RawJSON()), &w); err != nil {
			t.Fatal(err)
		}
		if len(resp.Choices) != 1 || w.Usage == nil {
			t.Fatalf("response: %s", resp.RawJSON())
		}
		m := resp.Choices[0].Message
		tr.text = m.Content
		if rc := w.Choices[0].Message.ReasoningContent; rc != nil {
			if *rc == "" {
				t.Errorf(`message has "reasoning_content":"": %s`, resp.RawJSON())
			}
			tr.reasoning = *rc
		}
		for _, c := range m.ToolCalls {
			tr.calls = append(tr.calls, toolCallSeen{c.ID, c.Function.Name, c.Function.Arguments})
		}
		tr.stop = resp.Choices[0].FinishReason
		tr.usage = w.Usage.caller(t)
		tr.cNext = m.ToParam()
		tr.charge = hr.Header.Get("X-Gateway-Customer-Charge-Cents")
		if want := "chatcmpl_" + strings.TrimPrefix(hr.Header.Get("X-Gateway-Request-Id"), "req_"); resp.ID != want {
			t.Errorf("id %q, want %q", resp.ID, want)
		}
	} else {
		p.StreamOptions = openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)}
		s := q.oc.Chat.Completions.NewStreaming(ctx, p, ooption.WithResponseInto(&hr))
		var acc openai.ChatCompletionAccumulator
		var usage *cUsageWire
		for s.Next() {
			ch := s.Current()
			acc.AddChunk(ch)
			raw := []byte(ch.RawJSON())
			tr.events = append(tr.events, raw)
			var w cWire
			if err := json.Unmarshal(raw, &w); err != nil {
				t.Fatalf("chunk not JSON: %s", raw)
			}
			if w.Usage != nil {
				usage = w.Usage
			}
			for _, c := range w.Choices {
				d := c.Delta
				if d == nil {
					continue
				}
				if d.ReasoningContent != nil {
					if *d.ReasoningContent == "" {
						t.Errorf(`empty reasoning chunk: %s`, raw)
					}
					tr.reasoning += *d.ReasoningContent
				}
				for _, tc := range d.ToolCalls {
					if tc.Index == nil {
						t.Errorf("tool call fragment without index: %s", raw)
						continue
					}
					if tc.ID != "" {
						tr.cToolIndices = append(tr.cToolIndices, *tc.Index)
					}
				}
			}
		}
		if err := s.Err(); err != nil {
			t.Fatalf("chat stream: %v", err)
		}
		s.Close()
		if len(acc.Choices) != 1 || usage == nil {
			t.Fatalf("stream: choices %d, usage %v", len(acc.Choices), usage)
		}
		m := acc.Choices[0].Message
		tr.text = m.Content
		for _, c := range m.ToolCalls {
			tr.calls = append(tr.calls, toolCallSeen{c.ID, c.Function.Name, c.Function.Arguments})
		}
		tr.stop = acc.Choices[0].FinishReason
		tr.usage = usage.caller(t)
		a := m.ToAssistantMessageParam()
		tr.cNext = openai.ChatCompletionMessageParamUnion{OfAssistant: &a}
		tr.charge = hr.Trailer.Get("X-Gateway-Customer-Charge-Cents")
	}
	tr.rid = hr.Header.Get("X-Gateway-Request-Id")
	tr.vendorBody = q.vendorBody(t, tag)
	return tr
}

// checkBilled asserts the charge the caller was told equals the ledger's,
// and that the ledger's usage is the caller's.
func (q *mq) checkBilled(t *testing.T, tr *turn) {
	t.Helper()
	var r *gw.Record
	var err error
	for range 200 {
		if r, err = q.m.Store().Record(context.Background(), tr.rid); err == nil {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err != nil {
		t.Fatalf("record %s: %v", tr.rid, err)
	}
	if r.Note != "" && r.Note != "openrouter reported cost" {
		t.Errorf("record note %q", r.Note)
	}
	if tr.charge != r.Charge.CentsString() || r.Charge <= 0 {
		t.Errorf("caller told charge %q, ledger %s", tr.charge, r.Charge.CentsString())
	}
	if r.Usage.OutputTokens != tr.usage.Output || r.Usage.CacheReadTokens != tr.usage.CacheRead ||
		r.Usage.PromptTokens() != tr.usage.Prompt {
		t.Errorf("ledger usage %+v, caller saw %+v", r.Usage, tr.usage)
	}
}

// ask makes a one-message call on route r.
func (q *mq) ask(t *testing.T, r mappedRoute, text string, stream bool, tools bool) *turn {
	t.Helper()
	if r.messages() {
		return q.mTurn(t, mParams(r, text, tools), stream)
	}
	return q.cTurn(t, cParams(r, text, tools), stream)
}

func timeSchema() map[string]any {
	return map[string]any{
		"type":       "object",
		"properties": map[string]any{"zone": map[string]any{"type": "string"}},
		"required":   []string{"zone"},
	}
}

func mParams(r mappedRoute, text string, tools bool) anthropic.MessageNewParams {
	p := anthropic.MessageNewParams{
		Model:     anthropic.Model(r.model()),
		MaxTokens: 512,
		Messages:  []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock(text))},
	}
	if tools {
		for name, s := range map[string]map[string]any{"get_weather": weatherSchema(), "get_time": timeSchema()} {
			p.Tools = append(p.Tools, anthropic.ToolUnionParamOfTool(anthropic.ToolInputSchemaParam{
				Properties: s["properties"], Required: s["required"].([]string),
			}, name))
		}
		slices.SortFunc(p.Tools, func(a, b anthropic.ToolUnionParam) int { return -strings.Compare(a.OfTool.Name, b.OfTool.Name) })
	}
	return p
}

func cParams(r mappedRoute, text string, tools bool) openai.ChatCompletionNewParams {
	p := openai.ChatCompletionNewParams{
		Model:    r.model(),
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage(text)},
	}
	if tools {
		p.Tools = []openai.ChatCompletionToolUnionParam{
			openai.ChatCompletionFunctionTool(openai.FunctionDefinitionParam{Name: "get_weather", Parameters: weatherSchema()}),
			openai.ChatCompletionFunctionTool(openai.FunctionDefinitionParam{Name: "get_time", Parameters: timeSchema()}),
		}
	}
	return p
}

// both runs f on every mapped route, not streamed and streamed, and
// checks that both report the same output tokens.
func (q *mq) both(t *testing.T, f func(t *testing.T, r mappedRoute, stream bool) *turn) {
	for _, r := range mappedRoutes() {
		t.Run(r.String(), func(t *testing.T) {
			var out [2]*turn
			for i, stream := range []bool{false, true} {
				name := "plain"
				if stream {
					name = "stream"
				}
				t.Run(name, func(t *testing.T) { out[i] = f(t, r, stream) })
			}
			if out[0] != nil && out[1] != nil && out[0].usage.Output != out[1].usage.Output {
				t.Errorf("output tokens: streamed %d, not streamed %d", out[1].usage.Output, out[0].usage.Output)
			}
		})
	}
}

// TestMappedReasoningReachesCaller: vendor reasoning becomes M thinking
// blocks / C reasoning_content, whole, never as empty pieces.
func TestMappedReasoningReachesCaller(t *testing.T) {
	q := newMQ(t)
	q.both(t, func(t *testing.T, r mappedRoute, stream bool) *turn {
		tr := q.ask(t, r, "Think first. [fake:reasoning]", stream, false)
		model := nativeModels[r.vendor]
		if tr.text != fakevendor.DefaultText(r.vendor, model) {
			t.Errorf("text = %q", tr.text)
		}
		want := fakevendor.ReasoningText(model)
		if r.vendor == "openai" {
			want = "" // OpenAI shows reasoning only in usage
			if tr.usage.Reasoning == 0 {
				t.Errorf("reasoning tokens not reported: %+v", tr.usage)
			}
		}
		if tr.reasoning != want {
			t.Errorf("reasoning = %q, want %q", tr.reasoning, want)
		}
		for i, b := range tr.thinking {
			if b.Thinking == "" && b.Signature == "" {
				t.Errorf("thinking block %d is empty and unsigned", i)
			}
		}
		if r.messages() && want != "" && (len(tr.thinking) != 1 || tr.thinking[0].Thinking != want) {
			t.Errorf("thinking blocks = %+v", tr.thinking)
		}
		if tr.stop != "end_turn" && tr.stop != "stop" {
			t.Errorf("stop = %q", tr.stop)
		}
		if tr.usage.Output <= 0 {
			t.Errorf("usage = %+v", tr.usage)
		}
		q.checkBilled(t, tr)
		return tr
	})
}

// TestMappedCacheUsage: cache reads and writes reach the caller in its
// own fields, the prompt total is the vendor's, nothing is negative.
func TestMappedCacheUsage(t *testing.T) {
	q := newMQ(t)
	q.both(t, func(t *testing.T, r mappedRoute, stream bool) *turn {
		tr := q.ask(t, r, "Remember this. [fake:cache]", stream, false)
		p := int64(fakevendor.PromptTokens(tr.vendorBody))
		wantRead, wantWrite := p/2, int64(0)
		switch r.vendor {
		case "mistral":
			wantRead = 0
		case "openai", "openrouter", "anthropic":
			wantWrite = min(p/4, p-wantRead)
		}
		u := tr.usage
		if u.Input < 0 || u.CacheRead != wantRead || u.CacheWrite != wantWrite || u.Prompt != p || u.Input+u.CacheRead+u.CacheWrite != p {
			t.Errorf("usage %+v; want prompt %d = input %d + read %d + write %d", u, p, p-wantRead-wantWrite, wantRead, wantWrite)
		}
		q.checkBilled(t, tr)
		return tr
	})
}

// TestMappedParallelToolCalls: two parallel calls with distinct ids and
// indices, then a round trip answering both.
func TestMappedParallelToolCalls(t *testing.T) {
	q := newMQ(t)
	q.both(t, func(t *testing.T, r mappedRoute, stream bool) *turn {
		const ask = "Weather and time? [fake:tools=2]"
		tr := q.ask(t, r, ask, stream, true)
		if len(tr.calls) != 2 {
			t.Fatalf("calls = %+v", tr.calls)
		}
		a, b := tr.calls[0], tr.calls[1]
		if a.ID == "" || a.ID == b.ID || a.Name != "get_weather" || b.Name != "get_time" {
			t.Errorf("calls = %+v", tr.calls)
		}
		for _, c := range tr.calls {
			var args map[string]any
			if err := json.Unmarshal([]byte(c.Args), &args); err != nil || len(args) != 1 || args["location"] != "x" && args["zone"] != "x" {
				t.Errorf("arguments %q", c.Args)
			}
		}
		if stream && !r.messages() && !slices.Equal(tr.cToolIndices, []int64{0, 1}) {
			t.Errorf("tool call indices = %v, want [0 1]", tr.cToolIndices)
		}
		if tr.stop != "tool_use" && tr.stop != "tool_calls" {
			t.Errorf("stop = %q", tr.stop)
		}
		q.checkBilled(t, tr)

		var next *turn
		if r.messages() {
			p := mParams(r, ask, true)
			p.Messages = append(p.Messages, tr.mNext, anthropic.NewUserMessage(
				anthropic.NewToolResultBlock(a.ID, "sunny", false), anthropic.NewToolResultBlock(b.ID, "noon", false)))
			next = q.mTurn(t, p, stream)
		} else {
			p := cParams(r, ask, true)
			p.Messages = append(p.Messages, tr.cNext, openai.ToolMessage("sunny", a.ID), openai.ToolMessage("noon", b.ID))
			next = q.cTurn(t, p, stream)
		}
		if next.text != "Tool said: sunny | noon" {
			t.Errorf("final answer = %q", next.text)
		}
		q.checkBilled(t, next)
		return tr
	})
}

// TestMappedStopReasons: each vendor stop reason arrives in the caller's
// vocabulary, the same streamed and not.
func TestMappedStopReasons(t *testing.T) {
	q := newMQ(t)
	for _, tc := range []struct{ directive, m, c string }{
		{"[fake:stop=length]", "max_tokens", "length"},
		{"[fake:stop=content_filter]", "refusal", "content_filter"},
		{"[fake:stop=stop_sequence]", "end_turn", "stop"},
	} {
		t.Run(tc.directive, func(t *testing.T) {
			q.both(t, func(t *testing.T, r mappedRoute, stream bool) *turn {
				tr := q.ask(t, r, "Go on. "+tc.directive, stream, false)
				want := tc.c
				if r.messages() {
					want = tc.m
				}
				if tr.stop != want {
					t.Errorf("stop = %q, want %q", tr.stop, want)
				}
				if tr.stopSeq != "" {
					t.Errorf("stop_sequence = %q from a vendor that does not report one", tr.stopSeq)
				}
				q.checkBilled(t, tr)
				return tr
			})
		})
	}
	t.Run("vendor-specific", func(t *testing.T) {
		for _, tc := range []struct {
			r          mappedRoute
			directive  string
			want       string
			wantStream string
		}{
			{mappedRoute{"/v1/messages", "together"}, "[fake:stop=eos]", "end_turn", "end_turn"},
			{mappedRoute{"/v1/messages", "mistral"}, "[fake:stop=model_length]", "max_tokens", "max_tokens"},
			{mappedRoute{"/v1/chat/completions", "anthropic"}, "[fake:stop=pause_turn]", "stop", "stop"},
			{mappedRoute{"/v1/chat/completions", "google"}, "[fake:stop=RECITATION]", "content_filter", "content_filter"},
			{mappedRoute{"/v1/messages", "google"}, "[fake:stop=RECITATION]", "refusal", "refusal"},
		} {
			for _, stream := range []bool{false, true} {
				t.Run(fmt.Sprintf("%s/%s/%v", tc.r, tc.directive, stream), func(t *testing.T) {
					tr := q.ask(t, tc.r, "Go on. "+tc.directive, stream, false)
					if tr.stop != tc.want {
						t.Errorf("stop = %q, want %q", tr.stop, tc.want)
					}
				})
			}
		}
	})
}

// TestMappedStreamVendorError: a vendor error, a cut connection or a
// garbage record after the stream began becomes the caller's shape's
// in-stream error, which the SDKs raise; nothing is charged.
func TestMappedStreamVendorError(t *testing.T) {
	q := newMQ(t)
	for _, r := range mappedRoutes() {
		for _, directive := range []string{"[fake:error-after=2]", "[fake:break=2]", "[fake:malformed]"} {
			t.Run(r.String()+"/"+directive, func(t *testing.T) {
				var body []byte
				if r.messages() {
					body = messagesBody(r.model(), "Go on. "+directive, true, "")
				} else {
					body = chatBody(r.model(), "Go on. "+directive, true, "")
				}
				resp := q.post(r.path, q.key, body)
				got := readAll(t, resp.Body)
				if resp.StatusCode != 200 {
					t.Fatalf("status %d: %s", resp.StatusCode, got)
				}
				rid := resp.Header.Get("X-Gateway-Request-Id")
				rd := sse.NewReader(bytes.NewReader(got))
				var evs []sse.Event
				for rd.Next() {
					ev := rd.Event()
					ev.Data = bytes.Clone(ev.Data)
					evs = append(evs, ev)
				}
				if len(evs) < 2 {
					t.Fatalf("stream:\n%s", got)
				}
				var errData []byte
				if r.messages() {
					last := evs[len(evs)-1]
					if last.Type != "error" {
						t.Fatalf("last event %q, want error:\n%s", last.Type, got)
					}
					errData = last.Data
				} else {
					if string(evs[len(evs)-1].Data) != "[DONE]" {
						t.Fatalf("stream does not end with [DONE]:\n%s", got)
					}
					errData = evs[len(evs)-2].Data
				}
				var env struct {
					Type  string `json:"type"`
					Error struct {
						Type, Message string
						RequestID     string `json:"request_id"`
					} `json:"error"`
				}
				if err := json.Unmarshal(errData, &env); err != nil || env.Error.Message == "" {
					t.Fatalf("error event %s", errData)
				}
				if r.messages() {
					if env.Type != "error" || env.Error.Type != "overloaded_error" && env.Error.Type != "api_error" {
						t.Errorf("M error event %s", errData)
					}
				} else if env.Error.Type != "overloaded" && env.Error.Type != "upstream_error" {
					t.Errorf("C error chunk %s", errData)
				}
				if env.Error.RequestID != rid {
					t.Errorf("error request_id %q, want %q", env.Error.RequestID, rid)
				}
				if strings.Contains(string(got), "message_stop") || strings.Contains(string(got), `"finish_reason":"stop"`) {
					t.Errorf("a failed stream reports a normal end:\n%s", got)
				}
				if c := resp.Trailer.Get("X-Gateway-Customer-Charge-Cents"); c != "0.000000" {
					t.Errorf("a broken stream was charged %q", c)
				}
				// The SDKs raise it.
				if r.messages() {
					s := q.ac.Messages.NewStreaming(context.Background(), mParams(r, "Go on. "+directive, false))
					for s.Next() {
					}
					if s.Err() == nil {
						t.Error("the Anthropic SDK saw no error")
					}
					s.Close()
				} else {
					s := q.oc.Chat.Completions.NewStreaming(context.Background(), cParams(r, "Go on. "+directive, false))
					for s.Next() {
					}
					if s.Err() == nil {
						t.Error("the OpenAI SDK saw no error")
					}
					s.Close()
				}
			})
		}
	}
}

// TestMappedVendorHTTPErrors: vendor HTTP errors reach the caller in its
// envelope, 429 with the vendor's Retry-After.
func TestMappedVendorHTTPErrors(t *testing.T) {
	q := newMQ(t)
	for _, r := range mappedRoutes() {
		for _, tc := range []struct {
			directive string
			status    int
			typ       string
		}{
			{"[fake:status=429][fake:retry=7]", 429, "rate_limited"},
			{"[fake:status=400]", 400, "invalid_request"},
		} {
			for _, stream := range []bool{false, true} {
				t.Run(fmt.Sprintf("%s/%d/%v", r, tc.status, stream), func(t *testing.T) {
					var body []byte
					if r.messages() {
						body = messagesBody(r.model(), "Go on. "+tc.directive, stream, "")
					} else {
						body = chatBody(r.model(), "Go on. "+tc.directive, stream, "")
					}
					resp := q.post(r.path, q.key, body)
					got := readAll(t, resp.Body)
					if resp.StatusCode != tc.status {
						t.Fatalf("status %d, want %d: %s", resp.StatusCode, tc.status, got)
					}
					var env struct {
						Type  string `json:"type"`
						Error struct {
							Type, Message string
							RequestID     string `json:"request_id"`
						} `json:"error"`
					}
					if err := json.Unmarshal(got, &env); err != nil {
						t.Fatalf("not JSON: %s", got)
					}
					if env.Error.Type != tc.typ || env.Error.RequestID != resp.Header.Get("X-Gateway-Request-Id") ||
						!strings.HasPrefix(env.Error.Message, r.vendor+":") {
						t.Errorf("envelope %s", got)
					}
					if r.messages() != (env.Type == "error") {
						t.Errorf("top-level type %q on %s", env.Type, r.path)
					}
					if tc.status == 429 && resp.Header.Get("Retry-After") != "7" {
						t.Errorf("Retry-After = %q, want 7", resp.Header.Get("Retry-After"))
					}
				})
			}
		}
	}
}

// tinyPNG is a 1x1 PNG, base64.
const tinyPNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="

// TestMappedImages: an image reaches the vendor in the vendor's format.
func TestMappedImages(t *testing.T) {
	q := newMQ(t)
	for _, r := range mappedRoutes() {
		t.Run(r.String(), func(t *testing.T) {
			var tr *turn
			if r.messages() {
				p := mParams(r, "", false)
				p.Messages = []anthropic.MessageParam{anthropic.NewUserMessage(
					anthropic.NewImageBlockBase64("image/png", tinyPNG), anthropic.NewTextBlock("What is this?"))}
				tr = q.mTurn(t, p, false)
			} else {
				p := cParams(r, "", false)
				p.Messages = []openai.ChatCompletionMessageParamUnion{openai.UserMessage([]openai.ChatCompletionContentPartUnionParam{
					openai.ImageContentPart(openai.ChatCompletionContentPartImageImageURLParam{URL: "data:image/png;base64," + tinyPNG}),
					openai.TextContentPart("What is this?"),
				})}
				tr = q.cTurn(t, p, false)
			}
			var want string
			switch r.vendor {
			case "google":
				want = `{"inlineData":{"mimeType":"image/png","data":"` + tinyPNG + `"}}`
			case "anthropic":
				want = `"source":{"type":"base64","media_type":"image/png","data":"` + tinyPNG + `"}`
			default:
				want = `"image_url":{"url":"data:image/png;base64,` + tinyPNG + `"}`
			}
			if !bytes.Contains(tr.vendorBody, []byte(want)) {
				t.Errorf("vendor body lacks %s:\n%s", want, tr.vendorBody)
			}
			if tr.text == "" {
				t.Error("no answer")
			}
		})
	}
}

// TestMappedMultiTurnThinkingReplay: reasoning + parallel tool calls over
// several turns, the history (thinking, signatures, calls) replayed as the
// SDK hands it back, must satisfy the vendor's replay rules.
func TestMappedMultiTurnThinkingReplay(t *testing.T) {
	q := newMQ(t)
	routes := []mappedRoute{
		{"/v1/messages", "google"}, {"/v1/chat/completions", "google"},
		{"/v1/chat/completions", "anthropic"},
		{"/v1/messages", "deepseek"}, {"/v1/messages", "mistral"}, {"/v1/messages", "openrouter"},
	}
	for _, r := range routes {
		for _, stream := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/%v", r, stream), func(t *testing.T) {
				const ask = "Weather and time? [fake:reasoning][fake:tools=2]"
				if r.messages() {
					p := mParams(r, ask, true)
					for round := range 2 {
						tr := q.mTurn(t, p, stream)
						if len(tr.calls) != 2 || len(tr.thinking) != 1 {
							t.Fatalf("round %d: calls %+v thinking %+v", round, tr.calls, tr.thinking)
						}
						p.Messages = append(p.Messages, tr.mNext, anthropic.NewUserMessage(
							anthropic.NewToolResultBlock(tr.calls[0].ID, "sunny", false),
							anthropic.NewToolResultBlock(tr.calls[1].ID, "noon", false)))
						fin := q.mTurn(t, p, stream)
						if fin.text != "Tool said: sunny | noon" {
							t.Fatalf("round %d: answer %q", round, fin.text)
						}
						checkReplay(t, r, fin.vendorBody)
						p.Messages = append(p.Messages, fin.mNext, anthropic.NewUserMessage(anthropic.NewTextBlock("And again? [fake:reasoning][fake:tools=2]")))
					}
				} else {
					p := cParams(r, ask, true)
					for round := range 2 {
						tr := q.cTurn(t, p, stream)
						if len(tr.calls) != 2 || tr.reasoning == "" {
							t.Fatalf("round %d: calls %+v reasoning %q", round, tr.calls, tr.reasoning)
						}
						p.Messages = append(p.Messages, tr.cNext, openai.ToolMessage("sunny", tr.calls[0].ID), openai.ToolMessage("noon", tr.calls[1].ID))
						fin := q.cTurn(t, p, stream)
						if fin.text != "Tool said: sunny | noon" {
							t.Fatalf("round %d: answer %q", round, fin.text)
						}
						checkReplay(t, r, fin.vendorBody)
						p.Messages = append(p.Messages, fin.cNext, openai.UserMessage("And again? [fake:reasoning][fake:tools=2]"))
					}
				}
			})
		}
	}
}

// geminiRequest is the part of a Gemini generateContent body the
// history checks read.
type geminiRequest struct {
	Contents []struct {
		Role  string `json:"role"`
		Parts []struct {
			Text             string          `json:"text"`
			Thought          bool            `json:"thought"`
			FunctionCall     json.RawMessage `json:"functionCall"`
			ThoughtSignature string          `json:"thoughtSignature"`
		} `json:"parts"`
	} `json:"contents"`
}

// checkReplay asserts vendor-specific replay details in a history the
// gateway sent.
func checkReplay(t *testing.T, r mappedRoute, body []byte) {
	t.Helper()
	switch r.vendor {
	case "google":
		// Every replayed functionCall part carries the signature Gemini
		// gave it (the fake rejects a first call without one; check all).
		var req geminiRequest
		if err := json.Unmarshal(body, &req); err != nil {
			t.Fatal(err)
		}
		calls := 0
		for _, c := range req.Contents {
			for _, p := range c.Parts {
				if p.FunctionCall != nil {
					calls++
					if p.ThoughtSignature == "" || p.ThoughtSignature == "skip_thought_signature_validator" {
						t.Errorf("replayed functionCall without its signature: %s", p.FunctionCall)
					}
				}
			}
		}
		if calls == 0 {
			t.Errorf("no functionCall replayed:\n%s", body)
		}
	case "anthropic":
		if bytes.Contains(body, []byte(`"type":"thinking"`)) && bytes.Contains(body, []byte(`"signature":""`)) {
			t.Errorf("unsigned thinking replayed to Anthropic:\n%s", body)
		}
	case "deepseek":
		if !bytes.Contains(body, []byte(`"reasoning_content":"`+fakevendor.ReasoningText(nativeModels["deepseek"])+`"`)) {
			t.Errorf("DeepSeek reasoning not replayed as reasoning_content:\n%s", body)
		}
	}
}

// geminiScript is a scripted Gemini endpoint for answers the fake does not
// produce (signatures on text and signature-only parts, as Gemini 3
// sends them). Each call answers the next records; requests are kept.
type geminiScript struct {
	mu      sync.Mutex
	records [][]string // per call: the JSON records of the answer
	bodies  [][]byte
}

func (g *geminiScript) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	g.mu.Lock()
	g.bodies = append(g.bodies, body)
	var recs []string
	if len(g.records) > 0 {
		recs, g.records = g.records[0], g.records[1:]
	}
	g.mu.Unlock()
	if strings.HasSuffix(r.URL.Path, ":streamGenerateContent") {
		w.Header().Set("Content-Type", "text/event-stream")
		for _, rec := range recs {
			fmt.Fprintf(w, "data: %s\r\n\r\n", rec)
		}
		return
	}
	// Non-stream: merge the records' parts into one response.
	var parts []json.RawMessage
	var last map[string]json.RawMessage
	for _, rec := range recs {
		var x struct {
			Candidates []struct {
				Content struct {
					Parts []json.RawMessage `json:"parts"`
				} `json:"content"`
			} `json:"candidates"`
		}
		_ = json.Unmarshal([]byte(rec), &x)
		for _, c := range x.Candidates {
			parts = append(parts, c.Content.Parts...)
		}
		_ = json.Unmarshal([]byte(rec), &last)
	}
	var cand []map[string]any
	_ = json.Unmarshal(last["candidates"], &cand)
	cand[0]["content"] = map[string]any{"role": "model", "parts": parts}
	out, _ := json.Marshal(map[string]any{"candidates": cand, "usageMetadata": last["usageMetadata"], "modelVersion": "gemini-3-flash", "responseId": "resp1"})
	w.Header().Set("Content-Type", "application/json")
	w.Write(out)
}

func (g *geminiScript) push(recs ...string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.records = append(g.records, recs)
}

func (g *geminiScript) last() []byte {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.bodies[len(g.bodies)-1]
}

func geminiRecord(parts string, finish string) string {
	f := ""
	if finish != "" {
		f = `,"finishReason":"` + finish + `"`
	}
	return `{"candidates":[{"content":{"role":"model","parts":[` + parts + `]}` + f + `,"index":0}],` +
		`"usageMetadata":{"promptTokenCount":20,"candidatesTokenCount":5,"thoughtsTokenCount":3,"totalTokenCount":28},"modelVersion":"gemini-3-flash","responseId":"resp1"}`
}

// TestMappedGeminiSignatures: Gemini 3 puts thought signatures on text
// parts, on signature-only parts and on the first of parallel function
// calls. Callers of either shape must see no empty reasoning, M callers
// get thought signatures on their thinking blocks and no block after the
// answer's text, and the next turn of either shape must put each back
// where Gemini sent it (the text's from the gateway's client state).
func TestMappedGeminiSignatures(t *testing.T) {
	g := &geminiScript{}
	srv := httptest.NewServer(g)
	t.Cleanup(srv.Close)
	q := &mq{}
	e := newEnv(t, func(c *app.Config) {
		c.RPM, c.TPM = 0, 0
		c.Vendors["google"] = app.VendorConfig{BaseURL: srv.URL, APIKey: "k"}
	})
	q.env, q.ac = e, e.anthropicClient()
	q.bodies = func() [][]byte {
		g.mu.Lock()
		defer g.mu.Unlock()
		return slices.Clone(g.bodies)
	}
	q.oc = openai.NewClient(ooption.WithBaseURL(e.url+"/v1"), ooption.WithAPIKey(e.key), ooption.WithMaxRetries(0),
		ooption.WithHTTPClient(&http.Client{Transport: drainingTransport{http.DefaultTransport}}))
	const (
		sigText = "c2lnLXRleHQ="     // on the final empty text part
		sigCall = "c2lnLWNhbGw="     // on the first function call
		sigThk  = "c2lnLXRob3VnaHQ=" // on a thought part
	)
	textTurn := []string{
		geminiRecord(`{"text":"Let me think.","thought":true,"thoughtSignature":"`+sigThk+`"}`, ""),
		geminiRecord(`{"text":"Hello"}`, ""),
		geminiRecord(`{"text":"","thoughtSignature":"`+sigText+`"}`, "STOP"),
	}
	toolTurn := []string{
		geminiRecord(`{"text":"Tools.","thought":true}`, ""),
		geminiRecord(`{"functionCall":{"name":"get_weather","args":{"location":"x"}},"thoughtSignature":"`+sigCall+`"},{"functionCall":{"name":"get_time","args":{"zone":"x"}}}`, "STOP"),
	}
	answer := []string{geminiRecord(`{"text":"Done."}`, "STOP")}
	r := mappedRoute{"/v1/messages", "google"}
	for _, stream := range []bool{false, true} {
		t.Run(fmt.Sprintf("M/%v", stream), func(t *testing.T) {
			g.push(textTurn...)
			p := mParams(r, "Hi", true)
			tr := q.mTurn(t, p, stream)
			if tr.text != "Hello" || tr.reasoning != "Let me think." {
				t.Fatalf("text %q reasoning %q", tr.text, tr.reasoning)
			}
			// The text's signature is no block after the answer (Claude
			// Code would show an empty result): the gateway keeps it and
			// puts it back on the text when the turn is replayed.
			if len(tr.thinking) != 1 || !strings.HasSuffix(tr.thinking[0].Signature, sigThk) {
				t.Errorf("thinking blocks %+v", tr.thinking)
			}
			if n := bytes.Count(bytes.Join(tr.events, nil), []byte(`"type":"signature_delta"`)); stream && n != 1 {
				t.Errorf("%d signature deltas, want one per thinking block", n)
			}
			p.Messages = append(p.Messages, tr.mNext, anthropic.NewUserMessage(anthropic.NewTextBlock("Weather?")))
			g.push(toolTurn...)
			tr = q.mTurn(t, p, stream)
			if len(tr.calls) != 2 {
				t.Fatalf("calls %+v", tr.calls)
			}
			checkGeminiHistory(t, g.last(), 1, sigThk, sigText, "")
			p.Messages = append(p.Messages, tr.mNext, anthropic.NewUserMessage(
				anthropic.NewToolResultBlock(tr.calls[0].ID, "sunny", false), anthropic.NewToolResultBlock(tr.calls[1].ID, "noon", false)))
			g.push(answer...)
			tr = q.mTurn(t, p, stream)
			if tr.text != "Done." {
				t.Errorf("answer %q", tr.text)
			}
			checkGeminiHistory(t, g.last(), 2, sigThk, sigText, sigCall)
		})
	}
	r = mappedRoute{"/v1/chat/completions", "google"}
	for _, stream := range []bool{false, true} {
		t.Run(fmt.Sprintf("C/%v", stream), func(t *testing.T) {
			g.push(textTurn...)
			p := cParams(r, "Hi", true)
			tr := q.cTurn(t, p, stream)
			if tr.text != "Hello" || tr.reasoning != "Let me think." {
				t.Fatalf("text %q reasoning %q", tr.text, tr.reasoning)
			}
			p.Messages = append(p.Messages, tr.cNext, openai.UserMessage("Weather?"))
			g.push(toolTurn...)
			tr = q.cTurn(t, p, stream)
			if len(tr.calls) != 2 {
				t.Fatalf("calls %+v", tr.calls)
			}
			p.Messages = append(p.Messages, tr.cNext, openai.ToolMessage("sunny", tr.calls[0].ID), openai.ToolMessage("noon", tr.calls[1].ID))
			g.push(answer...)
			tr = q.cTurn(t, p, stream)
			if tr.text != "Done." {
				t.Errorf("answer %q", tr.text)
			}
			checkGeminiHistory(t, g.last(), 2, "", sigText, sigCall)
		})
	}
}

// checkGeminiHistory asserts where signatures sit in the history sent to
// Gemini: the thought signature on its thought part, the text signature on
// the "Hello" text part, the call signature on the first functionCall of
// the last model turn and none on the second.
func checkGeminiHistory(t *testing.T, body []byte, modelTurns int, sigThk, sigText, sigCall string) {
	t.Helper()
	var req geminiRequest
	if err := json.Unmarshal(body, &req); err != nil {
		t.Fatal(err)
	}
	var model []int
	for i, c := range req.Contents {
		if c.Role == "model" {
			model = append(model, i)
		}
	}
	if len(model) != modelTurns {
		t.Fatalf("%d model turns, want %d:\n%s", len(model), modelTurns, body)
	}
	first := req.Contents[model[0]].Parts
	var gotThk, gotText string
	for _, p := range first {
		switch {
		case p.Thought && p.ThoughtSignature != "":
			gotThk = p.ThoughtSignature
		case p.Text == "Hello":
			gotText = p.ThoughtSignature
		case p.Text == "" && !p.Thought && p.FunctionCall == nil && p.ThoughtSignature != "" && sigText != "":
			gotText = p.ThoughtSignature // a separate signature-only part is what Gemini sent, too
		}
	}
	if gotThk != sigThk || gotText != sigText {
		t.Errorf("first model turn signatures: thought %q (want %q), text %q (want %q):\n%s", gotThk, sigThk, gotText, sigText, body)
	}
	if sigCall == "" {
		return
	}
	var sigs []string
	for _, p := range req.Contents[model[len(model)-1]].Parts {
		if p.FunctionCall != nil {
			sigs = append(sigs, p.ThoughtSignature)
		}
	}
	if len(sigs) != 2 || sigs[0] != sigCall || sigs[1] != "" && sigs[1] != "skip_thought_signature_validator" {
		t.Errorf("function call signatures %q, want [%q, none]:\n%s", sigs, sigCall, body)
	}
}

// TestMappedCrossVendorHistory: a conversation started on Gemini (thinking
// with Gemini signatures, tool calls whose ids carry signatures) continues
// on other vendors: the history must satisfy their rules (OpenAI's
// 40-character tool ids, Mistral's 9, DeepSeek's reasoning_content,
// Anthropic's pairing and signatures).
func TestMappedCrossVendorHistory(t *testing.T) {
	q := newMQ(t)
	const ask = "Weather and time? [fake:reasoning][fake:tools=2]"
	for _, stream := range []bool{false, true} {
		g := mappedRoute{"/v1/messages", "google"}
		p := mParams(g, ask, true)
		tr := q.mTurn(t, p, stream)
		if len(tr.calls) != 2 {
			t.Fatalf("calls %+v", tr.calls)
		}
		p.Messages = append(p.Messages, tr.mNext, anthropic.NewUserMessage(
			anthropic.NewToolResultBlock(tr.calls[0].ID, "sunny", false), anthropic.NewToolResultBlock(tr.calls[1].ID, "noon", false)))
		for _, v := range []string{"openai", "mistral", "deepseek", "openrouter", "groq", "together", "fireworks"} {
			t.Run(fmt.Sprintf("M-google-then-%s/%v", v, stream), func(t *testing.T) {
				r := mappedRoute{"/v1/messages", v}
				p := p
				p.Model = anthropic.Model(r.model())
				fin := q.mTurn(t, p, stream)
				if fin.text != "Tool said: sunny | noon" {
					t.Errorf("answer %q", fin.text)
				}
				if bytes.Contains(fin.vendorBody, []byte("gemini:")) || bytes.Contains(fin.vendorBody, []byte("_gtr_")) {
					t.Errorf("Gemini signatures reached %s:\n%s", v, fin.vendorBody)
				}
			})
		}
		t.Run(fmt.Sprintf("C-google-then-anthropic/%v", stream), func(t *testing.T) {
			cp := cParams(mappedRoute{"/v1/chat/completions", "google"}, ask, true)
			tr := q.cTurn(t, cp, stream)
			if len(tr.calls) != 2 {
				t.Fatalf("calls %+v", tr.calls)
			}
			cp.Messages = append(cp.Messages, tr.cNext, openai.ToolMessage("sunny", tr.calls[0].ID), openai.ToolMessage("noon", tr.calls[1].ID))
			cp.Model = mappedRoute{"/v1/chat/completions", "anthropic"}.model()
			fin := q.cTurn(t, cp, stream)
			if fin.text != "Tool said: sunny | noon" {
				t.Errorf("answer %q", fin.text)
			}
		})
	}
}

// TestMappedRequestControls: reasoning, sampling, stop and tool-choice
// controls reach each vendor in its own terms, and what a vendor cannot
// take is reported in x-gateway-dropped-fields.
func TestMappedRequestControls(t *testing.T) {
	e := newEnv(t, func(c *app.Config) { c.RPM, c.TPM = 0, 0 })
	mTools := `,"tools":[{"name":"w","input_schema":{"type":"object","properties":{"a":{"type":"string"}},"required":["a"]}}]`
	cTools := `,"tools":[{"type":"function","function":{"name":"w","parameters":{"type":"object","properties":{"a":{"type":"string"}},"required":["a"]}}}]`
	for _, tc := range []struct {
		name, path, model, extra string
		want, absent             []string
		dropped                  string
	}{
		{"M-openai reasoning drops sampling", "/v1/messages", "openai/gpt-6-sol",
			`,"thinking":{"type":"enabled","budget_tokens":2000},"temperature":0.3,"stop_sequences":["END"],"metadata":{"user_id":"u1"},"tool_choice":{"type":"any"}` + mTools,
			[]string{`"reasoning_effort":"low"`, `"stop":["END"]`, `"tool_choice":"required"`, `"safety_identifier":"u1"`, `"max_completion_tokens":256`},
			[]string{`"temperature"`}, "temperature"},
		{"M-openai sampling without reasoning", "/v1/messages", "openai/gpt-6-sol", `,"temperature":0.3`,
			[]string{`"temperature":0.3`}, []string{`"reasoning_effort"`}, ""},
		{"M-deepseek thinking off", "/v1/messages", "deepseek/deepseek-flash", `,"thinking":{"type":"disabled"},"top_k":3`,
			[]string{`"thinking":{"type":"disabled"}`}, []string{`"top_k"`}, "top_k"},
		{"M-google thinking and named tool", "/v1/messages", "google/gemini-3-flash",
			`,"thinking":{"type":"enabled","budget_tokens":9000},"stop_sequences":["END"],"tool_choice":{"type":"tool","name":"w"}` + mTools,
			[]string{`"thinkingConfig":{"includeThoughts":true,"thinkingLevel":"HIGH"}`, `"stopSequences":["END"]`, `"mode":"ANY","allowedFunctionNames":["w"]`}, nil, ""},
		{"C-anthropic effort and forced tool", "/v1/chat/completions", "anthropic/claude-sonnet-5-5",
			`,"reasoning_effort":"high","temperature":1.5,"stop":"END","user":"u1","tool_choice":"required","max_tokens":5000` + cTools,
			[]string{`"output_config":{"effort":"high"}`, `"stop_sequences":["END"]`, `"tool_choice":{"type":"auto"}`, `"metadata":{"user_id":"u1"}`, `"max_tokens":5000`},
			[]string{`"temperature"`}, "temperature,tool_choice"},
		{"C-google effort", "/v1/chat/completions", "google/gemini-3-flash", `,"reasoning_effort":"low","stop":["END"],"seed":5` + cTools,
			[]string{`"thinkingConfig":{"includeThoughts":true,"thinkingLevel":"LOW"}`, `"stopSequences":["END"]`, `"seed":5`}, nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var body []byte
			if tc.path == "/v1/messages" {
				body = messagesBody(tc.model, "hi", false, tc.extra)
			} else {
				body = chatBody(tc.model, "hi", false, tc.extra)
			}
			resp := e.post(tc.path, e.key, body)
			got := readAll(t, resp.Body)
			if resp.StatusCode != 200 {
				t.Fatalf("status %d: %s", resp.StatusCode, got)
			}
			sent := e.lastRequest().Body
			for _, w := range tc.want {
				if !bytes.Contains(sent, []byte(w)) {
					t.Errorf("vendor body lacks %s:\n%s", w, sent)
				}
			}
			for _, a := range tc.absent {
				if bytes.Contains(sent, []byte(a)) {
					t.Errorf("vendor body has %s:\n%s", a, sent)
				}
			}
			if d := resp.Header.Get("X-Gateway-Dropped-Fields"); d != tc.dropped {
				t.Errorf("x-gateway-dropped-fields = %q, want %q", d, tc.dropped)
			}
		})
	}
}
