package openai

import (
	"encoding/json"
	"testing"
)

func TestNormalizeKeepsEveryOtherByte(t *testing.T) {
	together, _ := DialectFor("together")
	mistral, _ := DialectFor("mistral")
	openai, _ := DialectFor("openai")
	tests := []struct {
		name   string
		d      *Dialect
		chunks []string
		want   []string
	}{
		{
			name:   "together eos becomes stop, spacing and other members kept",
			d:      together,
			chunks: []string{`{"id":"x","choices":[{"index":0,"delta":{},"finish_reason" : "eos"}],"usage":{"cached_tokens":3}}`},
			want:   []string{`{"id":"x","choices":[{"index":0,"delta":{},"finish_reason" : "stop"}],"usage":{"cached_tokens":3}}`},
		},
		{
			name:   "text that mentions eos is not a finish reason",
			d:      together,
			chunks: []string{`{"choices":[{"index":0,"delta":{"content":"\"finish_reason\":\"eos\""},"finish_reason":null}]}`},
			want:   []string{`{"choices":[{"index":0,"delta":{"content":"\"finish_reason\":\"eos\""},"finish_reason":null}]}`},
		},
		{
			name: "mistral tool calls get index and type, in call order",
			d:    mistral,
			chunks: []string{
				`{"choices":[{"index":0,"delta":{"content":"x"}}]}`,
				`{"choices":[{"index":0,"delta":{"tool_calls":[{"id":"abcDEF123","function":{"name":"f","arguments":"{\"a\":[1]}"}}]}}]}`,
				`{"choices":[{"index":0,"delta":{"tool_calls":[ {"id":"ghiJKL456","function":{"name":"g","arguments":"{}"}}]}}]}`,
				`{"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`,
			},
			want: []string{
				`{"choices":[{"index":0,"delta":{"content":"x"}}]}`,
				`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"type":"function","id":"abcDEF123","function":{"name":"f","arguments":"{\"a\":[1]}"}}]}}]}`,
				`{"choices":[{"index":0,"delta":{"tool_calls":[ {"index":1,"type":"function","id":"ghiJKL456","function":{"name":"g","arguments":"{}"}}]}}]}`,
				`{"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`,
			},
		},
		{
			name: "mistral list content becomes a string, thinking moves to reasoning_content",
			d:    mistral,
			chunks: []string{
				`{"choices":[{"index":0,"delta":{"content":[{"type":"thinking","thinking":[{"type":"text","text":"Hmm \"ok\""}]}]},"finish_reason":null}]}`,
				`{"choices":[{"index":0,"delta":{"content": [{"type":"text","text":"Hi"}]},"finish_reason":null}]}`,
				`{"choices":[{"index":0,"delta":{"content":"plain"},"finish_reason":"model_length"}]}`,
			},
			want: []string{
				`{"choices":[{"index":0,"delta":{"content":"","reasoning_content":"Hmm \"ok\""},"finish_reason":null}]}`,
				`{"choices":[{"index":0,"delta":{"content": "Hi"},"finish_reason":null}]}`,
				`{"choices":[{"index":0,"delta":{"content":"plain"},"finish_reason":"length"}]}`,
			},
		},
		{
			name:   "mistral calls that already carry index and type are untouched",
			d:      mistral,
			chunks: []string{`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"a","type":"function","function":{"name":"f"}}]}}]}`},
			want:   []string{`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"a","type":"function","function":{"name":"f"}}]}}]}`},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n := tt.d.NewStreamNormalizer()
			for i, c := range tt.chunks {
				if got := string(n.Chunk([]byte(c))); got != tt.want[i] {
					t.Errorf("chunk %d:\n got %s\nwant %s", i, got, tt.want[i])
				}
			}
		})
	}
	if openai.NewStreamNormalizer() != nil {
		t.Error("openai needs no stream normalizer")
	}
	body := []byte(`{"choices":[{"index":0,"message":{"role":"assistant","content":"hi"},"finish_reason":"eos"}]}`)
	if got := string(together.NormalizeBody(body)); got != `{"choices":[{"index":0,"message":{"role":"assistant","content":"hi"},"finish_reason":"stop"}]}` {
		t.Errorf("body: %s", got)
	}
	mbody := []byte(`{"id":"m","choices":[{"index":0,"message":{"role":"assistant","content":[{"type":"thinking","thinking":[{"type":"text","text":"T"}]},{"type":"text","text":"A"},{"type":"text","text":"B"}]},"finish_reason":"stop"}]}`)
	if got := string(mistral.NormalizeBody(mbody)); got != `{"id":"m","choices":[{"index":0,"message":{"role":"assistant","content":"AB","reasoning_content":"T"},"finish_reason":"stop"}]}` {
		t.Errorf("mistral body: %s", got)
	}
	// Mistral's non-stream tool calls lack "type" (openai-node's runTools
	// skips a call whose type is not "function"); entries that have one,
	// and text that looks like one, are untouched.
	for _, c := range []struct{ in, want string }{
		{
			`{"choices":[{"index":0,"message":{"role":"assistant","content":"","tool_calls":[{"id":"abcDEF123","function":{"name":"f","arguments":"{\"type\":1}"},"index":0}, {"id":"x","type":"function","function":{"name":"g","arguments":"{}"}},{}]},"finish_reason":"tool_calls"}]}`,
			`{"choices":[{"index":0,"message":{"role":"assistant","content":"","tool_calls":[{"type":"function","id":"abcDEF123","function":{"name":"f","arguments":"{\"type\":1}"},"index":0}, {"id":"x","type":"function","function":{"name":"g","arguments":"{}"}},{"type":"function"}]},"finish_reason":"tool_calls"}]}`,
		},
		{
			`{"choices":[{"index":0,"message":{"role":"assistant","content":"\"tool_calls\":[{}]"},"finish_reason":"stop"}]}`,
			`{"choices":[{"index":0,"message":{"role":"assistant","content":"\"tool_calls\":[{}]"},"finish_reason":"stop"}]}`,
		},
	} {
		if got := string(mistral.NormalizeBody([]byte(c.in))); got != c.want {
			t.Errorf("mistral tool calls body:\n got %s\nwant %s", got, c.want)
		}
	}
	plain := []byte(`{"choices":[{"finish_reason":"stop"}]}`)
	if got := together.NormalizeBody(plain); &got[0] != &plain[0] {
		t.Error("a body with nothing to fix must be returned as is")
	}
}

