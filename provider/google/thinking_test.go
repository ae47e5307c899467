package google

import (
	"encoding/json"
	"testing"

	gw "github.com/gwlabs/gateway"
)

func TestThinkingConfigPerFamily(t *testing.T) {
	tests := []struct {
		name  string
		model string
		rs    gw.Reasoning
		want  string // generationConfig.thinkingConfig JSON, "" when absent
	}{
		{"3.x effort to level", "gemini-3-flash", gw.Reasoning{Effort: "medium"}, `{"includeThoughts":true,"thinkingLevel":"MEDIUM"}`},
		{"3.x xhigh is HIGH", "gemini-3.5-flash", gw.Reasoning{Effort: "xhigh"}, `{"includeThoughts":true,"thinkingLevel":"HIGH"}`},
		{"3.x budget buckets: small is LOW", "gemini-3-flash", gw.Reasoning{BudgetTokens: 1024}, `{"includeThoughts":true,"thinkingLevel":"LOW"}`},
		{"3.x budget buckets: mid is MEDIUM", "gemini-3-flash", gw.Reasoning{BudgetTokens: 4096}, `{"includeThoughts":true,"thinkingLevel":"MEDIUM"}`},
		{"3.x budget buckets: large is HIGH", "gemini-3-flash", gw.Reasoning{BudgetTokens: 16000}, `{"includeThoughts":true,"thinkingLevel":"HIGH"}`},
		{"3.x adaptive leaves the level to the model", "gemini-3-flash", gw.Reasoning{Adaptive: true}, `{"includeThoughts":true}`},
		{"3.x off is MINIMAL without thoughts", "gemini-3-flash", gw.Reasoning{Disabled: true}, `{"thinkingLevel":"MINIMAL"}`},
		{"3.0 Pro has no MEDIUM", "gemini-3-pro-preview", gw.Reasoning{Effort: "medium"}, `{"includeThoughts":true,"thinkingLevel":"HIGH"}`},
		{"Pro has no MINIMAL", "gemini-3.1-pro", gw.Reasoning{Effort: "minimal"}, `{"includeThoughts":true,"thinkingLevel":"LOW"}`},
		{"unknown names are current models", "gemini-flash-latest", gw.Reasoning{Effort: "low"}, `{"includeThoughts":true,"thinkingLevel":"LOW"}`},
		{"2.5 budget as given", "gemini-2.5-flash", gw.Reasoning{BudgetTokens: 3000}, `{"includeThoughts":true,"thinkingBudget":3000}`},
		{"2.5 effort to budget", "gemini-2.5-flash", gw.Reasoning{Effort: "low"}, `{"includeThoughts":true,"thinkingBudget":1024}`},
		{"2.5 max on Pro", "gemini-2.5-pro", gw.Reasoning{Effort: "max"}, `{"includeThoughts":true,"thinkingBudget":32768}`},
		{"2.5 enabled without either is dynamic", "gemini-2.5-flash", gw.Reasoning{}, `{"includeThoughts":true,"thinkingBudget":-1}`},
		{"2.5 Flash off is 0", "gemini-2.5-flash", gw.Reasoning{Effort: "none"}, `{"thinkingBudget":0}`},
		{"2.0 takes no thinking config", "gemini-2.0-flash", gw.Reasoning{Effort: "high"}, ``},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rs := tt.rs
			r := &gw.Request{Model: tt.model, Reasoning: &rs, Messages: []gw.Message{{Role: gw.RoleUser, Content: []gw.Part{{Type: gw.PartText, Text: "x"}}}}}
			body, err := EncodeRequest(r)
			if err != nil {
				t.Fatal(err)
			}
			var got struct {
				GenerationConfig struct {
					ThinkingConfig json.RawMessage `json:"thinkingConfig"`
				} `json:"generationConfig"`
			}
			if err := json.Unmarshal(body, &got); err != nil {
				t.Fatal(err)
			}
			if string(got.GenerationConfig.ThinkingConfig) != tt.want {
				t.Errorf("thinkingConfig = %s, want %s", got.GenerationConfig.ThinkingConfig, tt.want)
			}
		})
	}
}

func TestDroppedFieldsAreListedOnce(t *testing.T) {
	cc := json.RawMessage(`{"type":"ephemeral"}`)
	r := &gw.Request{
		Model:   "gemini-3-flash",
		System:  []gw.Part{{Type: gw.PartText, Text: "a", CacheControl: cc}, {Type: gw.PartText, Text: "b", CacheControl: cc}},
		Dropped: []string{"logprobs"},
		Messages: []gw.Message{{Role: gw.RoleUser, Content: []gw.Part{
			{Type: gw.PartText, Text: "x", CacheControl: cc},
		}}},
	}
	if _, err := EncodeRequest(r); err != nil {
		t.Fatal(err)
	}
	if len(r.Dropped) != 2 || r.Dropped[0] != "logprobs" || r.Dropped[1] != "cache_control" {
		t.Errorf("Dropped = %q", r.Dropped)
	}
}
