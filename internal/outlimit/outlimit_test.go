package outlimit

import (
	"testing"

	gw "github.com/gwlabs/gateway"
	"github.com/gwlabs/gateway/internal/rawjson"
)

// Issue 21.2: the hold must see every output limit the vendor honours,
// the number of answers, and refuse what it cannot read unambiguously.
func TestRead(t *testing.T) {
	tests := []struct {
		name    string
		shape   gw.Shape
		body    string
		want    Limits
		wantErr bool
	}{
		{name: "none", shape: gw.ShapeC, body: `{"model":"m","messages":[]}`, want: Limits{Choices: 1}},
		{name: "n 128", shape: gw.ShapeC, body: `{"n":128,"max_tokens":1000}`, want: Limits{MaxOutput: 1000, Choices: 128, Field: "max_tokens"}},
		{name: "largest of both fields", shape: gw.ShapeC, body: `{"max_completion_tokens":1,"max_tokens":100000}`, want: Limits{MaxOutput: 100000, Choices: 1, Field: "max_tokens"}},
		{name: "largest of both fields, other order", shape: gw.ShapeC, body: `{"max_tokens":100,"max_completion_tokens":5000}`, want: Limits{MaxOutput: 5000, Choices: 1, Field: "max_completion_tokens"}},
		{name: "null is absent", shape: gw.ShapeC, body: `{"max_tokens":null,"n":null}`, want: Limits{Choices: 1}},
		{name: "n 0 counts as 1", shape: gw.ShapeC, body: `{"n":0}`, want: Limits{Choices: 1}},
		{name: "case variant beside the field", shape: gw.ShapeC, body: `{"MAX_TOKENS":1,"max_tokens":100000}`, wantErr: true},
		{name: "case variant alone", shape: gw.ShapeC, body: `{"Max_Tokens":1}`, wantErr: true},
		{name: "duplicate key", shape: gw.ShapeC, body: `{"max_tokens":1,"max_tokens":100000}`, wantErr: true},
		{name: "duplicate n", shape: gw.ShapeC, body: `{"n":1,"N":100}`, wantErr: true},
		{name: "not an integer", shape: gw.ShapeC, body: `{"max_tokens":"5"}`, wantErr: true},
		{name: "fraction", shape: gw.ShapeC, body: `{"max_tokens":5.5}`, wantErr: true},
		{name: "negative", shape: gw.ShapeC, body: `{"max_tokens":-1}`, wantErr: true},
		{name: "overflow", shape: gw.ShapeC, body: `{"max_tokens":9223372036854775808}`, wantErr: true},
		{name: "nested keys are not limits", shape: gw.ShapeC, body: `{"metadata":{"max_tokens":1},"max_tokens":7}`, want: Limits{MaxOutput: 7, Choices: 1, Field: "max_tokens"}},
		{name: "anthropic", shape: gw.ShapeM, body: `{"max_tokens":4096,"n":3}`, want: Limits{MaxOutput: 4096, Choices: 1, Field: "max_tokens"}},
		{name: "gemini", shape: gw.ShapeG, body: `{"contents":[],"generationConfig":{"maxOutputTokens":300,"candidateCount":4}}`, want: Limits{MaxOutput: 300, Choices: 4, Field: "maxOutputTokens"}},
		{name: "gemini proto names", shape: gw.ShapeG, body: `{"generationConfig":{"max_output_tokens":900,"candidate_count":2}}`, want: Limits{MaxOutput: 900, Choices: 2, Field: "max_output_tokens"}},
		{name: "gemini both names", shape: gw.ShapeG, body: `{"generationConfig":{"maxOutputTokens":1,"max_output_tokens":900}}`, wantErr: true},
		{name: "gemini no config", shape: gw.ShapeG, body: `{"contents":[]}`, want: Limits{Choices: 1}},
		{name: "not an object", shape: gw.ShapeC, body: `[1]`, wantErr: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Read(tc.shape, []byte(tc.body))
			if tc.wantErr {
				if gw.ErrorCode(err) != gw.CodeInvalidRequest {
					t.Fatalf("err = %v, want invalid_request", err)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("Read = %+v, %v; want %+v", got, err, tc.want)
			}
		})
	}
}

func TestSet(t *testing.T) {
	tests := []struct {
		shape  gw.Shape
		vendor string
		body   string
		field  string
	}{
		{gw.ShapeC, "openai", `{"model":"m","messages":[]}`, "max_completion_tokens"},
		{gw.ShapeC, "groq", `{"model":"m","messages":[]}`, "max_tokens"},
		{gw.ShapeM, "anthropic", `{"model":"m","max_tokens":64000,"messages":[]}`, "max_tokens"},
	}
	for _, tc := range tests {
		out, err := Set(tc.shape, tc.vendor, []byte(tc.body), 2345)
		if err != nil {
			t.Fatal(err)
		}
		if got := string(rawjson.Get(out, tc.field)); got != "2345" {
			t.Errorf("%s %s: %s = %q in %s", tc.shape, tc.vendor, tc.field, got, out)
		}
		l, err := Read(tc.shape, out)
		if err != nil || l.MaxOutput != 2345 {
			t.Errorf("%s: read back %+v, %v", out, l, err)
		}
	}
	// A second limit field is lowered too, so the vendor honours no more.
	out, err := Set(gw.ShapeC, "openai", []byte(`{"max_tokens":100000}`), 10)
	if err != nil {
		t.Fatal(err)
	}
	if l, _ := Read(gw.ShapeC, out); l.MaxOutput != 10 {
		t.Errorf("%s: max %d, want 10", out, l.MaxOutput)
	}
	if _, err := Set(gw.ShapeG, "google", []byte(`{}`), 1); err == nil {
		t.Error("Set on a Gemini body should fail")
	}
}

func TestFoldEqual(t *testing.T) {
	names := []string{"max_tokens", "maxOutputTokens", "max_output_tokens", "n", "candidateCount", "candidate_count"}
	keys := []string{"max_tokens", "MAX_TOKENS", "maxtokens", "_max__tokens_", "max_token", "max_tokensx", "N", "n_", "",
		"MAXOUTPUTTOKENS", "max_\u212Aokens", "ma\u0130x_tokens", "candidate_COUNT", "candidatecount", "max_output_tokens"}
	for _, n := range names {
		for _, k := range keys {
			if got, want := foldEqual(k, n), fold(k) == fold(n); got != want {
				t.Errorf("foldEqual(%q, %q) = %v, fold says %v", k, n, got, want)
			}
		}
	}
}

func FuzzFoldEqual(f *testing.F) {
	f.Add("MAX_tokens", "max_tokens")
	f.Add("max_\u212Aokens", "max_tokens")
	f.Fuzz(func(t *testing.T, k, n string) {
		for i := 0; i < len(n); i++ {
			if n[i] >= 0x80 {
				return // names are ASCII
			}
		}
		if got, want := foldEqual(k, n), fold(k) == fold(n); got != want {
			t.Errorf("foldEqual(%q, %q) = %v, fold says %v", k, n, got, want)
		}
	})
}
