package anthropic

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/gwlabs/gateway/internal/rawjson"
	"github.com/gwlabs/gateway/internal/upstream"
)

// CountTokens asks Anthropic's free count endpoint
// (/v1/messages/count_tokens) for the input tokens of a Messages body, for
// model. The optimizer uses it to count its directive once per model.
func (p *Provider) CountTokens(ctx context.Context, model string, body []byte) (int64, error) {
	if err := p.Unavailable(); err != nil {
		return 0, err
	}
	mq, _ := json.Marshal(model)
	body, err := rawjson.Set(body, "model", mq)
	if err != nil {
		return 0, fmt.Errorf("count tokens: %w", err)
	}
	h := make(http.Header, 4)
	h.Set("Content-Type", "application/json")
	h.Set("Anthropic-Version", DefaultVersion)
	url := strings.TrimSuffix(p.url, "/v1/messages") + "/v1/messages/count_tokens"
	resp, err := p.client.Do(ctx, &upstream.Request{Method: http.MethodPost, URL: url, Header: h, Body: body, Auth: apiKey})
	if err != nil {
		return 0, fmt.Errorf("count tokens: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return 0, fmt.Errorf("count tokens: %w", statusError(resp.StatusCode, resp.Header, upstream.ReadErrorBody(resp.Body)))
	}
	var out struct {
		InputTokens *int64 `json:"input_tokens"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || out.InputTokens == nil {
		return 0, fmt.Errorf("count tokens: no input_tokens in the answer")
	}
	return *out.InputTokens, nil
}
