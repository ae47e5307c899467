package anthropic

import "strings"

// Model rules that change how a canonical request must be encoded, from
// Anthropic's model notes (2026). Ids are matched by prefix so dated
// snapshots ("claude-opus-5-5-20260922") follow their family.
//
//   - Opus 5.5, Sonnet 5.5 and Fable 5.1 refuse forced tool use (tool_choice
//     any or tool) and cannot turn thinking off or take a fixed budget:
//     only adaptive thinking with an effort.
//   - Sonnet 5 thinks adaptively by default, refuses thinking.type
//     "enabled", and refuses non-default temperature, top_p and top_k.

func hasPrefix(model string, prefixes ...string) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(model, p) {
			return true
		}
	}
	return false
}

// forcedToolChoiceUnsupported reports models that refuse tool_choice any
// or tool.
func forcedToolChoiceUnsupported(model string) bool {
	return hasPrefix(model, "claude-opus-5-5", "claude-sonnet-5-5", "claude-fable-5-1")
}

// adaptiveThinkingOnly reports models whose thinking is adaptive only.
func adaptiveThinkingOnly(model string) bool {
	return hasPrefix(model, "claude-opus-5-5", "claude-sonnet-5-5", "claude-fable-5-1") || isSonnet5(model)
}

// samplingUnsupported reports models that refuse non-default sampling
// parameters.
func samplingUnsupported(model string) bool { return isSonnet5(model) }

// isSonnet5 matches Sonnet 5 but not Sonnet 5.5.
func isSonnet5(model string) bool {
	return strings.HasPrefix(model, "claude-sonnet-5") && !strings.HasPrefix(model, "claude-sonnet-5-5")
}
