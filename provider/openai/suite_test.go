package openai

import (
	"testing"

	"github.com/gwlabs/gateway/internal/upstream"
	"github.com/gwlabs/gateway/provider/providertest"
)

// Every OpenAI-compatible vendor's configuration keeps the contract every
// provider keeps.
func TestProviderContract(t *testing.T) {
	fake := providertest.StartFake(t)
	for _, vendor := range []string{"openai", "together", "fireworks", "groq", "mistral", "deepseek", "openrouter"} {
		t.Run(vendor, func(t *testing.T) {
			cfg, ok := Defaults(vendor)
			if !ok {
				t.Fatalf("no defaults for %s", vendor)
			}
			cfg.BaseURL, cfg.APIKey, cfg.HTTP = fake.BaseURL(vendor), fake.APIKey(vendor), upstream.Config{MaxRetries: -1}
			p, err := New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			model := "suite-model"
			if vendor == "openrouter" {
				model = "suite/model" // OpenRouter's models are vendor/model
			}
			providertest.Run(t, providertest.Vendor{Fake: fake, Name: vendor, Provider: p, Model: model})
		})
	}
}
