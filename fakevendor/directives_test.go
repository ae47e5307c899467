package fakevendor

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// modelFor returns a model id valid for vendor.
func modelFor(vendor string) string {
	if vendor == "openrouter" {
		return "openai/gpt-x"
	}
	return "model-" + vendor
}

func TestParseDirectives(t *testing.T) {
	tests := []struct {
		name    string
		text    string
		check   func(directives) bool
		wantErr bool
	}{
		{"none", "plain text", func(d directives) bool { return d.breakAt == -1 && d.retry == 2 && d.failStatus == 503 && !d.hasText }, false},
		{"text until bracket", "x [fake:text=Hi, there!] y", func(d directives) bool { return d.hasText && d.text == "Hi, there!" }, false},
		{"empty text", "[fake:text=]", func(d directives) bool { return d.hasText && d.text == "" }, false},
		{"tool alone is one", "[fake:tool]", func(d directives) bool { return d.tools == 1 }, false},
		{"tools=3", "[fake:tools=3]", func(d directives) bool { return d.tools == 3 }, false},
		{"several", "[fake:reasoning][fake:cache][fake:chunks=2] [fake:delay=5ms]", func(d directives) bool {
			return d.reasoning && d.cache && d.chunks == 2 && d.delay == 5*time.Millisecond && len(d.raw) == 4
		}, false},
		{"cache triple", "[fake:cache=10/5/3]", func(d directives) bool { return d.cacheRead == 10 && d.cache5m == 5 && d.cache1h == 3 }, false},
		{"break zero", "[fake:break=0]", func(d directives) bool { return d.breakAt == 0 }, false},
		{"unknown name", "[fake:frobnicate]", nil, true},
		{"bad number", "[fake:tools=many]", nil, true},
		{"zero tools", "[fake:tools=0]", nil, true},
		{"bad duration", "[fake:slow=1 hour]", nil, true},
		{"bad cache", "[fake:cache=a/b]", nil, true},
		{"bad cost", "[fake:cost=cheap]", nil, true},
		{"empty stop", "[fake:stop=]", nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := parseDirectives(tt.text)
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tt.wantErr)
			}
			if err == nil && !tt.check(d) {
				t.Errorf("unexpected directives %+v", d)
			}
		})
	}
}

func TestArgsFromSchema(t *testing.T) {
	tests := []struct{ name, schema, want string }{
		{"weather", weatherSchema, wantWeatherArgs},
		{"no schema", ``, `{}`},
		{"nested and nullable", `{"type":"object","required":["o","n","a"],"properties":{"o":{"type":"object","required":["z"],"properties":{"z":{"type":["null","number"]}}},"n":{"anyOf":[{"type":"boolean"}]},"a":{"type":"array"}}}`, `{"a":[],"n":true,"o":{"z":1}}`},
		{"gemini upper-case types", `{"type":"OBJECT","properties":{"q":{"type":"STRING"}},"required":["q"]}`, `{"q":"x"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := argsFor(json.RawMessage(tt.schema)); got != tt.want {
				t.Errorf("argsFor = %s, want %s", got, tt.want)
			}
		})
	}
}

func TestTextDirectiveSetsReply(t *testing.T) {
	s := startServer(t)
	for _, v := range Vendors() {
		t.Run(v, func(t *testing.T) {
			_, b, _ := send(t, s, v, modelFor(v), "say [fake:text=Exactly this.]", reqOpts{})
			if p := parseBody(t, v, b); p.text != "Exactly this." {
				t.Errorf("text = %q", p.text)
			}
			_, b, _ = send(t, s, v, modelFor(v), "say [fake:text=Exactly this, streamed.][fake:chunks=3]", reqOpts{stream: true})
			p := parseStream(t, v, b)
			if p.text != "Exactly this, streamed." || p.chunks != 3 {
				t.Errorf("stream text = %q in %d chunks, want 3", p.text, p.chunks)
			}
		})
	}
}

// toolIDPattern is each vendor's tool call id style.
var toolIDPattern = map[string]*regexp.Regexp{
	"anthropic": regexp.MustCompile(`^toolu_01[0-9A-Za-z]{22}$`),
	"mistral":   regexp.MustCompile(`^[0-9A-Za-z]{9}$`),
	"google":    regexp.MustCompile(`^[0-9a-z]{8}$`),
	"deepseek":  regexp.MustCompile(`^call_0\d_[0-9A-Za-z]{24}$`),
}

func TestToolDirectiveCallsDeclaredTools(t *testing.T) {
	s := startServer(t)
	for _, v := range Vendors() {
		for _, stream := range []bool{false, true} {
			name := v + map[bool]string{false: "/body", true: "/stream"}[stream]
			t.Run(name, func(t *testing.T) {
				_, b, _ := send(t, s, v, modelFor(v), "weather? [fake:tools=3]", reqOpts{stream: stream, tools: []string{"get_weather", "get_time"}})
				var p parsed
				if stream {
					p = parseStream(t, v, b)
				} else {
					p = parseBody(t, v, b)
				}
				if len(p.calls) != 3 {
					t.Fatalf("calls = %+v", p.calls)
				}
				wantNames := []string{"get_weather", "get_time", "get_weather"}
				seen := map[string]bool{}
				for i, c := range p.calls {
					if c.name != wantNames[i] || c.args != wantWeatherArgs {
						t.Errorf("call %d = %+v", i, c)
					}
					re := toolIDPattern[v]
					if re == nil {
						re = regexp.MustCompile(`^call_[0-9A-Za-z]{24}$`)
					}
					if !re.MatchString(c.id) || seen[c.id] {
						t.Errorf("call %d id %q not in %s style or repeated", i, c.id, v)
					}
					seen[c.id] = true
				}
				wantFinish := map[string]string{"anthropic": "tool_use", "google": "STOP"}[v]
				if wantFinish == "" {
					wantFinish = "tool_calls"
				}
				if p.finish != wantFinish {
					t.Errorf("finish = %q", p.finish)
				}
				if p.text != "" {
					t.Errorf("text alongside tool calls: %q", p.text)
				}
				if v == "google" && !strings.Contains(string(b), `"thoughtSignature":"`) {
					t.Error("gemini functionCall without thoughtSignature")
				}
			})
		}
	}
}

