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
	"fmt"
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
		return Target{}, &gw.Error{Code: gw.CodeInvalidRequest, Err: &PrefixError{Model: model},
			Message: fmt.Sprintf("model %q has no vendor prefix; %s", model, suggestion(model))}
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

// PrefixError marks the refusal of a model name without a known vendor
// prefix (it is the Err of the *gw.Error Parse returns), so that a
// caller that knows the listed ids can name the likeliest ones instead
// (server, from the catalog).
type PrefixError struct {
	Model string // the name as given, trimmed
}

func (e *PrefixError) Error() string {
	return fmt.Sprintf("model %q has no known vendor prefix", e.Model)
}

// Unprefixed returns the names a model without a known vendor prefix may
// stand for, without a prefix: the name itself, and after an unknown
// prefix ("azure/gpt-4.1") the rest ("gpt-4.1").
func Unprefixed(model string) []string {
	out := []string{model}
	if p, rest, ok := strings.Cut(model, "/"); ok && p != "" && rest != "" && !Known(p) {
		out = append(out, rest)
	}
	return out
}

// Guess returns the vendor prefix a name without one most likely takes
// ("gpt-4.1-mini": openai), "" when nothing in the name says.
func Guess(name string) string {
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

// suggestion proposes a prefixed name for an unprefixed (or wrongly
// prefixed) model name: the full id, which a client can show as is.
// Whether the gateway prices it is not known here; the server names
// listed ids instead when it finds some (PrefixError).
func suggestion(model string) string {
	for i, name := range Unprefixed(model) {
		// After an unknown prefix only a vendor's own family counts:
		// "meta-llama/llama-3" is an aggregator's provider/model.
		if p := Guess(name); p != "" && (i == 0 || p != Groq) {
			return fmt.Sprintf("it takes its vendor's prefix, e.g. %q (GET /v1/models lists the ids you can use)", p+"/"+name)
		}
	}
	// "meta-llama/Llama-3.3-70B" and other provider/model names: the
	// aggregator's doubled form takes them all.
	if strings.Contains(model, "/") {
		return "prefix it with one of " + strings.Join(Vendors(), ", ") + " (e.g. \"openrouter/" + model + "\")"
	}
	return "prefix it with one of " + strings.Join(Vendors(), ", ") + " (e.g. \"openai/" + model + "\")"
}
