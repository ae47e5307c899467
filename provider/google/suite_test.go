package google

import (
	"testing"

	"github.com/gwlabs/gateway/internal/upstream"
	"github.com/gwlabs/gateway/provider/providertest"
)

// The Gemini adapter keeps the contract every provider keeps.
func TestProviderContract(t *testing.T) {
	fake := providertest.StartFake(t)
	p, err := New(Config{BaseURL: fake.BaseURL("google"), APIKey: fake.APIKey("google"), HTTP: upstream.Config{MaxRetries: -1}})
	if err != nil {
		t.Fatal(err)
	}
	providertest.Run(t, providertest.Vendor{Fake: fake, Name: "google", Provider: p})
}
