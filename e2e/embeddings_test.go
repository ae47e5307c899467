package e2e

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"strings"
	"testing"
	"time"

	gw "github.com/gwlabs/gateway"
	"github.com/gwlabs/gateway/fakevendor"
	"github.com/gwlabs/gateway/internal/app"
)

// embedRoute is one embedding prefix with the model the tests use, the
// length asked (0: the model's own, fixed) and the hand-worked billing of
// embedTexts: the input tokens billed and the charge in micro-cents.
type embedRoute struct {
	vendor, model string
	dims          int
	tokens        int64
	charge        gw.Money
	missing       bool // the vendor reports no usage: the gateway counts
}

// embedTexts are the inputs of every billing case. The fakes report
// ceil(bytes/4) tokens an input: 3 + 2 + 5 = 10. Gemini reports none;
// the gateway counts them in o200k: "alpha beta" 2, "gamma" 1, "delta
// epsilon zeta" 4 = 7.
var embedTexts = []string{"alpha beta", "gamma", "delta epsilon zeta"}

// embedRoutes are the prefixes that embed. Charges, by hand (1 USD =
// 1e8 micro-cents; charge = cost x 1.09, half up):
//
//	openai/text-embedding-3-small    $0.02/M  x 10 = 20 uc    -> 21.8  -> 22
//	google/gemini-embedding-001      $0.15/M  x 7  = 105 uc   -> 114.45 -> 114 (counted)
//	mistral/codestral-embed          $0.15/M  x 10 = 150 uc   -> 163.5 -> 164
//	together/BAAI/bge-large-en-v1.5  $0.02/M  x 10 = 20 uc    -> 22
//	fireworks/nomic-embed-text-v1.5  $0.008/M x 10 = 8 uc     -> 8.72  -> 9
//	openrouter/openai/text-embedding-3-small: usage.cost $0.0000002 = 20 uc -> 22
func embedRoutes() []embedRoute {
	return []embedRoute{
		{"openai", "text-embedding-3-small", 8, 10, 22, false},
		{"google", "gemini-embedding-001", 8, 7, 114, true},
		{"mistral", "codestral-embed", 8, 10, 164, false},
		{"together", "BAAI/bge-large-en-v1.5", 0, 10, 22, false},
		{"fireworks", "nomic-ai/nomic-embed-text-v1.5", 8, 10, 9, false},
		{"openrouter", "openai/text-embedding-3-small", 8, 10, 22, false},
	}
}

func (r embedRoute) id() string { return r.vendor + "/" + r.model }

// length is the vectors' expected length.
func (r embedRoute) length() int {
	if r.dims > 0 {
		return r.dims
	}
	return fakevendor.EmbedDims(r.model)
}

// embedBody is an OpenAI-shape request for inputs.
func embedBody(model string, inputs any, dims int, format string) []byte {
	m := map[string]any{"model": model, "input": inputs}
	if dims > 0 {
		m["dimensions"] = dims
	}
	if format != "" {
		m["encoding_format"] = format
	}
	b, _ := json.Marshal(m)
	return b
}

type openAIEmbeddings struct {
	Object string `json:"object"`
	Data   []struct {
		Object    string          `json:"object"`
		Index     int             `json:"index"`
		Embedding json.RawMessage `json:"embedding"`
	} `json:"data"`
	Model string `json:"model"`
	Usage struct {
		PromptTokens int64 `json:"prompt_tokens"`
		TotalTokens  int64 `json:"total_tokens"`
	} `json:"usage"`
}

