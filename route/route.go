// Package route splits a request's model field into the vendor prefix and
// the vendor's own model id, and refuses names without a known prefix with
// a message that suggests the prefixed form.
//
// The form is <prefix>/<vendor model id>, split at the first slash; the
// vendor id may hold more slashes (fireworks/accounts/fireworks/models/x).
// The aggregator's prefix always takes the doubled form
// openrouter/<provider>/<model>.
package route

import (
	"strings"

	gw "github.com/gwlabs/gateway"
)

// Vendor prefixes, in the specification's slot order.
const (
	OpenAI     = "openai"
	Anthropic  = "anthropic"
	Google     = "google"
	Together   = "together"
	Fireworks  = "fireworks"
	Groq       = "groq"
	Mistral    = "mistral"
	DeepSeek   = "deepseek"
	OpenRouter = "openrouter"
)

// Vendors returns the nine prefixes in slot order.
func Vendors() []string {
	return []string{OpenAI, Anthropic, Google, Together, Fireworks, Groq, Mistral, DeepSeek, OpenRouter}
}

// Known reports whether p is a vendor prefix.
func Known(p string) bool {
	switch p {
	case OpenAI, Anthropic, Google, Together, Fireworks, Groq, Mistral, DeepSeek, OpenRouter:
		return true
	}
	return false
}

// Target is where a request goes.
type Target struct {
	Vendor string // the prefix
	Model  string // the vendor's model id, prefix stripped
}

// Parse splits model. It returns an invalid_request *gw.Error when the
// prefix is missing or unknown (suggesting a prefixed name), when the
// vendor id is empty, or when an openrouter name lacks its provider part.
// MaxModelBytes bounds a model name ("<vendor>/<model>"); longer names are
// refused without being echoed or forwarded.
const MaxModelBytes = 256

func Parse(model string) (Target, error) {
	if len(model) > MaxModelBytes {
		// Never echoed: a caller's 30 MB name would come back twice.
		return Target{}, gw.Errorf(gw.CodeInvalidRequest, "model is %d bytes long; a model name has at most %d", len(model), MaxModelBytes)
	}
	model = strings.TrimSpace(model)
	if model == "" {
		return Target{}, gw.Errorf(gw.CodeInvalidRequest, "model is required, in the form <vendor>/<model>, e.g. openai/gpt-6-sol (GET /v1/models lists the ids you can use)")
	}
	prefix, rest, ok := strings.Cut(model, "/")
	if !ok || !Known(prefix) {
		return Target{}, gw.Errorf(gw.CodeInvalidRequest, "model %q has no vendor prefix; %s", model, suggestion(model))
	}
	if rest == "" {
		return Target{}, gw.Errorf(gw.CodeInvalidRequest, "model %q names no model after the vendor prefix", model)
	}
	if prefix == OpenRouter {
		p, m, ok := strings.Cut(rest, "/")
		if !ok || p == "" || m == "" {
			return Target{}, gw.Errorf(gw.CodeInvalidRequest, "model %q: openrouter models take the form openrouter/<provider>/<model>, e.g. openrouter/meta-llama/llama-3.3-70b-instruct", model)
		}
	}
	return Target{Vendor: prefix, Model: rest}, nil
}

// suggestion proposes a prefixed name for an unprefixed (or wrongly
// prefixed) model name.
func suggestion(model string) string {
	lower := strings.ToLower(model)
	guess := func(name string) string {
		l := strings.ToLower(name)
		switch {
		case strings.HasPrefix(l, "gpt-"), strings.HasPrefix(l, "o1"), strings.HasPrefix(l, "o3"), strings.HasPrefix(l, "o4"), strings.HasPrefix(l, "chatgpt"):
			return OpenAI
		case strings.HasPrefix(l, "claude"):
			return Anthropic
		case strings.HasPrefix(l, "gemini"), strings.HasPrefix(l, "gemma"):
			return Google
		case strings.HasPrefix(l, "mistral"), strings.HasPrefix(l, "magistral"), strings.HasPrefix(l, "devstral"), strings.HasPrefix(l, "codestral"), strings.HasPrefix(l, "ministral"):
			return Mistral
		case strings.HasPrefix(l, "deepseek"):
			return DeepSeek
		case strings.HasPrefix(l, "accounts/fireworks"):
			return Fireworks
		case strings.HasPrefix(l, "llama-"), strings.HasPrefix(l, "qwen/"), strings.HasPrefix(l, "openai/gpt-oss"):
			return Groq
		}
		return ""
	}
	if p := guess(model); p != "" {
		// Only the prefix is proposed: whether p/model is a model the
		// gateway prices is not known here (the billing refusal names
		// priced ids).
		return "it looks like an id of " + p + ": \"" + p + "/<model>\" (GET /v1/models lists the ids you can use)"
	}
	// "meta-llama/Llama-3.3-70B" and other provider/model names: the
	// aggregator's doubled form takes them all.
	if strings.Contains(lower, "/") {
		return "prefix it with one of " + strings.Join(Vendors(), ", ") + " (e.g. \"openrouter/" + model + "\")"
	}
	return "prefix it with one of " + strings.Join(Vendors(), ", ") + " (e.g. \"openai/" + model + "\")"
}