func TestToolArgumentsStreamInFragments(t *testing.T) {
	s := startServer(t)
	_, b, _ := send(t, s, "openai", "gpt-x", "[fake:tool]", reqOpts{stream: true, tools: []string{"get_weather"}})
	var frags []map[string]any
	for _, e := range parseSSE(b) {
		var m map[string]any
		if json.Unmarshal([]byte(e.data), &m) != nil {
			continue
		}
		for _, ch := range m["choices"].([]any) {
			d := ch.(map[string]any)["delta"].(map[string]any)
			if tc, ok := d["tool_calls"].([]any); ok {
				frags = append(frags, tc[0].(map[string]any))
			}
		}
	}
	if len(frags) < 3 {
		t.Fatalf("only %d tool fragments", len(frags))
	}
	first := frags[0]
	if first["id"] == nil || first["type"] != "function" || first["function"].(map[string]any)["arguments"] != "" {
		t.Errorf("first fragment = %v", first)
	}
	for _, f := range frags[1:] {
		if _, ok := f["id"]; ok {
			t.Errorf("later fragment carries id: %v", f)
		}
		if _, ok := f["function"].(map[string]any)["name"]; ok {
			t.Errorf("later fragment carries name: %v", f)
		}
	}
}

func TestToolResultGetsFinalAnswer(t *testing.T) {
	s := startServer(t)
	for _, v := range Vendors() {
		t.Run(v, func(t *testing.T) {
			o := reqOpts{tools: []string{"get_weather"}, toolResult: "sunny, 21C"}
			_, b, _ := send(t, s, v, modelFor(v), "weather? [fake:tool]", o)
			p := parseBody(t, v, b)
			if p.text != "Tool said: sunny, 21C" || len(p.calls) != 0 {
				t.Errorf("reply = %q, calls %v", p.text, p.calls)
			}
			o.stream = true
			_, b, _ = send(t, s, v, modelFor(v), "weather? [fake:tool]", o)
			if p := parseStream(t, v, b); p.text != "Tool said: sunny, 21C" {
				t.Errorf("stream reply = %q", p.text)
			}
		})
	}
}

