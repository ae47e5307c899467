package e2e

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	gw "github.com/gwlabs/gateway"
	"github.com/gwlabs/gateway/internal/app"
)

// Scripted vendor answers in each vendor's wire shape, for
// TestUsageOneWayEveryRoute. text is always "Hello there." (12 bytes).

func flush(w http.ResponseWriter) { w.(http.Flusher).Flush() }

// cut breaks the connection without the stream's end (no terminator, the
// chunked encoding unfinished), as a vendor that fails mid-way does.
func cut(w http.ResponseWriter) { flush(w); panic(http.ErrAbortHandler) }

// openaiChunks writes a C stream: the text, then (whole) a finish chunk
// carrying usage; cut breaks it off after that instead of [DONE], or
// after the text (whole false).
func openaiChunks(usage string, whole bool) func(http.ResponseWriter) {
	return func(w http.ResponseWriter) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"Hello there.\"},\"finish_reason\":null}]}\n\n")
		if whole {
			fmt.Fprintf(w, "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}],\"usage\":%s}\n\n", usage)
		}
		cut(w)
	}
}

// anthropicEvents writes an M stream: message_start with startUsage, the
// text, then (whole) message_delta with its stop_reason and deltaUsage;
// then message_stop (end) or a cut.
func anthropicEvents(startUsage, deltaUsage string, whole, end bool) func(http.ResponseWriter) {
	return func(w http.ResponseWriter) {
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprintf(w, "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"type\":\"message\",\"role\":\"assistant\",\"model\":\"m\",\"content\":[],\"stop_reason\":null,\"stop_sequence\":null,\"usage\":%s}}\n\n", startUsage)
		io.WriteString(w, "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n")
		io.WriteString(w, "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"Hello there.\"}}\n\n")
		if whole {
			io.WriteString(w, "event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n")
			fmt.Fprintf(w, "event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\",\"stop_sequence\":null},\"usage\":%s}\n\n", deltaUsage)
		}
		if end {
			io.WriteString(w, "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n")
			return
		}
		cut(w)
	}
}

