package openai

// Defaults returns the configuration of one of the seven OpenAI-shaped
// vendors with its public base URL (following each vendor's official SDK:
// the version segment included) and its header and usage quirks; the
// caller adds the key. The vendors differ in data only, so they share this
// package; their mapping quirks live in shape/openai's Dialect.
func Defaults(vendor string) (Config, bool) {
	c := Config{Vendor: vendor, StreamUsageOption: true}
	switch vendor {
	case "openai":
		c.BaseURL = "https://api.openai.com/v1"
		c.PromptCacheKey = true
		c.Responses = true
		// The caller's OpenAI-Organization and OpenAI-Project would bill
		// the gateway's key to an organization the caller names; they
		// are forwarded only when configured (OrgHeaders).
	case "together":
		c.BaseURL = "https://api.together.xyz/v1"
	case "fireworks":
		c.BaseURL = "https://api.fireworks.ai/inference/v1"
		// Pins a conversation to a replica for cache hits.
		c.ForwardHeaders = []string{"X-Session-Affinity"}
		c.PromptCacheKey, c.SessionAffinity = true, true
	case "groq":
		c.BaseURL = "https://api.groq.com/openai/v1"
	case "mistral":
		c.BaseURL = "https://api.mistral.ai/v1"
		// Mistral's schema has no stream_options; it sends usage on the
		// last chunk of every stream anyway.
		c.StreamUsageOption = false
		c.PromptCacheKey = true
	case "deepseek":
		c.BaseURL = "https://api.deepseek.com"
	case "openrouter":
		c.BaseURL = "https://openrouter.ai/api/v1"
		c.ForwardHeaders = []string{"HTTP-Referer", "X-Title"}
		// Usage accounting is always on; the option is a deprecated
		// no-op there.
		c.StreamUsageOption = false
	default:
		return Config{}, false
	}
	return c, true
}

// OrgHeaders returns OpenAI's organization and project headers, which a
// deployment may choose to forward from callers (the gateway's key must
// belong to them).
func OrgHeaders() []string { return []string{"OpenAI-Organization", "OpenAI-Project"} }