func TestReasoningDirectiveUsesVendorForm(t *testing.T) {
	s := startServer(t)
	for _, v := range Vendors() {
		for _, stream := range []bool{false, true} {
			t.Run(v+map[bool]string{false: "/body", true: "/stream"}[stream], func(t *testing.T) {
				model := modelFor(v)
				_, b, _ := send(t, s, v, model, "think [fake:reasoning]", reqOpts{stream: stream, includeUsage: true})
				var p parsed
				if stream {
					p = parseStream(t, v, b)
				} else {
					p = parseBody(t, v, b)
				}
				R := Tokens(len(ReasoningText(model)))
				if v == "openai" {
					if p.reasoning != "" {
						t.Errorf("openai leaked reasoning text")
					}
					if got := num(p.usage["completion_tokens_details"].(map[string]any)["reasoning_tokens"]); got != R {
						t.Errorf("reasoning_tokens = %d, want %d", got, R)
					}
				} else if p.reasoning != ReasoningText(model) {
					t.Errorf("reasoning = %q", p.reasoning)
				}
				if want := Tokens(len(DefaultText(v, model))) + R; p.output != want {
					t.Errorf("output tokens = %d, want %d", p.output, want)
				}
				s := string(b)
				switch v {
				case "anthropic":
					if !strings.Contains(s, `"signature":"sig_`) {
						t.Error("no thinking signature")
					}
					if stream && !strings.Contains(s, `"type":"signature_delta"`) {
						t.Error("no signature_delta")
					}
				case "google":
					if num(p.usage["thoughtsTokenCount"]) != R {
						t.Errorf("thoughtsTokenCount = %v", p.usage["thoughtsTokenCount"])
					}
				case "deepseek":
					if !strings.Contains(s, `"reasoning_content":"`) {
						t.Error("no reasoning_content")
					}
				case "mistral":
					if !strings.Contains(s, `"type":"thinking"`) {
						t.Error("no thinking chunk")
					}
				case "groq", "together", "openrouter":
					if !strings.Contains(s, `"reasoning":"`) {
						t.Error("no reasoning field")
					}
				}
			})
		}
	}
}

func TestCacheDirectiveReportsVendorFields(t *testing.T) {
	s := startServer(t)
	for _, v := range Vendors() {
		t.Run(v, func(t *testing.T) {
			_, b, body := send(t, s, v, modelFor(v), "cached [fake:cache]", reqOpts{})
			p := parseBody(t, v, b)
			P := PromptTokens(body)
			read, write := P/2, P/4
			u := p.usage
			ptd, _ := u["prompt_tokens_details"].(map[string]any)
			switch v {
			case "anthropic":
				cc := u["cache_creation"].(map[string]any)
				if num(u["cache_read_input_tokens"]) != read || num(u["cache_creation_input_tokens"]) != write ||
					num(cc["ephemeral_5m_input_tokens"]) != write || num(cc["ephemeral_1h_input_tokens"]) != 0 ||
					num(u["input_tokens"]) != P-read-write {
					t.Errorf("anthropic usage %v (P=%d)", u, P)
				}
			case "google":
				if num(u["cachedContentTokenCount"]) != read || num(u["promptTokenCount"]) != P {
					t.Errorf("gemini usage %v", u)
				}
			case "deepseek":
				if num(u["prompt_cache_hit_tokens"]) != read || num(u["prompt_cache_miss_tokens"]) != P-read {
					t.Errorf("deepseek usage %v", u)
				}
			case "openai", "openrouter":
				if num(ptd["cached_tokens"]) != read || num(ptd["cache_write_tokens"]) != write || num(u["prompt_tokens"]) != P {
					t.Errorf("%s usage %v", v, u)
				}
			case "groq", "fireworks":
				if num(ptd["cached_tokens"]) != read {
					t.Errorf("%s usage %v", v, u)
				}
			}
		})
	}
	t.Run("explicit counts", func(t *testing.T) {
		_, b, body := send(t, s, "anthropic", "claude-x", "[fake:cache=3/2/1]", reqOpts{})
		u := parseBody(t, "anthropic", b).usage
		cc := u["cache_creation"].(map[string]any)
		if num(u["cache_read_input_tokens"]) != 3 || num(u["cache_creation_input_tokens"]) != 3 ||
			num(cc["ephemeral_5m_input_tokens"]) != 2 || num(cc["ephemeral_1h_input_tokens"]) != 1 ||
			num(u["input_tokens"]) != PromptTokens(body)-6 {
			t.Errorf("usage %v", u)
		}
	})
	t.Run("clamped to prompt", func(t *testing.T) {
		_, b, body := send(t, s, "openai", "gpt-x", "[fake:cache=100000]", reqOpts{})
		u := parseBody(t, "openai", b).usage
		if got := num(u["prompt_tokens_details"].(map[string]any)["cached_tokens"]); got != PromptTokens(body) {
			t.Errorf("cached = %d, want %d", got, PromptTokens(body))
		}
	})
}

