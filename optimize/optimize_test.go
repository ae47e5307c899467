package optimize

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	gw "github.com/gwlabs/gateway"
)

func TestApply(t *testing.T) {
	m, c, g := string(Segment(gw.ShapeM)), string(Segment(gw.ShapeC)), string(Segment(gw.ShapeG))
	dev := strings.Replace(c, `"system"`, `"developer"`, 1)
	tests := []struct {
		name  string
		shape gw.Shape
		in    string
		want  string
	}{
		{"M no system", gw.ShapeM, `{"model":"x","messages":[]}`, `{"model":"x","messages":[],"system":[` + m + `]}`},
		{"M null system", gw.ShapeM, `{"system":null,"messages":[]}`, `{"system":[` + m + `],"messages":[]}`},
		{"M string system kept byte for byte", gw.ShapeM, `{"system" : "Be \u0021 kind" ,"messages":[]}`, `{"system" : [{"type":"text","text":"Be \u0021 kind"},` + m + `] ,"messages":[]}`},
		{"M empty string system", gw.ShapeM, `{"system":"","messages":[]}`, `{"system":[` + m + `],"messages":[]}`},
		{"M array system", gw.ShapeM, `{"system":[ {"type":"text","text":"a","cache_control":{"type":"ephemeral"}} ],"messages":[]}`, `{"system":[ {"type":"text","text":"a","cache_control":{"type":"ephemeral"}},` + m + ` ],"messages":[]}`},
		{"M empty array system", gw.ShapeM, `{"system":[],"messages":[]}`, `{"system":[` + m + `],"messages":[]}`},
		{"C no system", gw.ShapeC, `{"messages":[{"role":"user","content":"hi"}]}`, `{"messages":[` + c + `,{"role":"user","content":"hi"}]}`},
		{"C after leading system messages", gw.ShapeC, `{"messages":[ {"role":"system","content":"a"}, {"role":"system","content":"b"} ,{"role":"user","content":"hi"},{"role":"system","content":"late"}],"n":1}`,
			`{"messages":[ {"role":"system","content":"a"}, {"role":"system","content":"b"},` + c + ` ,{"role":"user","content":"hi"},{"role":"system","content":"late"}],"n":1}`},
		{"C after a developer message", gw.ShapeC, `{"messages":[{"role":"developer","content":"a"},{"role":"user","content":"hi"}]}`, `{"messages":[{"role":"developer","content":"a"},` + dev + `,{"role":"user","content":"hi"}]}`},
		{"G no system", gw.ShapeG, `{"contents":[]}`, `{"contents":[],"systemInstruction":{"parts":[` + g + `]}}`},
		{"G system parts", gw.ShapeG, `{"systemInstruction":{"parts":[{"text":"a"}]},"contents":[]}`, `{"systemInstruction":{"parts":[{"text":"a"},` + g + `]},"contents":[]}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Apply(tt.shape, []byte(tt.in))
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tt.want {
				t.Errorf("got  %s\nwant %s", got, tt.want)
			}
			if !json.Valid(got) {
				t.Errorf("not valid JSON: %s", got)
			}
		})
	}
}

func TestApplyErrors(t *testing.T) {
	for _, tt := range []struct {
		shape gw.Shape
		in    string
	}{{gw.ShapeM, `[]`}, {gw.ShapeM, `{"system":3}`}, {gw.ShapeC, `{"model":"x"}`}, {gw.ShapeC, `{"messages":{}}`}, {gw.ShapeG, `{"systemInstruction":[]}`}} {
		_, err := Apply(tt.shape, []byte(tt.in))
		if gw.ErrorCode(err) != gw.CodeInvalidRequest {
			t.Errorf("Apply(%s, %s) = %v, want invalid_request", tt.shape, tt.in, err)
		}
	}
}

func TestTextIsVerbatimInJSON(t *testing.T) {
	if string(textJSON) != `"`+Text+`"` {
		t.Fatalf("Text has characters JSON escapes: %s", textJSON)
	}
	if n := OpenAITokens() - chatFraming; n < 20 || n > 60 {
		t.Errorf("directive is %d o200k tokens; keep it short (tens of tokens)", n)
	}
}

func TestHeader(t *testing.T) {
	if got := HeaderValue(true); got != "applied; v=1" {
		t.Errorf("HeaderValue(true) = %q", got)
	}
	if HeaderValue(false) != "off" || !RequestOff(" OFF ") || RequestOff("on") || RequestOff("") {
		t.Error("header parsing")
	}
	o := New(Config{})
	if !o.Enabled(false, "") || o.Enabled(true, "") || o.Enabled(false, "off") || New(Config{Off: true}).Enabled(false, "") {
		t.Error("Enabled")
	}
}

// counterFunc counts a body by its length in bytes / 4, like the fakes.
type counterFunc func(ctx context.Context, model string, body []byte) (int64, error)

func (f counterFunc) CountTokens(ctx context.Context, model string, body []byte) (int64, error) {
	return f(ctx, model, body)
}

func TestTokens(t *testing.T) {
	var calls atomic.Int64
	fail := false
	now := time.Unix(1e9, 0)
	o := New(Config{
		Counters: map[string]Counter{"anthropic": counterFunc(func(_ context.Context, model string, body []byte) (int64, error) {
			calls.Add(1)
			if fail {
				return 0, errors.New("down")
			}
			if !strings.Contains(string(body), `"model":"`+model+`"`) {
				t.Errorf("count body names no model: %s", body)
			}
			return int64(len(body)+3) / 4, nil
		})},
		Now: func() time.Time { return now },
	})
	ctx := context.Background()
	want := int64(len(Segment(gw.ShapeM))+1+3)/4 + 1 // the smaller placement: one more block, plus the rounding token
	got := o.Tokens(ctx, "anthropic", "claude-x")
	if got < want-1 || got > want+1 {
		t.Errorf("anthropic tokens = %d, want about %d", got, want)
	}
	if o.Tokens(ctx, "anthropic", "claude-x") != got || calls.Load() != 4 {
		t.Errorf("count not cached: %d calls", calls.Load())
	}
	o.Tokens(ctx, "anthropic", "claude-y")
	if calls.Load() != 8 {
		t.Errorf("a second model must be counted: %d calls", calls.Load())
	}
	// Past the TTL with the endpoint down: the stale count stays.
	now = now.Add(25 * time.Hour)
	fail = true
	if n := o.Tokens(ctx, "anthropic", "claude-x"); n != got {
		t.Errorf("stale count = %d, want %d", n, got)
	}
	// Issue 46 D9: while the count is unknown, the upper bound (the
	// customer never pays for the directive).
	if n := o.Tokens(ctx, "anthropic", "claude-new"); n != UpperBound() {
		t.Errorf("failed count = %d, want the upper bound %d", n, UpperBound())
	}
	// A failed count is not retried within the back-off, then it is.
	before := calls.Load()
	o.Tokens(ctx, "anthropic", "claude-new")
	if calls.Load() != before {
		t.Errorf("count retried within the back-off")
	}
	fail = false
	now = now.Add(2 * failureBackoff)
	if n := o.Tokens(ctx, "anthropic", "claude-new"); n == UpperBound() || calls.Load() == before {
		t.Errorf("count not retried after the back-off: %d", n)
	}
	if n := o.Tokens(ctx, "deepseek", "deepseek-flash"); n != UpperBound() {
		t.Errorf("deepseek without a counter = %d, want the upper bound %d", n, UpperBound())
	}
	if n := o.Tokens(ctx, "openai", "gpt-6-sol"); n != OpenAITokens()+1 || n >= UpperBound() {
		t.Errorf("openai = %d, want the o200k count %d plus one (below the bound %d)", n, OpenAITokens(), UpperBound())
	}
}

// A Messages body that continues a thread gets no directive: the thread
// keeps the system prompt it was created with, and Anthropic refuses a
// new one.
func TestPrepareSkipsThreadContinue(t *testing.T) {
	o := New(Config{})
	body := []byte(`{"model":"m","max_tokens":5,"thread":{"type":"continue","previous_message_id":"msg_1"},"messages":[{"role":"user","content":"go on"}]}`)
	out, applied, err := o.Prepare(gw.ShapeM, body, false, http.Header{})
	if err != nil || applied || string(out) != string(body) {
		t.Fatalf("continue: applied %v, %v, body %s", applied, err, out)
	}
	create := []byte(`{"model":"m","max_tokens":5,"thread":{"type":"create"},"messages":[{"role":"user","content":"hi"}]}`)
	if _, applied, err := o.Prepare(gw.ShapeM, create, false, http.Header{}); err != nil || !applied {
		t.Fatalf("create: applied %v, %v", applied, err)
	}
}

// FuzzApply: whatever body a caller sends, adding the directive never
// panics, and a valid JSON body stays valid JSON that carries the
// directive once.
func FuzzApply(f *testing.F) {
	for _, s := range []string{
		`{"model":"m","system":"be brief","messages":[{"role":"user","content":"hi"}]}`,
		`{"model":"m","system":[{"type":"text","text":"a"}],"messages":[]}`,
		`{"model":"m","messages":[{"role":"system","content":"s"},{"role":"developer","content":"d"},{"role":"user","content":"u"}]}`,
		`{"contents":[],"systemInstruction":{"parts":[{"text":"x"}]}}`,
		`{"system":null}`, `{"system":""}`, `{}`, `[]`, `{`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		for _, shape := range []gw.Shape{gw.ShapeM, gw.ShapeC, gw.ShapeG} {
			out, err := Apply(shape, body)
			if err != nil || !json.Valid(body) {
				continue
			}
			if !json.Valid(out) {
				t.Fatalf("%s: valid %q became invalid %q", shape, body, out)
			}
			if n := strings.Count(string(out), Text[:40]); n != strings.Count(string(body), Text[:40])+1 {
				t.Fatalf("%s: the directive appears %d times in %q", shape, n, out)
			}
		}
	})
}

// Issue 38 item 5: a vendor without a count endpoint is counted with two
// real requests (with and without the directive), once per model; the
// share is their difference plus one token (issue 46 D9: rounded in the
// customer's favour), and on M the placement the
// body used decides which count applies.
func TestCountByTwoRequests(t *testing.T) {
	var calls atomic.Int32
	perByte := counterFunc(func(_ context.Context, _ string, body []byte) (int64, error) {
		calls.Add(1)
		return int64(len(body)+3) / 4, nil
	})
	o := New(Config{Counters: map[string]Counter{"groq": perByte, "anthropic": perByte}})
	ctx := context.Background()
	base, _ := countBody("groq", "llama", gw.ShapeC, false)
	with, _ := Apply(gw.ShapeC, base)
	want := int64(len(with)+3)/4 - int64(len(base)+3)/4 + 1
	if n := o.Tokens(ctx, "groq", "llama"); n != want || calls.Load() != 2 {
		t.Errorf("groq = %d after %d calls, want %d after 2", n, calls.Load(), want)
	}
	if n, ok := o.CachedTokens("groq", "llama"); !ok || n != want || calls.Load() != 2 {
		t.Errorf("cached groq = %d %v, want %d without a call", n, ok, want)
	}
	if want >= UpperBound()-100 || want <= Floor() {
		t.Errorf("groq share %d: want between the floor %d and far below the bound %d", want, Floor(), UpperBound())
	}
	own, _ := Apply(gw.ShapeM, []byte(`{"model":"c","messages":[]}`))
	after, _ := Apply(gw.ShapeM, []byte(`{"model":"c","system":"Be kind.","messages":[]}`))
	a := o.TokensIn(ctx, "anthropic", "c", own)
	b := o.TokensIn(ctx, "anthropic", "c", after)
	if a <= b || o.Tokens(ctx, "anthropic", "c") != b {
		t.Errorf("anthropic: own system member %d, after the caller's %d, Tokens %d: want the first larger, Tokens the smaller", a, b, o.Tokens(ctx, "anthropic", "c"))
	}
}