// float32s decodes OpenAI's base64 encoding_format.
func float32s(t *testing.T, raw json.RawMessage) []float32 {
	t.Helper()
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		t.Fatalf("base64 embedding is not a string: %s", raw)
	}
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil || len(b)%4 != 0 {
		t.Fatalf("base64 embedding does not decode: %v", err)
	}
	out := make([]float32, len(b)/4)
	for i := range out {
		out[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return out
}

func sameFloats(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// checkVectors holds got to one vector per text, in order, each the
// fake's vector of that text.
func checkVectors(t *testing.T, r embedRoute, texts []string, got [][]float64) {
	t.Helper()
	if len(got) != len(texts) {
		t.Fatalf("%s: %d vectors for %d inputs", r.id(), len(got), len(texts))
	}
	for i, v := range got {
		if len(v) != r.length() {
			t.Errorf("%s: vector %d has %d values, want %d", r.id(), i, len(v), r.length())
		}
		if want := fakevendor.Vector(r.vendor, r.model, texts[i], r.length()); !sameFloats(v, want) {
			t.Errorf("%s: vector %d is not input %d's (order lost?)", r.id(), i, i)
		}
	}
}

// checkBilled holds the request's record and charge header to the
// hand-worked figures.
func checkBilled(t *testing.T, e *env, resp *http.Response, r embedRoute) gw.Money {
	t.Helper()
	rec := recordOf(t, e, resp)
	if rec.Endpoint != "embeddings" || rec.Vendor != r.vendor || rec.Model != r.model || rec.Status != 200 {
		t.Errorf("%s: record %+v", r.id(), rec)
	}
	if rec.Usage.InputTokens != r.tokens || rec.Usage.OutputTokens != 0 || rec.Charge != r.charge {
		t.Errorf("%s: billed %d tokens, charge %d uc; want %d tokens, %d uc", r.id(), rec.Usage.InputTokens, rec.Charge, r.tokens, r.charge)
	}
	if got := strings.Contains(rec.Note, "usage_missing"); got != r.missing {
		t.Errorf("%s: note %q, usage_missing %v", r.id(), rec.Note, r.missing)
	}
	c, err := parseCents(resp.Header.Get("X-Gateway-Customer-Charge-Cents"))
	if err != nil || c != r.charge {
		t.Errorf("%s: charge header %q (%v), want %d uc", r.id(), resp.Header.Get("X-Gateway-Customer-Charge-Cents"), err, r.charge)
	}
	return rec.Charge
}

// TestEmbeddingsOpenAIShape: POST /v1/embeddings on every embedding
// prefix, on both stores: N inputs give N vectors in input order, each of
// the asked length, base64 decodes to the same floats, and the charge is
// the hand-worked figure (Gemini's missing usage counted by the gateway).
func TestEmbeddingsOpenAIShape(t *testing.T) {
	for name, dbURL := range storesUnderTest(t) {
		t.Run(name, func(t *testing.T) {
			e := newEnv(t, func(c *app.Config) { c.DatabaseURL = dbURL })
			ctx := context.Background()
			secret, k, err := createKey(ctx, e.m.Store(), fmt.Sprintf("embed-%s-%d", name, time.Now().UnixNano()), 10*gw.USD)
			if err != nil {
				t.Fatal(err)
			}
			var paid gw.Money
			for _, r := range embedRoutes() {
				resp := e.post("/v1/embeddings", secret, embedBody(r.id(), embedTexts, r.dims, ""))
				b := readAll(t, resp.Body)
				if resp.StatusCode != 200 {
					t.Fatalf("%s: %d %s", r.id(), resp.StatusCode, b)
				}
				var a openAIEmbeddings
				if err := json.Unmarshal(b, &a); err != nil {
					t.Fatal(err)
				}
				vecs := make([][]float64, len(a.Data))
				for i, d := range a.Data {
					if d.Index != i || d.Object != "embedding" {
						t.Errorf("%s: data[%d] index %d object %q", r.id(), i, d.Index, d.Object)
					}
					if err := json.Unmarshal(d.Embedding, &vecs[i]); err != nil {
						t.Fatal(err)
					}
				}
				checkVectors(t, r, embedTexts, vecs)
				if a.Object != "list" || a.Model != r.id() || a.Usage.PromptTokens != r.tokens || a.Usage.TotalTokens != r.tokens {
					t.Errorf("%s: object %q model %q usage %+v", r.id(), a.Object, a.Model, a.Usage)
				}
				paid += checkBilled(t, e, resp, r)

				// base64: the same floats.
				resp = e.post("/v1/embeddings", secret, embedBody(r.id(), embedTexts, r.dims, "base64"))
				b = readAll(t, resp.Body)
				if resp.StatusCode != 200 {
					t.Fatalf("%s base64: %d %s", r.id(), resp.StatusCode, b)
				}
				var a64 openAIEmbeddings
				if err := json.Unmarshal(b, &a64); err != nil || len(a64.Data) != len(vecs) {
					t.Fatalf("%s base64: %v, %d vectors", r.id(), err, len(a64.Data))
				}
				for i, d := range a64.Data {
					f := float32s(t, d.Embedding)
					if len(f) != len(vecs[i]) {
						t.Fatalf("%s base64: vector %d has %d values, want %d", r.id(), i, len(f), len(vecs[i]))
					}
					for j := range f {
						if f[j] != float32(vecs[i][j]) {
							t.Fatalf("%s base64: vector %d value %d = %v, float %v", r.id(), i, j, f[j], vecs[i][j])
						}
					}
				}
				paid += checkBilled(t, e, resp, r)
			}
			bal, err := e.m.Store().Balance(ctx, k.AccountID)
			if err != nil {
				t.Fatal(err)
			}
			// 2 x (22 + 114 + 164 + 22 + 9 + 22) = 706 uc.
			if bal.Held != 0 || bal.Charged != paid || paid != 706 {
				t.Errorf("balance %+v, charges %d uc; want 706 uc charged, nothing held", bal, paid)
			}
		})
	}
}

// TestEmbeddingsInputForms: a single string, and token arrays (one, and
// several), on openai/: one vector per input, billed at the reported
// tokens.
func TestEmbeddingsInputForms(t *testing.T) {
	e := newEnv(t)
	r := embedRoutes()[0]
	for _, c := range []struct {
		input any
		texts []string
		want  int64
	}{
		{"hello there", []string{"hello there"}, 3},
		{[]int{11, 22, 33}, []string{"[11,22,33]"}, 3},
		{[][]int{{1, 2}, {3, 4, 5, 6}}, []string{"[1,2]", "[3,4,5,6]"}, 6},
	} {
		resp := e.post("/v1/embeddings", e.key, embedBody(r.id(), c.input, r.dims, ""))
		b := readAll(t, resp.Body)
		if resp.StatusCode != 200 {
			t.Fatalf("%v: %d %s", c.input, resp.StatusCode, b)
		}
		var a openAIEmbeddings
		if err := json.Unmarshal(b, &a); err != nil {
			t.Fatal(err)
		}
		vecs := make([][]float64, len(a.Data))
		for i, d := range a.Data {
			_ = json.Unmarshal(d.Embedding, &vecs[i])
		}
		checkVectors(t, r, c.texts, vecs)
		if rec := recordOf(t, e, resp); rec.Usage.InputTokens != c.want {
			t.Errorf("%v: billed %d tokens, want %d", c.input, rec.Usage.InputTokens, c.want)
		}
	}
}

// TestEmbeddingsRefusals: a prefix without embeddings and a chat model
// are 400s in OpenAI's envelope naming the prefixes and models that
// embed; hostile bodies are 400s, never a vendor call.
func TestEmbeddingsRefusals(t *testing.T) {
	e := newEnv(t)
	before := len(e.fake.Requests())
	for _, c := range []struct {
		name string
		body string
		want string
	}{
		{"no embeddings prefix", `{"model":"anthropic/claude-sonnet-5-5","input":"x"}`, "text-embedding-3-small"},
		{"chat model", `{"model":"openai/gpt-6-sol","input":"x"}`, "openai/, google/, mistral/, together/, fireworks/, openrouter/"},
		{"groq", `{"model":"groq/llama-3.3-70b-versatile","input":"x"}`, "groq/ has no embeddings"},
		{"duplicate field", `{"model":"openai/text-embedding-3-small","input":"x","input":"y"}`, "twice"},
		{"mistyped field", `{"model":"openai/text-embedding-3-small","inputs":"x"}`, "unknown field"},
		{"empty input", `{"model":"openai/text-embedding-3-small","input":[]}`, "empty"},
		{"number input", `{"model":"openai/text-embedding-3-small","input":5}`, "input"},
		{"bad format", `{"model":"openai/text-embedding-3-small","input":"x","encoding_format":"int8"}`, "encoding_format"},
		{"dimensions above", `{"model":"openai/text-embedding-3-small","input":"x","dimensions":4096}`, "at most 1536"},
		{"fixed dimensions", `{"model":"together/BAAI/bge-large-en-v1.5","input":"x","dimensions":8}`, "1024 dimensions only"},
		{"tokens to google", `{"model":"google/gemini-embedding-001","input":[[1,2]]}`, "text only"},
		{"not json", `{"model":`, "JSON"},
	} {
		resp := e.post("/v1/embeddings", e.key, []byte(c.body))
		b := readAll(t, resp.Body)
		var env struct {
			Error struct {
				Message string `json:"message"`
				Type    string `json:"type"`
			} `json:"error"`
		}
		if resp.StatusCode != 400 || json.Unmarshal(b, &env) != nil || !strings.Contains(env.Error.Message, c.want) {
			t.Errorf("%s: %d %s; want 400 naming %q", c.name, resp.StatusCode, b, c.want)
		}
	}
	if n := len(e.fake.Requests()); n != before {
		t.Errorf("refused requests reached the vendor: %d calls", n-before)
	}
	resp := e.post("/v1/embeddings", "", []byte(`{"model":"openai/text-embedding-3-small","input":"x"}`))
	readAll(t, resp.Body)
	if resp.StatusCode != 401 {
		t.Errorf("no key: %d, want 401", resp.StatusCode)
	}
}

// TestEmbeddingsGeminiSplit: 101 inputs to google/ go as two
// batchEmbedContents calls (100 and 1) and come back as 101 vectors in
// input order, billed once at the gateway's count.
func TestEmbeddingsGeminiSplit(t *testing.T) {
	e := newEnv(t)
	r := embedRoutes()[1]
	texts := make([]string, 101)
	for i := range texts {
		texts[i] = fmt.Sprintf("passage number %d", i)
	}
	before := len(e.fake.Requests())
	resp := e.post("/v1/embeddings", e.key, embedBody(r.id(), texts, r.dims, ""))
	b := readAll(t, resp.Body)
	if resp.StatusCode != 200 {
		t.Fatalf("%d %s", resp.StatusCode, b)
	}
	var a openAIEmbeddings
	if err := json.Unmarshal(b, &a); err != nil {
		t.Fatal(err)
	}
	vecs := make([][]float64, len(a.Data))
	for i, d := range a.Data {
		_ = json.Unmarshal(d.Embedding, &vecs[i])
	}
	checkVectors(t, r, texts, vecs)
	calls := e.fake.Requests()[before:]
	if len(calls) != 2 {
		t.Fatalf("%d vendor calls, want 2", len(calls))
	}
	for i, want := range []int{100, 1} {
		var q struct {
			Requests []json.RawMessage `json:"requests"`
		}
		if !strings.HasSuffix(calls[i].Path, ":batchEmbedContents") || json.Unmarshal(calls[i].Body, &q) != nil || len(q.Requests) != want {
			t.Errorf("call %d: %s with %d requests, want batchEmbedContents with %d", i, calls[i].Path, len(q.Requests), want)
		}
	}
	rec := recordOf(t, e, resp)
	if rec.Usage.InputTokens <= 101 || !strings.Contains(rec.Note, "usage_missing") || rec.Charge <= 0 {
		t.Errorf("record %+v: want the gateway's count (more than one token an input), noted, charged", rec)
	}
}

// gEmbedding is Gemini's embedContent and batchEmbedContents answers.
type gEmbedding struct {
	Embedding *struct {
		Values []float64 `json:"values"`
	} `json:"embedding"`
	Embeddings []struct {
		Values []float64 `json:"values"`
	} `json:"embeddings"`
}

// TestEmbeddingsGeminiShape: :embedContent and :batchEmbedContents on
// every embedding prefix, answered in Gemini's shape, billed as the
// OpenAI shape is (the same hand-worked figures for the same inputs), on
// both stores; google/ gets taskType and title through.
func TestEmbeddingsGeminiShape(t *testing.T) {
	for name, dbURL := range storesUnderTest(t) {
		t.Run(name, func(t *testing.T) {
			e := newEnv(t, func(c *app.Config) { c.DatabaseURL = dbURL })
			for _, r := range embedRoutes() {
				dims := ""
				if r.dims > 0 {
					dims = fmt.Sprintf(`,"outputDimensionality":%d`, r.dims)
				}
				hint := ""
				if r.vendor == "google" {
					hint = `,"taskType":"RETRIEVAL_DOCUMENT","title":"Doc"`
				}
				var reqs []string
				for _, s := range embedTexts {
					reqs = append(reqs, `{"model":"models/`+r.id()+`","content":{"parts":[{"text":`+quote(s)+`}]}`+hint+dims+`}`)
				}
				resp := e.gpost("/v1beta/models/"+r.id()+":batchEmbedContents", []byte(`{"requests":[`+strings.Join(reqs, ",")+`]}`))
				b := readAll(t, resp.Body)
				if resp.StatusCode != 200 {
					t.Fatalf("%s batch: %d %s", r.id(), resp.StatusCode, b)
				}
				var a gEmbedding
				if err := json.Unmarshal(b, &a); err != nil {
					t.Fatal(err)
				}
				vecs := make([][]float64, len(a.Embeddings))
				for i, v := range a.Embeddings {
					vecs[i] = v.Values
				}
				checkVectors(t, r, embedTexts, vecs)
				if r.vendor == "google" {
					sent := e.lastRequest().Body
					if !bytes.Contains(sent, []byte(`"taskType":"RETRIEVAL_DOCUMENT"`)) || !bytes.Contains(sent, []byte(`"title":"Doc"`)) {
						t.Errorf("google got %s; want taskType and title", sent)
					}
				}
				rec := recordOf(t, e, resp)
				if rec.Endpoint != "embeddings" || rec.Usage.InputTokens <= 0 || rec.Charge <= 0 || resp.Header.Get("X-Gateway-Customer-Charge-Cents") == "" {
					t.Errorf("%s batch: record %+v, header %q", r.id(), rec, resp.Header.Get("X-Gateway-Customer-Charge-Cents"))
				}
				if r.vendor != "google" {
					checkBilled(t, e, resp, r)
				}

				resp = e.gpost("/v1beta/models/"+r.id()+":embedContent", []byte(`{"content":{"parts":[{"text":"gamma"}]}`+dims+`}`))
				b = readAll(t, resp.Body)
				if resp.StatusCode != 200 {
					t.Fatalf("%s single: %d %s", r.id(), resp.StatusCode, b)
				}
				a = gEmbedding{}
				if err := json.Unmarshal(b, &a); err != nil || a.Embedding == nil {
					t.Fatalf("%s single: %s", r.id(), b)
				}
				checkVectors(t, r, []string{"gamma"}, [][]float64{a.Embedding.Values})
				if rec := recordOf(t, e, resp); rec.Usage.InputTokens != map[bool]int64{true: 1, false: 2}[r.missing] || rec.Charge <= 0 {
					t.Errorf("%s single: billed %d tokens, charge %d", r.id(), rec.Usage.InputTokens, rec.Charge)
				}
			}
			resp := e.gpost("/v1beta/models/anthropic/claude-sonnet-5-5:embedContent", []byte(`{"content":{"parts":[{"text":"x"}]}}`))
			b := readAll(t, resp.Body)
			if resp.StatusCode != 400 || !bytes.Contains(b, []byte("INVALID_ARGUMENT")) || !bytes.Contains(b, []byte("gemini-embedding-001")) {
				t.Errorf("anthropic/ embedContent: %d %s; want Google's 400 naming the models that embed", resp.StatusCode, b)
			}
		})
	}
}

// TestEmbeddingsLimitsBudgetsRuns: the key's RPM applies to embeddings
// (429 with Retry-After, in each shape's envelope), an empty balance is
// a 402 before the vendor is called, and a run's step is counted and
// reported in X-Gateway-Run-Spend, the charge included.
func TestEmbeddingsLimitsBudgetsRuns(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	body := embedBody("openai/text-embedding-3-small", embedTexts, 8, "")

	limited, _, err := createKeyWithLimits(ctx, e.m.Store(), fmt.Sprintf("embed-rpm-%d", time.Now().UnixNano()), gw.USD, gw.Limit{RPM: 1})
	if err != nil {
		t.Fatal(err)
	}
	first := e.post("/v1/embeddings", limited, body)
	readAll(t, first.Body)
	second := e.post("/v1/embeddings", limited, body)
	b := readAll(t, second.Body)
	if first.StatusCode != 200 || second.StatusCode != 429 || second.Header.Get("Retry-After") == "" || !bytes.Contains(b, []byte("rate limit")) {
		t.Errorf("RPM 1: %d then %d %s (Retry-After %q)", first.StatusCode, second.StatusCode, b, second.Header.Get("Retry-After"))
	}
	g := e.post("/v1beta/models/openai/text-embedding-3-small:embedContent", "", []byte(`{"content":{"parts":[{"text":"x"}]}}`), "X-Goog-Api-Key", limited)
	b = readAll(t, g.Body)
	if g.StatusCode != 429 || !bytes.Contains(b, []byte("RESOURCE_EXHAUSTED")) {
		t.Errorf("RPM 1, Gemini shape: %d %s", g.StatusCode, b)
	}

	before := len(e.fake.Requests())
	broke, _, err := createKey(ctx, e.m.Store(), fmt.Sprintf("embed-broke-%d", time.Now().UnixNano()), 0)
	if err != nil {
		t.Fatal(err)
	}
	resp := e.post("/v1/embeddings", broke, body)
	b = readAll(t, resp.Body)
	if resp.StatusCode != 402 || len(e.fake.Requests()) != before {
		t.Errorf("empty balance: %d %s, %d vendor calls", resp.StatusCode, b, len(e.fake.Requests())-before)
	}

	resp = e.post("/v1/embeddings", e.key, body, "X-Gateway-Run", "embed-run", "X-Gateway-Run-Budget", "1")
	readAll(t, resp.Body)
	charge, err := parseCents(resp.Header.Get("X-Gateway-Customer-Charge-Cents"))
	if resp.StatusCode != 200 || err != nil || charge != 22 {
		t.Fatalf("run request: %d, charge %q", resp.StatusCode, resp.Header.Get("X-Gateway-Customer-Charge-Cents"))
	}
	if spend := resp.Header.Get("X-Gateway-Run-Spend"); spend == "" {
		t.Errorf("no X-Gateway-Run-Spend on an embeddings request of a run")
	}
}