func TestTogetherCachedTokensAreCacheReads(t *testing.T) {
	u, err := DecodeUsage([]byte(`{"prompt_tokens":100,"completion_tokens":5,"total_tokens":105,"cached_tokens":60}`))
	if err != nil {
		t.Fatal(err)
	}
	if u.CacheReadTokens != 60 || u.InputTokens != 40 || u.OutputTokens != 5 {
		t.Errorf("usage = %+v, want cache read 60, input 40, output 5", u)
	}
}

func TestToolMessageIsErrorExtension(t *testing.T) {
	r, err := DecodeRequest([]byte(`{"model":"m","messages":[{"role":"user","content":"x"},{"role":"assistant","tool_calls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{}"}}]},{"role":"tool","tool_call_id":"c1","content":"boom","is_error":true}]}`))
	if err != nil {
		t.Fatal(err)
	}
	p := r.Messages[len(r.Messages)-1].Content[0]
	if p.Type != "tool_result" || !p.IsError || p.Content[0].Text != "boom" {
		t.Errorf("tool result = %+v, want an error result", p)
	}
}

// BenchmarkNormalizeChunk: the per-chunk cost on the native routes that
// normalise (Together, Mistral) for the common chunk that needs no fix,
// against a Mistral chunk that does.
func BenchmarkNormalizeChunk(b *testing.B) {
	together, _ := DialectFor("together")
	mistral, _ := DialectFor("mistral")
	text := []byte(`{"id":"x","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":" word"},"finish_reason":null}],"usage":null}`)
	call := []byte(`{"id":"x","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"tool_calls":[{"id":"abcDEF123","function":{"name":"get_weather","arguments":"{\"city\":\"x\"}"}}]},"finish_reason":null}]}`)
	for _, bc := range []struct {
		name string
		d    *Dialect
		data []byte
	}{{"together/text", together, text}, {"mistral/text", mistral, text}, {"mistral/tool_call", mistral, call}} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				n := bc.d.NewStreamNormalizer()
				_ = n.Chunk(bc.data)
			}
		})
	}
}

// FuzzNormalize: whatever a vendor sends, the normalizers neither panic
// nor turn a valid JSON chunk or body into invalid JSON.
func FuzzNormalize(f *testing.F) {
	for _, s := range []string{
		`{"choices":[{"index":0,"delta":{"tool_calls":[{"id":"abcDEF123","function":{"name":"f","arguments":"{}"}}]},"finish_reason":null}]}`,
		`{"choices":[{"delta":{"tool_calls":[{"function":{"arguments":"x"}},{"index":3,"id":"b"}]}}]}`,
		`{"choices":[{"message":{"content":[{"type":"text","text":"a\"<>&"},{"type":"thinking","thinking":[{"type":"text","text":"t"}]}]},"finish_reason":"model_length"}]}`,
		`{"choices":[{"finish_reason":"eos","delta":{"content":[]}}]}`,
		`{"choices":"no"}`, `[]`, `{`,
	} {
		f.Add([]byte(s))
	}
	mistral, _ := DialectFor("mistral")
	together, _ := DialectFor("together")
	f.Fuzz(func(t *testing.T, data []byte) {
		valid := json.Valid(data)
		for _, d := range []*Dialect{mistral, together} {
			for name, out := range map[string][]byte{"chunk": d.NewStreamNormalizer().Chunk(data), "body": d.NormalizeBody(data)} {
				if valid && !json.Valid(out) {
					t.Fatalf("%s: valid %q became invalid %q", name, data, out)
				}
			}
		}
	})
}