func TestStopDirectiveMapsToVendorReason(t *testing.T) {
	s := startServer(t)
	tests := []struct {
		vendor, stop, want, wantSeq string
	}{
		{"openai", "max_tokens", "length", ""},
		{"openai", "refusal", "content_filter", ""},
		{"anthropic", "length", "max_tokens", ""},
		{"anthropic", "content_filter", "refusal", ""},
		{"anthropic", "stop_sequence", "stop_sequence", "###"},
		{"anthropic", "pause_turn", "pause_turn", ""},
		{"google", "max_tokens", "MAX_TOKENS", ""},
		{"google", "refusal", "SAFETY", ""},
		{"google", "RECITATION", "RECITATION", ""},
		{"together", "eos", "eos", ""},
		{"groq", "eos", "stop", ""},
		{"mistral", "model_length", "model_length", ""},
		{"deepseek", "insufficient_system_resource", "insufficient_system_resource", ""},
	}
	for _, tt := range tests {
		t.Run(tt.vendor+"/"+tt.stop, func(t *testing.T) {
			for _, stream := range []bool{false, true} {
				_, b, _ := send(t, s, tt.vendor, modelFor(tt.vendor), "[fake:stop="+tt.stop+"]", reqOpts{stream: stream, stopSeq: "###"})
				var p parsed
				if stream {
					p = parseStream(t, tt.vendor, b)
				} else {
					p = parseBody(t, tt.vendor, b)
				}
				if p.finish != tt.want {
					t.Errorf("stream=%v finish = %q, want %q", stream, p.finish, tt.want)
				}
				if tt.wantSeq != "" && !strings.Contains(string(b), `"stop_sequence":"`+tt.wantSeq+`"`) {
					t.Errorf("stream=%v no stop_sequence echo: %s", stream, b)
				}
			}
		})
	}
}

func TestStatusDirectiveAnswersVendorError(t *testing.T) {
	s := startServer(t)
	for _, v := range Vendors() {
		for _, status := range []int{400, 429, 500, 503} {
			t.Run(v+"/"+http.StatusText(status), func(t *testing.T) {
				resp, b, _ := send(t, s, v, modelFor(v), "[fake:status="+strconv.Itoa(status)+"][fake:retry=7]", reqOpts{stream: true})
				if resp.StatusCode != status {
					t.Fatalf("status %d", resp.StatusCode)
				}
				checkErrorShape(t, v, status, b)
				ra := resp.Header.Get("Retry-After")
				switch {
				case status == 429 && v == "google":
					if !strings.Contains(string(b), `"retryDelay":"7s"`) || !strings.Contains(string(b), "google.rpc.RetryInfo") {
						t.Errorf("no RetryInfo: %s", b)
					}
				case status == 429 && ra != "7":
					t.Errorf("retry-after = %q", ra)
				case status != 429 && ra != "":
					t.Errorf("retry-after on %d", status)
				}
			})
		}
	}
	t.Run("anthropic 529 overloaded", func(t *testing.T) {
		resp, b, _ := send(t, s, "anthropic", "claude-x", "[fake:status=529]", reqOpts{})
		if resp.StatusCode != 529 || !strings.Contains(string(b), `"type":"overloaded_error"`) {
			t.Errorf("%d %s", resp.StatusCode, b)
		}
	})
	t.Run("default retry-after is 2", func(t *testing.T) {
		resp, _, _ := send(t, s, "openai", "gpt-x", "[fake:status=429]", reqOpts{})
		if resp.Header.Get("Retry-After") != "2" {
			t.Errorf("retry-after = %q", resp.Header.Get("Retry-After"))
		}
	})
}

func TestFailFirstFailsThenSucceeds(t *testing.T) {
	s := startServer(t)
	for _, v := range Vendors() {
		t.Run(v, func(t *testing.T) {
			text := "retry me [fake:fail-first=2]"
			var got []int
			for range 3 {
				resp, b, _ := send(t, s, v, modelFor(v), text, reqOpts{})
				got = append(got, resp.StatusCode)
				if resp.StatusCode == 503 {
					checkErrorShape(t, v, 503, b)
				}
			}
			if got[0] != 503 || got[1] != 503 || got[2] != 200 {
				t.Errorf("statuses = %v, want [503 503 200]", got)
			}
		})
	}
	t.Run("counted per directive string", func(t *testing.T) {
		resp, _, _ := send(t, s, "openai", "gpt-x", "[fake:fail-first=1][fake:fail-status=529]", reqOpts{})
		if resp.StatusCode != 529 {
			t.Errorf("first call status %d, want 529", resp.StatusCode)
		}
		resp, _, _ = send(t, s, "openai", "gpt-x", "other words [fake:fail-first=1][fake:fail-status=529]", reqOpts{})
		if resp.StatusCode != 200 {
			t.Errorf("same directives, second call status %d", resp.StatusCode)
		}
		s.Reset()
		resp, _, _ = send(t, s, "openai", "gpt-x", "[fake:fail-first=1][fake:fail-status=529]", reqOpts{})
		if resp.StatusCode != 529 {
			t.Errorf("after Reset status %d, want 529", resp.StatusCode)
		}
	})
}

