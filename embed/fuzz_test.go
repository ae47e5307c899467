package embed

import (
	"encoding/json"
	"math"
	"testing"

	gw "github.com/gwlabs/gateway"
)

// FuzzParseOpenAI: any body parses to a request or to a 400
// (invalid_request), never a panic; a parsed request maps to vendor
// bodies that are valid JSON holding every input, and Gemini's split
// keeps every input once, in order.
func FuzzParseOpenAI(f *testing.F) {
	for _, s := range []string{
		`{"model":"openai/text-embedding-3-small","input":"hello"}`,
		`{"model":"m","input":["a","b"],"dimensions":8,"encoding_format":"base64","user":"u"}`,
		`{"model":"m","input":[1,2,3]}`,
		`{"model":"m","input":[[1,2],[3]]}`,
		`{"model":"m","input":["a",[1]]}`,
		`{"model":"m","input":"a","input":"b"}`,
		`{"model":"m","input":[],"dimensions":-1}`,
		`{"model":"m","input":[null]}`,
		`[]`, `{`, `{"model":1e400}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := ParseOpenAI(b)
		if err != nil {
			if gw.ErrorCode(err) != gw.CodeInvalidRequest {
				t.Fatalf("error %v is not invalid_request", err)
			}
			return
		}
		checkMapping(t, r)
	})
}

// FuzzParseGemini is FuzzParseOpenAI for Gemini's two methods.
func FuzzParseGemini(f *testing.F) {
	for _, s := range []string{
		`{"content":{"parts":[{"text":"hello"}]},"taskType":"RETRIEVAL_DOCUMENT","title":"t","outputDimensionality":8}`,
		`{"requests":[{"model":"models/m","content":{"parts":[{"text":"a"},{"text":"b"}]}}]}`,
		`{"requests":[{"model":"models/x","content":{"parts":[{"text":"a"}]}}]}`,
		`{"content":{"parts":[{"inlineData":{}}]}}`,
		`{"requests":[]}`, `{"content":1}`,
	} {
		f.Add([]byte(s), true)
		f.Add([]byte(s), false)
	}
	f.Fuzz(func(t *testing.T, b []byte, batch bool) {
		r, err := ParseGemini(b, "m", batch)
		if err != nil {
			if gw.ErrorCode(err) != gw.CodeInvalidRequest {
				t.Fatalf("error %v is not invalid_request", err)
			}
			return
		}
		checkMapping(t, r)
	})
}

func checkMapping(t *testing.T, r *Request) {
	t.Helper()
	if len(r.Inputs) == 0 || len(r.Inputs) > MaxInputs {
		t.Fatalf("%d inputs parsed", len(r.Inputs))
	}
	var o struct {
		Input []json.RawMessage `json:"input"`
	}
	if err := json.Unmarshal(OpenAIBody("m", r, "dimensions"), &o); err != nil || len(o.Input) != len(r.Inputs) {
		t.Fatalf("OpenAI body: %v, %d inputs for %d", err, len(o.Input), len(r.Inputs))
	}
	bodies, err := GeminiBodies("m", r)
	if r.HasTokens() {
		if err == nil {
			t.Fatal("token arrays mapped to Gemini")
		}
		return
	}
	if err != nil {
		t.Fatal(err)
	}
	i := 0
	for _, b := range bodies {
		var g struct {
			Requests []struct {
				Content struct {
					Parts []struct{ Text string } `json:"parts"`
				} `json:"content"`
			} `json:"requests"`
		}
		if err := json.Unmarshal(b, &g); err != nil || len(g.Requests) == 0 || len(g.Requests) > MaxGeminiBatch {
			t.Fatalf("Gemini body: %v, %d requests", err, len(g.Requests))
		}
		for _, q := range g.Requests {
			if q.Content.Parts[0].Text != r.Inputs[i].Text {
				t.Fatalf("input %d out of order", i)
			}
			i++
		}
	}
	if i != len(r.Inputs) {
		t.Fatalf("%d inputs mapped of %d", i, len(r.Inputs))
	}
	// The answers hold one vector an input.
	vecs := make([]Vector, len(r.Inputs))
	for i := range vecs {
		vecs[i] = Vector{JSON: []byte(`[0.5,-1]`), Len: 2}
	}
	var a struct {
		Data []struct{ Index int } `json:"data"`
	}
	if err := json.Unmarshal(OpenAIAnswer(r.Model, vecs, 1, r.Base64), &a); err != nil || len(a.Data) != len(vecs) {
		t.Fatalf("OpenAI answer: %v", err)
	}
}

// TestDecodeOpenAIOrdersByIndex: data listed out of order comes back in
// index order; missing, repeated or short vectors are upstream errors.
func TestDecodeOpenAIOrdersByIndex(t *testing.T) {
	v, u, err := DecodeOpenAI([]byte(`{"data":[{"index":1,"embedding":[3,4]},{"index":0,"embedding":[1,2]}],"usage":{"prompt_tokens":7,"total_tokens":7}}`), 2, 2)
	if err != nil || v[0].Floats()[0] != 1 || v[1].Floats()[0] != 3 || u.Tokens != 7 || !u.Reported {
		t.Fatalf("%v %v %+v", err, v, u)
	}
	for _, b := range []string{
		`{"data":[{"index":0,"embedding":[1,2]}]}`,
		`{"data":[{"index":0,"embedding":[1,2]},{"index":0,"embedding":[1,2]}]}`,
		`{"data":[{"index":0,"embedding":[1]},{"index":1,"embedding":[1,2]}]}`,
	} {
		if _, _, err := DecodeOpenAI([]byte(b), 2, 2); gw.ErrorCode(err) != gw.CodeUpstream {
			t.Errorf("%s: %v, want upstream_error", b, err)
		}
	}
	if _, u, _ := DecodeOpenAI([]byte(`{"data":[{"index":0,"embedding":[1]}],"usage":{"prompt_tokens":0}}`), 1, 1); u.Reported {
		t.Error("a usage of 0 tokens counted as reported")
	}
}

// FuzzDecode: any vendor answer decodes to n vectors of the asked length
// with finite values, or to an upstream_error; never a panic.
func FuzzDecode(f *testing.F) {
	f.Add([]byte(`{"data":[{"index":1,"embedding":[3,4]},{"index":0,"embedding":[1,2]}],"usage":{"prompt_tokens":7}}`), false)
	f.Add([]byte(`{"embeddings":[{"values":[1,2]},{"values":[-1e3,2.5e-1]}]}`), true)
	f.Add([]byte(`{"data":[{"embedding":[1e400,2]},{"embedding":[1, 2 ]}]}`), false)
	f.Fuzz(func(t *testing.T, b []byte, gemini bool) {
		var vecs []Vector
		var err error
		if gemini {
			vecs, err = DecodeGemini(b, 2, 2)
		} else {
			vecs, _, err = DecodeOpenAI(b, 2, 2)
		}
		if err != nil {
			if gw.ErrorCode(err) != gw.CodeUpstream {
				t.Fatalf("error %v is not upstream_error", err)
			}
			return
		}
		for _, v := range vecs {
			// The caller gets the vector's text: JSON numbers, two of
			// them, each finite.
			var xs []float64
			if err := json.Unmarshal(v.JSON, &xs); err != nil || len(xs) != 2 || v.Len != 2 {
				t.Fatalf("vector %q: %v %v", v.JSON, xs, err)
			}
			for _, x := range xs {
				if math.IsInf(x, 0) || math.IsNaN(x) {
					t.Fatalf("vector %q holds %v", v.JSON, x)
				}
			}
			if got := v.Floats(); len(got) != 2 || got[0] != xs[0] || got[1] != xs[1] {
				t.Fatalf("Floats %v, the text reads %v", got, xs)
			}
		}
	})
}
