package e2e

import (
	"context"
	"strings"
	"testing"

	"google.golang.org/genai"

	"github.com/gwlabs/gateway/internal/app"
	"github.com/gwlabs/gateway/route"
)

// genaiClient is Google's Go client pointed at the gateway, with the
// gateway key as its API key (sent as x-goog-api-key).
func (e *env) genaiClient(t *testing.T) *genai.Client {
	t.Helper()
	c, err := genai.NewClient(context.Background(), &genai.ClientConfig{
		APIKey:      e.key,
		Backend:     genai.BackendGeminiAPI,
		HTTPOptions: genai.HTTPOptions{BaseURL: e.url + "/"},
	})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestGenaiGoClient runs google.golang.org/genai on all nine prefixes:
// GenerateContent, GenerateContentStream, a function-call round trip and
// CountTokens.
func TestGenaiGoClient(t *testing.T) {
	e := newEnv(t, func(c *app.Config) { c.RPM, c.TPM = 0, 0 })
	c := e.genaiClient(t)
	ctx := context.Background()
	weather := &genai.Tool{FunctionDeclarations: []*genai.FunctionDeclaration{{
		Name:        "get_weather",
		Description: "Weather in a city",
		Parameters: &genai.Schema{Type: genai.TypeObject, Properties: map[string]*genai.Schema{
			"city": {Type: genai.TypeString, Description: "The city"},
		}, Required: []string{"city"}},
	}}}
	for _, v := range route.Vendors() {
		t.Run(v, func(t *testing.T) {
			model := v + "/" + nativeModels[v]
			r, err := c.Models.GenerateContent(ctx, model, genai.Text("Say hi"), &genai.GenerateContentConfig{MaxOutputTokens: 256})
			if err != nil {
				t.Fatalf("GenerateContent: %v", err)
			}
			if !strings.HasPrefix(r.Text(), "Hello from ") || r.Candidates[0].FinishReason != genai.FinishReasonStop || r.UsageMetadata == nil || r.UsageMetadata.TotalTokenCount <= 0 {
				t.Errorf("GenerateContent: %q %s %+v", r.Text(), r.Candidates[0].FinishReason, r.UsageMetadata)
			}

			var text strings.Builder
			var finish genai.FinishReason
			var usage *genai.GenerateContentResponseUsageMetadata
			for chunk, err := range c.Models.GenerateContentStream(ctx, model, genai.Text("Think, then say hi. [fake:reasoning]"),
				&genai.GenerateContentConfig{ThinkingConfig: &genai.ThinkingConfig{IncludeThoughts: true}}) {
				if err != nil {
					t.Fatalf("GenerateContentStream: %v", err)
				}
				text.WriteString(chunk.Text())
				if len(chunk.Candidates) > 0 && chunk.Candidates[0].FinishReason != "" {
					finish = chunk.Candidates[0].FinishReason
				}
				if chunk.UsageMetadata != nil {
					usage = chunk.UsageMetadata
				}
			}
			if !strings.HasPrefix(text.String(), "Hello from ") || finish != genai.FinishReasonStop || usage == nil || usage.CandidatesTokenCount <= 0 {
				t.Errorf("GenerateContentStream: %q %s %+v", text.String(), finish, usage)
			}

			cfg := &genai.GenerateContentConfig{Tools: []*genai.Tool{weather}}
			history := []*genai.Content{genai.NewContentFromText("What is the weather? [fake:tool]", genai.RoleUser)}
			first, err := c.Models.GenerateContent(ctx, model, history, cfg)
			if err != nil {
				t.Fatalf("function call: %v", err)
			}
			calls := first.FunctionCalls()
			if len(calls) != 1 || calls[0].Name != "get_weather" || calls[0].Args["city"] != "x" {
				t.Fatalf("function calls %+v", calls)
			}
			history = append(history, first.Candidates[0].Content, genai.NewContentFromParts([]*genai.Part{{FunctionResponse: &genai.FunctionResponse{
				ID: calls[0].ID, Name: "get_weather", Response: map[string]any{"output": "sunny-in-x"},
			}}}, genai.RoleUser))
			second, err := c.Models.GenerateContent(ctx, model, history, cfg)
			if err != nil {
				t.Fatalf("function response: %v", err)
			}
			if got := second.Text(); got != "Tool said: sunny-in-x" {
				t.Errorf("after the function response: %q", got)
			}

			n, err := c.Models.CountTokens(ctx, model, genai.Text("Count these words, please."), nil)
			if err != nil || n.TotalTokens <= 0 {
				t.Errorf("CountTokens: %+v %v", n, err)
			}
		})
	}
}