func TestSlowAndDelayWait(t *testing.T) {
	s := startServer(t)
	start := time.Now()
	resp, _, _ := send(t, s, "groq", "m", "[fake:slow=150ms]", reqOpts{})
	if el := time.Since(start); resp.StatusCode != 200 || el < 150*time.Millisecond {
		t.Errorf("slow: status %d after %v", resp.StatusCode, el)
	}
	start = time.Now()
	_, b, _ := send(t, s, "anthropic", "claude-x", "[fake:delay=20ms][fake:chunks=3]", reqOpts{stream: true})
	// message_start, ping, block start, 3 deltas, block stop, message_delta, message_stop: 8 gaps.
	if el := time.Since(start); el < 8*20*time.Millisecond {
		t.Errorf("delay: stream took %v", el)
	}
	if p := parseStream(t, "anthropic", b); !p.done {
		t.Error("delayed stream incomplete")
	}
}

func TestSlowHonoursClientCancellation(t *testing.T) {
	s := startServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	body := nativeBody("openai", "gpt-x", "[fake:slow=10s]", reqOpts{})
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, nativeURL(s, "openai", "gpt-x", false), bytes.NewReader(body))
	authorize(req, "openai", "", false)
	start := time.Now()
	if resp, err := http.DefaultClient.Do(req); err == nil {
		resp.Body.Close()
		t.Fatal("expected the client to time out")
	}
	wctx, wcancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer wcancel()
	if err := s.WaitCancelled(wctx, 1); err != nil {
		t.Fatal(err)
	}
	if time.Since(start) > 3*time.Second {
		t.Error("slow did not give up on cancellation")
	}
}

func TestHangIsRecordedCancelled(t *testing.T) {
	s := startServer(t)
	for _, stream := range []bool{false, true} {
		s.Reset()
		ctx, cancel := context.WithCancel(context.Background())
		body := nativeBody("anthropic", "claude-x", "[fake:hang]", reqOpts{stream: stream})
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, nativeURL(s, "anthropic", "claude-x", stream), bytes.NewReader(body))
		authorize(req, "anthropic", "", true)
		errc := make(chan error, 1)
		go func() {
			resp, err := http.DefaultClient.Do(req)
			if err == nil {
				resp.Body.Close()
			}
			errc <- err
		}()
		wctx, wcancel := context.WithTimeout(context.Background(), 5*time.Second)
		for len(s.Requests()) == 0 && wctx.Err() == nil {
			time.Sleep(5 * time.Millisecond)
		}
		select {
		case err := <-errc:
			t.Fatalf("hang answered: %v", err)
		case <-time.After(50 * time.Millisecond):
		}
		cancel()
		if err := <-errc; !errors.Is(err, context.Canceled) {
			t.Errorf("client error = %v", err)
		}
		if err := s.WaitCancelled(wctx, 1); err != nil {
			t.Fatal(err)
		}
		wcancel()
		r := s.Requests()[0]
		if !r.Cancelled || !r.Done || r.Status != 0 {
			t.Errorf("record = cancelled %v done %v status %d", r.Cancelled, r.Done, r.Status)
		}
	}
}

