package openai

// ReasoningStyle says how a vendor takes the canonical reasoning control.
type ReasoningStyle int

// Reasoning styles.
const (
	// ReasoningEffort sends reasoning_effort (OpenAI, Together, Fireworks,
	// Groq, Mistral).
	ReasoningEffort ReasoningStyle = iota
	// ReasoningDeepSeek sends thinking:{type:enabled|disabled} plus
	// reasoning_effort in DeepSeek's low|high|max vocabulary.
	ReasoningDeepSeek
	// ReasoningOpenRouter sends reasoning:{effort|max_tokens|enabled}.
	ReasoningOpenRouter
)

// Dialect describes one C-shaped vendor's quirks: which fields it names
// differently, which it lacks, and which rules it adds to the common C
// request (the vendor protocol notes, sections 4, 6.1 and 10). DialectFor
// returns the seven known ones; a provider may adjust its own copy.
type Dialect struct {
	// Vendor is the routing prefix ("openai", "mistral", ...); it also
	// prefixes in-stream error messages.
	Vendor string

	// MaxTokensField is "max_completion_tokens" or "max_tokens".
	MaxTokensField string
	// StreamOptions: the vendor takes stream_options.include_usage (not
	// Mistral; a deprecated no-op on OpenRouter, which always reports).
	StreamOptions bool
	// DeveloperToSystem: the vendor does not know the "developer" role, so
	// a pass-through body must rename it to "system". Canonical encoding
	// always emits "system".
	DeveloperToSystem bool
	// TopK: the vendor takes top_k; elsewhere it is dropped.
	TopK bool
	// UserField is where the end-user id goes: "safety_identifier"
	// (OpenAI, at most 64 bytes), "user", or "" (dropped: Mistral).
	UserField string
	// SeedField is "seed" or "random_seed" (Mistral).
	SeedField string
	// Reasoning is how reasoning control is sent.
	Reasoning ReasoningStyle
	// Efforts is the vendor's reasoning_effort vocabulary (OpenRouter:
	// reasoning.effort), weakest first; a canonical effort outside it is sent as the
	// nearest level it has ("max" -> "xhigh" on OpenAI, "xhigh" -> "high"
	// on Groq). "none" is sent only where listed. Nil: sent verbatim.
	Efforts []string
	// ThinkingField is the assistant-message field that replays earlier
	// thinking: "reasoning_content" (DeepSeek), "reasoning" (OpenRouter),
	// or "" (thinking is dropped).
	ThinkingField string
	// ReasoningOnToolCalls: assistant turns with tool calls must carry
	// ThinkingField, "" when there was no thinking (DeepSeek 400s
	// otherwise).
	ReasoningOnToolCalls bool
	// ShortToolIDs: tool call ids must match ^[a-zA-Z0-9]{9}$ (Mistral);
	// other ids are rewritten deterministically.
	ShortToolIDs bool
	// Documents: the vendor takes `file` content parts (PDF data); others
	// refuse binary documents with a 400 naming the field.
	Documents bool
	// LogprobsInt: logprobs is an integer (the number of top logprobs),
	// not a boolean (Together); for pass-through fix-ups.
	LogprobsInt bool
	// SamplingOnlyWithoutReasoning: temperature and top_p are refused
	// while the model reasons (OpenAI's reasoning models take them only
	// with reasoning_effort "none"), so they are dropped when a reasoning
	// effort other than "none" is sent.
	SamplingOnlyWithoutReasoning bool
	// SingleChoice: n must be 1 (Groq).
	SingleChoice bool
	// FinishReasons maps a vendor's own finish_reason values that break
	// the SDK helpers to OpenAI's (Together: "eos" -> "stop"); native
	// routes rewrite them (normalize.go).
	FinishReasons map[string]string
	// StreamToolCallIndex: the vendor streams tool_calls entries without
	// "index" and "type", and sends non-stream entries without "type"
	// (Mistral); native routes add them.
	StreamToolCallIndex bool
	// ArrayContent: the vendor may send message and delta content as a
	// list of text and thinking chunks (Mistral's reasoning models);
	// native routes turn it into a string (normalize.go).
	ArrayContent bool
	// Unsupported lists request fields the vendor rejects or ignores,
	// for pass-through fix-ups (Groq: logprobs, top_logprobs,
	// logit_bias, presence_penalty, metadata).
	Unsupported []string
}

// DialectFor returns the dialect of one of the seven C-shaped vendors
// (openai, together, fireworks, groq, mistral, deepseek, openrouter). It
// returns a fresh value on each call, so callers may change it.
func DialectFor(vendor string) (*Dialect, bool) {
	d := &Dialect{
		Vendor:         vendor,
		MaxTokensField: "max_tokens",
		StreamOptions:  true,
		UserField:      "user",
		SeedField:      "seed",
		Reasoning:      ReasoningEffort,
	}
	switch vendor {
	case "openai":
		d.Efforts = []string{"none", "minimal", "low", "medium", "high", "xhigh"}
		d.MaxTokensField = "max_completion_tokens"
		d.UserField = "safety_identifier"
		d.Documents = true
		d.SamplingOnlyWithoutReasoning = true
	case "together":
		d.Efforts = []string{"none", "low", "medium", "high"}
		d.TopK = true
		d.DeveloperToSystem = true
		d.FinishReasons = map[string]string{"eos": "stop"}
		d.LogprobsInt = true
	case "fireworks":
		d.Efforts = []string{"none", "low", "medium", "high"}
		d.TopK = true
	case "groq":
		d.Efforts = []string{"none", "low", "medium", "high"}
		d.MaxTokensField = "max_completion_tokens"
		d.SingleChoice = true
		d.Unsupported = []string{"logprobs", "top_logprobs", "logit_bias", "presence_penalty", "metadata"}
	case "mistral":
		d.Efforts = []string{"none", "minimal", "low", "medium", "high", "xhigh"}
		d.StreamOptions = false
		d.DeveloperToSystem = true
		d.StreamToolCallIndex = true
		d.ArrayContent = true
		d.FinishReasons = map[string]string{"model_length": "length"}
		d.UserField = ""
		d.SeedField = "random_seed"
		d.ShortToolIDs = true
	case "deepseek":
		d.DeveloperToSystem = true
		d.Reasoning = ReasoningDeepSeek
		d.ThinkingField = "reasoning_content"
		d.ReasoningOnToolCalls = true
	case "openrouter":
		d.StreamOptions = false
		d.DeveloperToSystem = true
		d.TopK = true
		d.Reasoning = ReasoningOpenRouter
		d.Efforts = []string{"none", "minimal", "low", "medium", "high", "xhigh"}
		d.ThinkingField = "reasoning"
		d.Documents = true
	default:
		return nil, false
	}
	return d, true
}
