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
	// One scan of the body: Get and Set would take two.
	obj, err := rawjson.NewObject(body)
	if err != nil {
		if _, jerr := json.Marshal(key); jerr != nil {
			return nil, jerr
		}
		return nil, &gw.Error{Code: gw.CodeInvalidRequest, Message: "request body is not a JSON object", Err: err}
	}
	e := obj.Edit()
	if err := p.SetCacheKeyEdit(e, key); err != nil {
		return nil, err
	}
	return e.Bytes(), nil
}

// SetCacheKeyEdit is SetCacheKey on an edit of the body.
func (p *Provider) SetCacheKeyEdit(e *rawjson.Editor, key string) error {
	if !p.cfg.PromptCacheKey {
		return nil
	}
	if v := e.Value("prompt_cache_key"); len(v) > 0 && string(v) != "null" {
		return nil
	}
	kq, err := json.Marshal(key)
	if err != nil {
		return err
	}
	e.Set("prompt_cache_key", kq)
	return nil
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
