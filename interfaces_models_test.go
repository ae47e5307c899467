package gw

import "testing"

func TestModelAllowed(t *testing.T) {
	for _, c := range []struct {
		models        []string
		vendor, model string
		want          bool
	}{
		{nil, "openai", "gpt-6-sol", true},
		{[]string{"openai/*"}, "openai", "gpt-6-sol", true},
		{[]string{"openai/*"}, "anthropic", "claude-sonnet-5-5", false},
		{[]string{"anthropic/claude-sonnet-*"}, "anthropic", "claude-sonnet-5-5", true},
		{[]string{"anthropic/claude-sonnet-*"}, "anthropic", "claude-opus-5", false},
		{[]string{"OpenAI/GPT-6-SOL"}, "openai", "gpt-6-sol", true},
		{[]string{"openai/gpt-6-sol"}, "openai", "gpt-6-sol-mini", false},
		{[]string{"*"}, "groq", "x", true},
		{[]string{"openrouter/meta-llama/*"}, "openrouter", "meta-llama/llama-3.3-70b-instruct", true},
	} {
		if got := ModelAllowed(c.models, c.vendor, c.model); got != c.want {
			t.Errorf("ModelAllowed(%v, %s/%s) = %v", c.models, c.vendor, c.model, got)
		}
	}
	if got := SplitModels(JoinModels([]string{"a/*", "b/c"})); len(got) != 2 || got[1] != "b/c" {
		t.Errorf("round trip %v", got)
	}
	if SplitModels("") != nil {
		t.Error("an empty column is not an empty list")
	}
}
