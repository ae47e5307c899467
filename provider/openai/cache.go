package openai

import (
	"encoding/json"
	"net/http"

	gw "github.com/gwlabs/gateway"
	"github.com/gwlabs/gateway/internal/rawjson"
)

// SetCacheKey returns body with prompt_cache_key set to key, when the
// vendor takes one (Config.PromptCacheKey) and the caller set none; the
// caller's own key is never replaced. The member goes last, after the
// prompt, so the bytes before it stay as they were.
func (p *Provider) SetCacheKey(body []byte, key string) ([]byte, error) {
	if !p.cfg.PromptCacheKey {
		return body, nil
	}
	if v := rawjson.Get(body, "prompt_cache_key"); len(v) > 0 && string(v) != "null" {
		return body, nil
	}
	kq, err := json.Marshal(key)
	if err != nil {
		return nil, err
	}
	out, err := rawjson.Set(body, "prompt_cache_key", kq)
	if err != nil {
		return nil, &gw.Error{Code: gw.CodeInvalidRequest, Message: "request body is not a JSON object", Err: err}
	}
	return out, nil
}

// setAffinity sets x-session-affinity from the body's prompt_cache_key
// when the vendor takes the header and the caller sent none, so that a
// conversation stays on the replica holding its cache.
func (p *Provider) setAffinity(h http.Header, body []byte) {
	if !p.cfg.SessionAffinity || h.Get("X-Session-Affinity") != "" {
		return
	}
	var key string
	if v := rawjson.Get(body, "prompt_cache_key"); json.Unmarshal(v, &key) == nil && key != "" {
		h.Set("X-Session-Affinity", key)
	}
}
