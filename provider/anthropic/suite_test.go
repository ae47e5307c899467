package anthropic

import (
	"testing"

	"github.com/gwlabs/gateway/internal/upstream"
	"github.com/gwlabs/gateway/provider/providertest"
)

// The Anthropic adapter keeps the contract every provider keeps.
func TestProviderContract(t *testing.T) {
	fake := providertest.StartFake(t)
	p, err := New(Config{BaseURL: fake.BaseURL("anthropic"), APIKey: fake.APIKey("anthropic"), HTTP: upstream.Config{MaxRetries: -1}})
	if err != nil {
		t.Fatal(err)
	}
	providertest.Run(t, providertest.Vendor{Fake: fake, Name: "anthropic", Provider: p})
}
