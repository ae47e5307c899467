package e2e

import (
	"context"
	"net/http"
	"testing"

	"github.com/anthropics/anthropic-sdk-go"
	"github.com/anthropics/anthropic-sdk-go/option"
	gw "github.com/gwlabs/gateway"
	"github.com/gwlabs/gateway/server"
)

// The Anthropic SDK's countTokens works on every prefix: Anthropic and
// Google count with their own endpoints, the others are estimated; nothing
// is billed or recorded.
func TestCountTokensEveryVendor(t *testing.T) {
	e := newEnv(t)
	client := e.anthropicClient()
	ctx := context.Background()
	for vendor, model := range nativeModels {
		var resp *http.Response
		res, err := client.Messages.CountTokens(ctx, anthropic.MessageCountTokensParams{
			Model:    anthropic.Model(vendor + "/" + model),
			System:   anthropic.MessageCountTokensParamsSystemUnion{OfString: anthropic.String("You are terse.")},
			Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("How many tokens is this sentence, more or less?"))},
		}, option.WithResponseInto(&resp))
		if err != nil {
			t.Errorf("%s: %v", vendor, err)
			continue
		}
		if res.InputTokens < 10 || res.InputTokens > 200 {
			t.Errorf("%s: %d input tokens", vendor, res.InputTokens)
		}
		want := "estimate"
		if vendor == "anthropic" || vendor == "google" {
			want = "vendor"
		}
		if got := resp.Header.Get(server.HeaderTokenCount); got != want {
			t.Errorf("%s: counted by %q, want %q", vendor, got, want)
		}
	}
	recs, err := e.m.Store().Records(ctx, gwRecordFilter(e.acct))
	if err != nil || len(recs) != 0 {
		t.Errorf("count_tokens left %d records (%v); it is never billed", len(recs), err)
	}
	resp := e.post("/v1/messages/count_tokens", "", []byte(`{"model":"openai/x","messages":[]}`))
	readAll(t, resp.Body)
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("without a key: %d", resp.StatusCode)
	}
}

func gwRecordFilter(account string) gw.RecordFilter { return gw.RecordFilter{AccountID: account} }