// anthropicAnswer writes a non-streaming M answer with usage.
func anthropicAnswer(usage string) func(http.ResponseWriter) {
	return func(w http.ResponseWriter) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"id":"msg_1","type":"message","role":"assistant","model":"m","content":[{"type":"text","text":"Hello there."}],"stop_reason":"end_turn","stop_sequence":null,"usage":%s}`, usage)
	}
}

// geminiRecords writes a Gemini stream: the text, then (whole) the last
// record with its finishReason and usage, then a cut.
func geminiRecords(usage string, whole bool) func(http.ResponseWriter) {
	return func(w http.ResponseWriter) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "data: {\"candidates\":[{\"content\":{\"role\":\"model\",\"parts\":[{\"text\":\"Hello there.\"}]},\"index\":0}],\"usageMetadata\":{\"promptTokenCount\":20}}\r\n\r\n")
		if whole {
			fmt.Fprintf(w, "data: {\"candidates\":[{\"content\":{\"role\":\"model\",\"parts\":[{\"text\":\"\"}]},\"finishReason\":\"STOP\",\"index\":0}],\"usageMetadata\":%s}\r\n\r\n", usage)
		}
		cut(w)
	}
}

// Issue 29 item 5 (before -> after), on every route: the caller's
// endpoint (C, M, R) to a vendor that speaks it (native) or not
// (mapped), stream or not.
//
// A vendor break after the whole text was delivered (its finish_reason,
// stop_reason or finishReason sent, then the connection cut before the
// stream's end) gave the answer free: recorded as a vendor failure, no
// charge. Now the answer is whole, the caller gets its shape's end
// ([DONE], message_stop, response.completed) and it is billed from the
// vendor's usage: 20 prompt and 5 output tokens at
//
//	groq/llama-3.3-70b-versatile  (20 x 59 + 5 x 79) x 1.09 = 1,716.75 -> 1,717
//	anthropic/claude-sonnet-5-5   (20 x 200 + 5 x 1,000) x 1.09 = 9,810
//	google/gemini-3.1-pro         (20 x 200 + 5 x 1,200) x 1.09 = 10,900
//
// (before: 0 on every row). A cut before the finish marker stays a
// vendor failure (not billed). Malformed usage (a float, "usage":{}) is
// delivered and billed from the gateway's own count on M and R routes
// too, noted usage_malformed (before: 502 unbilled, or 0 input on an M
// stream).
func TestUsageOneWayEveryRoute(t *testing.T) {
	s := newScripted(t)
	e := newEnv(t, func(c *app.Config) {
		c.RPM, c.TPM = 0, 0
		for _, v := range []string{"groq", "anthropic", "google"} {
			c.Vendors[v] = app.VendorConfig{BaseURL: s.srv.URL, APIKey: "k"}
		}
	})
	ctx := context.Background()
	st := e.m.Store()
	const (
		groq   = "groq/llama-3.3-70b-versatile"
		claude = "anthropic/claude-sonnet-5-5"
		gemini = "google/gemini-3.1-pro"
	)
	cUsage := `{"prompt_tokens":20,"completion_tokens":5,"total_tokens":25}`
	mStart, mDelta := `{"input_tokens":20,"output_tokens":1}`, `{"output_tokens":5}`
	gUsage := `{"promptTokenCount":20,"candidatesTokenCount":5,"totalTokenCount":25}`
	body := func(endpoint, model, text string, stream bool) []byte {
		switch endpoint {
		case "/v1/chat/completions":
			return chatBody(model, text, stream, `,"max_tokens":100`)
		case "/v1/messages":
			return messagesBody(model, text, stream, "")
		}
		b := `{"model":` + quote(model) + `,"input":` + quote(text) + `,"max_output_tokens":100`
		if stream {
			b += `,"stream":true`
		}
		return []byte(b + "}")
	}
	end := map[string]string{"/v1/chat/completions": "data: [DONE]", "/v1/messages": "event: message_stop", "/v1/responses": "response.completed"}

	cases := []struct {
		name, endpoint, model string
		stream                bool
		script                func(http.ResponseWriter)
		charge                gw.Money // -1: billed from the gateway's count (> 0)
		note                  string   // the record's note holds it
		billed                bool
	}{
		// Cut after the whole text: billed.
		{"c-native-cut-after-finish", "/v1/chat/completions", groq, true, openaiChunks(cUsage, true), 1_717, "", true},
		{"m-native-cut-after-stop", "/v1/messages", claude, true, anthropicEvents(mStart, mDelta, true, false), 9_810, "", true},
		{"c-to-m-cut-after-stop", "/v1/chat/completions", claude, true, anthropicEvents(mStart, mDelta, true, false), 9_810, "", true},
		{"r-to-m-cut-after-stop", "/v1/responses", claude, true, anthropicEvents(mStart, mDelta, true, false), 9_810, "", true},
		{"m-to-c-cut-after-finish", "/v1/messages", groq, true, openaiChunks(cUsage, true), 1_717, "", true},
		{"r-to-c-cut-after-finish", "/v1/responses", groq, true, openaiChunks(cUsage, true), 1_717, "", true},
		{"c-to-g-cut-after-finish", "/v1/chat/completions", gemini, true, geminiRecords(gUsage, true), 10_900, "", true},
		{"m-to-g-cut-after-finish", "/v1/messages", gemini, true, geminiRecords(gUsage, true), 10_900, "", true},
		// Cut before the finish marker: the vendor failed, not billed.
		{"c-native-cut-mid-text", "/v1/chat/completions", groq, true, openaiChunks(cUsage, false), 0, "operator_cost", false},
		{"m-native-cut-mid-text", "/v1/messages", claude, true, anthropicEvents(mStart, mDelta, false, false), 0, "operator_cost", false},
		{"c-to-g-cut-mid-text", "/v1/chat/completions", gemini, true, geminiRecords(gUsage, false), 0, "operator_cost", false},
		// Malformed usage on M and R routes, stream and not.
		{"m-native-float-input", "/v1/messages", claude, false, anthropicAnswer(`{"input_tokens":1.5,"output_tokens":5}`), -1, "usage_malformed", true},
		{"m-native-stream-float-input", "/v1/messages", claude, true, anthropicEvents(`{"input_tokens":20.5,"output_tokens":1}`, mDelta, true, true), -1, "usage_malformed", true},
		{"m-native-empty-usage", "/v1/messages", claude, false, anthropicAnswer(`{}`), -1, "usage_malformed", true},
		{"c-to-m-string-output", "/v1/chat/completions", claude, false, anthropicAnswer(`{"input_tokens":20,"output_tokens":"5"}`), -1, "usage_malformed", true},
		{"r-to-c-float-prompt", "/v1/responses", groq, false, nil, -1, "usage_malformed", true},
		{"r-to-c-stream-exponent", "/v1/responses", groq, true, nil, -1, "usage_malformed", true},
		{"r-to-m-negative", "/v1/responses", claude, false, anthropicAnswer(`{"input_tokens":-4,"output_tokens":5}`), -1, "usage_malformed", true},
		{"m-to-g-negative", "/v1/messages", gemini, false, nil, -1, "usage_malformed", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			script := c.script
			switch c.name {
			case "r-to-c-float-prompt":
				s.answer(c.name, `{"prompt_tokens":20.0,"completion_tokens":5}`)
			case "r-to-c-stream-exponent":
				script = openaiChunks(`{"prompt_tokens":2e1,"completion_tokens":5}`, true)
			case "m-to-g-negative":
				script = func(w http.ResponseWriter) {
					w.Header().Set("Content-Type", "application/json")
					io.WriteString(w, `{"candidates":[{"content":{"role":"model","parts":[{"text":"Hello there."}]},"finishReason":"STOP","index":0}],"usageMetadata":{"promptTokenCount":-20,"candidatesTokenCount":5}}`)
				}
			}
			if script != nil {
				s.script(c.name, script)
			}
			secret, k, err := createKey(ctx, st, uniqueAccount("usage-route"), gw.USD)
			if err != nil {
				t.Fatal(err)
			}
			resp := e.post(c.endpoint, secret, body(c.endpoint, c.model, "hi [case:"+c.name+"]", c.stream))
			b := readAll(t, resp.Body)
			if resp.StatusCode != 200 || !strings.Contains(string(b), "Hello there") {
				t.Fatalf("status %d: %.600s; want the answer delivered", resp.StatusCode, b)
			}
			if c.stream && c.billed && !strings.Contains(string(b), end[c.endpoint]) {
				t.Errorf("the caller's stream lacks its end %q: %.800s", end[c.endpoint], b)
			}
			rec := waitRecord(t, st, resp.Header.Get("X-Gateway-Request-Id"))
			switch {
			case c.charge > 0 && rec.Charge != c.charge, c.charge < 0 && rec.Charge <= 0, c.charge == 0 && rec.Charge != 0:
				t.Errorf("charge %d (usage %+v, note %q, error %q); want %d (-1: billed from the gateway's count)", rec.Charge, rec.Usage, rec.Note, rec.ErrorCode, c.charge)
			}
			if c.billed != (rec.ErrorCode == "") || !strings.Contains(rec.Note, c.note) {
				t.Errorf("record error %q note %q; want billed %v, note %q", rec.ErrorCode, rec.Note, c.billed, c.note)
			}
			if bal, err := st.Balance(ctx, k.AccountID); err != nil || bal.Charged != rec.Charge || bal.Held != 0 {
				t.Errorf("balance %+v (%v); want the record's charge, nothing held", bal, err)
			}
		})
	}
}

// Issue 29 item 5, the key's token window (before -> after): a reported
// prompt of 1e12 tokens was counted whole into the key's tokens per
// minute, so the key was refused for the next 61 s. Now the count is
// bounded by the model's context window first: 131,072 + 5 = 131,077
// tokens in a 200,000-token window, and the key's next request (about
// 130 tokens) goes through.
func TestBoundedUsageKeepsTheTokenWindow(t *testing.T) {
	e, s := moneyEnv(t, "")
	ctx := context.Background()
	secret, _, err := createKeyWithLimits(ctx, e.m.Store(), uniqueAccount("tpm"), gw.USD, gw.Limit{TPM: 200_000})
	if err != nil {
		t.Fatal(err)
	}
	s.answer("tpm-huge", `{"prompt_tokens":1000000000000,"completion_tokens":5}`)
	s.answer("tpm-next", `{"prompt_tokens":20,"completion_tokens":5}`)
	for _, name := range []string{"tpm-huge", "tpm-next"} {
		resp := e.post("/v1/chat/completions", secret, chatBody("groq/llama-3.3-70b-versatile", "hi [case:"+name+"]", false, `,"max_tokens":100`))
		b := readAll(t, resp.Body)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("%s: %d %s; want 200 (the first answer's tokens bounded by the context window)", name, resp.StatusCode, b)
		}
	}
}
