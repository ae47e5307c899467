package fakevendor

import (
	"bytes"
	"encoding/json"
)

// The reply model, off unless EnableReplyModel is called: it lets tools
// that measure the optimization layer (gateway optimize eval) run against
// the fakes. With it on, when no directive or tool result decides the
// reply:
//
//   - a request asking for JSON output (Chat Completions response_format
//     json_object or json_schema, Messages output_config.format, Gemini
//     generationConfig.responseMimeType application/json) gets a JSON
//     object: a sample of the schema when there is one (as for tool
//     arguments), else {"answer": the default text};
//   - otherwise a request whose body contains the directive text given to
//     EnableReplyModel (the gateway's optimizer directive) gets
//     ConciseText instead of DefaultText, modelling a shorter answer. The
//     real saving is what the evaluation measures on a real vendor; this
//     only makes the difference visible.

// EnableReplyModel turns the reply model on; directive is the text whose
// presence in a request models a shorter answer ("" models none).
func (s *Server) EnableReplyModel(directive string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.replies, s.directive = true, directive
}

func (s *Server) replyModel() (bool, string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.replies, s.directive
}

// ConciseText is the reply to a request carrying the optimizer's
// directive under the reply model.
func ConciseText(vendor, model string) string { return "Hello from " + vendor + "." }

// modelReply sets c.reply when the reply model decides the text.
func modelReply(c *call, directive string) {
	if c.dirs.hasText || c.dirs.leak != "" || c.toolResults != nil || c.dirs.tools > 0 {
		return
	}
	if schema, ok := jsonFormat(c); ok {
		if len(schema) > 0 {
			c.reply = argsFor(schema)
		} else {
			b, _ := json.Marshal(map[string]string{"answer": DefaultText(c.vendor, c.model)})
			c.reply = string(b)
		}
		c.hasReply = true
		return
	}
	if directive != "" && bytes.Contains(c.body, []byte(directive)) {
		c.reply, c.hasReply = ConciseText(c.vendor, c.model), true
	}
}

// jsonFormat reports whether the request asks for JSON output, and its
// schema when it gives one.
func jsonFormat(c *call) (json.RawMessage, bool) {
	var req struct {
		ResponseFormat *struct {
			Type       string `json:"type"`
			JSONSchema *struct {
				Schema json.RawMessage `json:"schema"`
			} `json:"json_schema"`
		} `json:"response_format"`
		OutputConfig *struct {
			Format *struct {
				Schema json.RawMessage `json:"schema"`
			} `json:"format"`
		} `json:"output_config"`
		Text *struct {
			Format *struct {
				Type   string          `json:"type"`
				Schema json.RawMessage `json:"schema"`
			} `json:"format"`
		} `json:"text"`
		GenerationConfig *struct {
			ResponseMimeType   string          `json:"responseMimeType"`
			ResponseSchema     json.RawMessage `json:"responseSchema"`
			ResponseJSONSchema json.RawMessage `json:"responseJsonSchema"`
		} `json:"generationConfig"`
	}
	if json.Unmarshal(c.body, &req) != nil {
		return nil, false
	}
	switch {
	case req.ResponseFormat != nil && (req.ResponseFormat.Type == "json_object" || req.ResponseFormat.Type == "json_schema"):
		if req.ResponseFormat.JSONSchema != nil {
			return req.ResponseFormat.JSONSchema.Schema, true
		}
		return nil, true
	case req.Text != nil && req.Text.Format != nil && (req.Text.Format.Type == "json_schema" || req.Text.Format.Type == "json_object"):
		return req.Text.Format.Schema, true
	case req.OutputConfig != nil && req.OutputConfig.Format != nil:
		return req.OutputConfig.Format.Schema, true
	case req.GenerationConfig != nil && req.GenerationConfig.ResponseMimeType == "application/json":
		if len(req.GenerationConfig.ResponseJSONSchema) > 0 {
			return req.GenerationConfig.ResponseJSONSchema, true
		}
		return req.GenerationConfig.ResponseSchema, true
	}
	return nil, false
}
