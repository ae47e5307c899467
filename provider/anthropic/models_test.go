package anthropic

import "testing"

func TestModelRules(t *testing.T) {
	tests := []struct {
		model                      string
		forced, adaptive, sampling bool
	}{
		{"claude-opus-5-5", true, true, false},
		{"claude-sonnet-5-5-20260922", true, true, false},
		{"claude-fable-5-1", true, true, false},
		{"claude-sonnet-5", false, true, true},
		{"claude-sonnet-5-20260701", false, true, true},
		{"claude-opus-5", false, false, false},
		{"claude-haiku-4-5", false, false, false},
	}
	for _, tt := range tests {
		if got := forcedToolChoiceUnsupported(tt.model); got != tt.forced {
			t.Errorf("%s forced = %v", tt.model, got)
		}
		if got := adaptiveThinkingOnly(tt.model); got != tt.adaptive {
			t.Errorf("%s adaptive = %v", tt.model, got)
		}
		if got := samplingUnsupported(tt.model); got != tt.sampling {
			t.Errorf("%s sampling = %v", tt.model, got)
		}
	}
}