func TestCloseReleasesHangingCalls(t *testing.T) {
	s, err := Start()
	if err != nil {
		t.Fatal(err)
	}
	body := nativeBody("openai", "gpt-x", "[fake:hang]", reqOpts{})
	req, _ := http.NewRequest(http.MethodPost, nativeURL(s, "openai", "gpt-x", false), bytes.NewReader(body))
	authorize(req, "openai", "", false)
	errc := make(chan error, 1)
	go func() {
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			resp.Body.Close()
		}
		errc <- err
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for len(s.Requests()) == 0 && ctx.Err() == nil {
		time.Sleep(5 * time.Millisecond)
	}
	done := make(chan struct{})
	go func() { _ = s.Close(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
		t.Fatal("Close blocked on a hanging call")
	}
	if err := <-errc; err == nil {
		t.Error("hanging call got an answer")
	}
	if r := s.Requests()[0]; !r.Cancelled {
		t.Error("hanging call not recorded Cancelled")
	}
}

func TestBreakCutsTheConnection(t *testing.T) {
	s := startServer(t)
	for _, v := range Vendors() {
		t.Run(v, func(t *testing.T) {
			s.Reset()
			model := modelFor(v)
			body := nativeBody(v, model, "[fake:break=2]", reqOpts{stream: true})
			req, _ := http.NewRequest(http.MethodPost, nativeURL(s, v, model, true), bytes.NewReader(body))
			authorize(req, v, "", true)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			b, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			if !errors.Is(err, io.ErrUnexpectedEOF) {
				t.Errorf("read error = %v, want unexpected EOF", err)
			}
			p := parseStream(t, v, b)
			if want := strings.Join(splitWords(DefaultText(v, model))[:2], ""); p.text != want || p.done {
				t.Errorf("text before break = %q (done %v), want %q", p.text, p.done, want)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			if err := s.WaitDone(ctx, 1); err != nil {
				t.Fatal(err)
			}
			if r := s.Requests()[0]; r.Cancelled || r.Status != 200 {
				t.Errorf("broken stream recorded cancelled=%v status=%d", r.Cancelled, r.Status)
			}
		})
	}
}

func TestErrorAfterSendsInStreamError(t *testing.T) {
	s := startServer(t)
	for _, v := range Vendors() {
		t.Run(v, func(t *testing.T) {
			model := modelFor(v)
			resp, b, _ := send(t, s, v, model, "[fake:error-after=3]", reqOpts{stream: true})
			if resp.StatusCode != 200 {
				t.Fatalf("status %d", resp.StatusCode)
			}
			p := parseStream(t, v, b)
			if want := strings.Join(splitWords(DefaultText(v, model))[:3], ""); p.text != want {
				t.Errorf("text = %q, want %q", p.text, want)
			}
			if len(p.errs) != 1 {
				t.Fatalf("errors = %v\n%s", p.errs, b)
			}
			str := string(b)
			switch v {
			case "anthropic":
				if !strings.Contains(str, "event: error\n") || !strings.Contains(p.errs[0], "overloaded_error") || p.done {
					t.Errorf("anthropic error: %s", str)
				}
			case "openrouter":
				if p.finish != "error" || !p.done {
					t.Errorf("openrouter finish = %q done %v", p.finish, p.done)
				}
			case "groq":
				if !strings.Contains(str, `"x_groq":{"error":`) {
					t.Errorf("groq error: %s", str)
				}
			case "google":
				if !strings.Contains(p.errs[0], `"status":"UNAVAILABLE"`) {
					t.Errorf("google error: %s", p.errs[0])
				}
			default:
				if !strings.Contains(str, `data: {"error":{`) || p.done {
					t.Errorf("%s error: %s", v, str)
				}
			}
		})
	}
}

func TestMalformedDirective(t *testing.T) {
	s := startServer(t)
	for _, v := range Vendors() {
		t.Run(v, func(t *testing.T) {
			resp, b, _ := send(t, s, v, modelFor(v), "[fake:malformed]", reqOpts{})
			if resp.StatusCode != 200 || json.Valid(bytes.TrimSpace(b)) {
				t.Errorf("non-stream: status %d valid JSON %v", resp.StatusCode, json.Valid(b))
			}
			_, b, _ = send(t, s, v, modelFor(v), "[fake:malformed]", reqOpts{stream: true})
			p := parseStream(t, v, b)
			if len(p.errs) != 1 || !strings.HasPrefix(p.errs[0], "bad json") {
				t.Errorf("stream errors = %v", p.errs)
			}
		})
	}
}

func TestOpenRouterCostDirective(t *testing.T) {
	s := startServer(t)
	_, b, _ := send(t, s, "openrouter", "openai/gpt-x", "[fake:cost=0.0123]", reqOpts{})
	if !strings.Contains(string(b), `"cost":0.0123`) {
		t.Errorf("cost not echoed exactly: %s", b)
	}
	_, b, body := send(t, s, "openrouter", "openai/gpt-x", "hi", reqOpts{})
	p := parseBody(t, "openrouter", b)
	micro := PromptTokens(body) + 2*p.output
	want := `"cost":0.` + strings.Repeat("0", 6-len(strconv.Itoa(micro))) + strconv.Itoa(micro)
	if !strings.Contains(string(b), want) {
		t.Errorf("default cost: want %s in %s", want, b)
	}
}
