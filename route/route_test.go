package route

import (
	"strings"
	"testing"

	gw "github.com/gwlabs/gateway"
)

func TestParse(t *testing.T) {
	tests := []struct {
		in         string
		vendor     string
		model      string
		errContain string
	}{
		{in: "openai/gpt-4.1", vendor: "openai", model: "gpt-4.1"},
		{in: "anthropic/claude-opus-5-5", vendor: "anthropic", model: "claude-opus-5-5"},
		{in: "google/gemini-3-flash", vendor: "google", model: "gemini-3-flash"},
		{in: "fireworks/accounts/fireworks/models/kimi-k2", vendor: "fireworks", model: "accounts/fireworks/models/kimi-k2"},
		{in: "together/meta-llama/Llama-3.3-70B-Instruct-Turbo", vendor: "together", model: "meta-llama/Llama-3.3-70B-Instruct-Turbo"},
		{in: "groq/openai/gpt-oss-120b", vendor: "groq", model: "openai/gpt-oss-120b"},
		{in: "mistral/mistral-large-3", vendor: "mistral", model: "mistral-large-3"},
		{in: "deepseek/deepseek-flash", vendor: "deepseek", model: "deepseek-flash"},
		{in: "openrouter/anthropic/claude-opus-5.5", vendor: "openrouter", model: "anthropic/claude-opus-5.5"},
		// The full id, which a client can show as is (issue 38 item 4;
		// before: "openai/<model>").
		{in: "gpt-4.1", errContain: `"openai/gpt-4.1"`},
		{in: "gpt-4.1-mini", errContain: `e.g. "openai/gpt-4.1-mini"`},
		{in: "claude-sonnet-5", errContain: `"anthropic/claude-sonnet-5"`},
		{in: "gemini-3-flash", errContain: `"google/gemini-3-flash"`},
		{in: "azure/gpt-4.1", errContain: "no vendor prefix"},
		{in: "azure/gpt-4.1", errContain: `"openai/gpt-4.1"`},
		{in: "meta-llama/llama-3", errContain: `"openrouter/meta-llama/llama-3"`},
		{in: "openrouter/x", errContain: "openrouter/<provider>/<model>"},
		{in: "openrouter//x", errContain: "openrouter/<provider>/<model>"},
		{in: "openai/", errContain: "names no model"},
		{in: "", errContain: "model is required"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := Parse(tt.in)
			if tt.errContain != "" {
				if err == nil {
					t.Fatalf("Parse(%q) = %+v, want error", tt.in, got)
				}
				if gw.ErrorCode(err) != gw.CodeInvalidRequest {
					t.Errorf("code = %s, want invalid_request", gw.ErrorCode(err))
				}
				if !strings.Contains(err.Error(), tt.errContain) {
					t.Errorf("error %q does not contain %q", err, tt.errContain)
				}
				return
			}
			if err != nil {
				t.Fatalf("Parse(%q): %v", tt.in, err)
			}
			if got.Vendor != tt.vendor || got.Model != tt.model {
				t.Errorf("Parse(%q) = %+v, want %s %s", tt.in, got, tt.vendor, tt.model)
			}
		})
	}
}

func TestVendorsKnown(t *testing.T) {
	if len(Vendors()) != 9 {
		t.Fatalf("want nine vendors, got %d", len(Vendors()))
	}
	for _, v := range Vendors() {
		if !Known(v) {
			t.Errorf("%s not known", v)
		}
	}
}
