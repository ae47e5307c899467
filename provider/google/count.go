package google

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"

	"github.com/gwlabs/gateway/internal/rawjson"
	"github.com/gwlabs/gateway/internal/upstream"
)

// CountTokens asks Gemini's free countTokens method for the prompt tokens
// of a generateContent body, for model: the body goes as
// generateContentRequest (which carries systemInstruction). The optimizer
// uses it to count its directive once per model.
func (p *Provider) CountTokens(ctx context.Context, model string, body []byte) (int64, error) {
	if err := p.Unavailable(); err != nil {
		return 0, err
	}
	mq, _ := json.Marshal("models/" + model)
	inner, err := rawjson.Set(body, "model", mq)
	if err != nil {
		return 0, fmt.Errorf("count tokens: %w", err)
	}
	req := append(append([]byte(`{"generateContentRequest":`), inner...), '}')
	h := make(http.Header, 3)
	h.Set("Content-Type", "application/json")
	resp, err := p.client.Do(ctx, &upstream.Request{Method: http.MethodPost, URL: p.base + url.PathEscape(model) + ":countTokens", Header: h, Body: req, Auth: googKey})
	if err != nil {
		return 0, fmt.Errorf("count tokens: %w", hideURL(err))
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return 0, fmt.Errorf("count tokens: %w", p.statusError(resp.StatusCode, resp.Header, upstream.ReadErrorBody(resp.Body)))
	}
	var out struct {
		TotalTokens *int64 `json:"totalTokens"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || out.TotalTokens == nil {
		return 0, fmt.Errorf("count tokens: no totalTokens in the answer")
	}
	return *out.TotalTokens, nil
}
