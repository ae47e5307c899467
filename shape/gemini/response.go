package gemini

import (
	"encoding/json"

	gw "github.com/gwlabs/gateway"
)

// Meta is what the server knows about a mapped answer that the vendor's
// does not say: ModelVersion is the model as the caller named it (its
// prefix and all), ResponseID the answer's id, IncludeThoughts the
// caller's thinkingConfig.includeThoughts (thought parts are shown only
// then, as Gemini does).
type Meta struct {
	ModelVersion    string
	ResponseID      string
	IncludeThoughts bool
}

// FinishReason maps a canonical stop reason to Gemini's: STOP for a
// finished turn (tool calls included: Gemini says STOP there too),
// MAX_TOKENS for a cut by the output cap or the context window, SAFETY
// for a refusal, OTHER for anything else.
func FinishReason(s gw.StopReason) string {
	switch s {
	case gw.StopEndTurn, gw.StopToolUse, gw.StopSequence, gw.StopPauseTurn, "":
		return "STOP"
	case gw.StopMaxTokens, gw.StopContextLimit:
		return "MAX_TOKENS"
	case gw.StopRefusal:
		return "SAFETY"
	}
	return "OTHER"
}

// EncodeUsage writes canonical usage as usageMetadata: promptTokenCount
// is every prompt token (uncached, cache reads and writes),
// cachedContentTokenCount the cache reads, candidatesTokenCount the
// output less the reasoning, thoughtsTokenCount the reasoning.
func EncodeUsage(u gw.Usage) *UsageMetadata {
	c := func(n int64) *gw.Count {
		if n <= 0 {
			return nil
		}
		return &gw.Count{N: n, Valid: true}
	}
	reasoning := min(u.ReasoningTokens, u.OutputTokens)
	prompt := u.PromptTokens()
	return &UsageMetadata{
		PromptTokenCount:        &gw.Count{N: prompt, Valid: true},
		CachedContentTokenCount: c(u.CacheReadTokens),
		CandidatesTokenCount:    &gw.Count{N: u.OutputTokens - reasoning, Valid: true},
		ThoughtsTokenCount:      c(reasoning),
		TotalTokenCount:         &gw.Count{N: prompt + u.OutputTokens, Valid: true},
	}
}

// Usage reads usageMetadata (see UsageMetadata) into the canonical
// buckets: input = promptTokenCount - cachedContentTokenCount +
// toolUsePromptTokenCount, cache read = cachedContentTokenCount, output =
// candidatesTokenCount + thoughtsTokenCount, reasoning =
// thoughtsTokenCount. A count that is not a non-negative integer, or a
// report without a prompt and a candidates count (totalTokenCount alone
// says nothing of the classes it bills: estimated, as on every route),
// is Malformed.
func (m *UsageMetadata) Usage() gw.Usage {
	counts := []*gw.Count{m.PromptTokenCount, m.CachedContentTokenCount, m.CandidatesTokenCount, m.ThoughtsTokenCount, m.ToolUsePromptTokenCount, m.TotalTokenCount}
	for _, c := range counts {
		if c != nil && !c.Valid {
			return gw.Usage{Malformed: true}
		}
	}
	if m.PromptTokenCount == nil && m.CandidatesTokenCount == nil {
		return gw.Usage{Malformed: true}
	}
	nn := func(c *gw.Count) int64 {
		if c == nil {
			return 0
		}
		return c.N
	}
	cached := nn(m.CachedContentTokenCount)
	thoughts := nn(m.ThoughtsTokenCount)
	clamped := cached > nn(m.PromptTokenCount)
	cached = min(cached, nn(m.PromptTokenCount))
	return gw.Usage{
		Clamped:         clamped,
		InputTokens:     max(nn(m.PromptTokenCount)-cached, 0) + nn(m.ToolUsePromptTokenCount),
		CacheReadTokens: cached,
		OutputTokens:    nn(m.CandidatesTokenCount) + thoughts,
		ReasoningTokens: thoughts,
		Reported:        true,
	}
}

// EncodeResponse writes a canonical answer as a GenerateContentResponse
// with one candidate: text parts, thought parts (only with
// meta.IncludeThoughts), functionCall parts with their ids, and images as
// inlineData; finishReason, usageMetadata, modelVersion and responseId.
// A refusal with no content is also promptFeedback-free: Gemini's SAFETY
// candidate. StopError is an upstream_error.
func EncodeResponse(r *gw.Response, meta Meta) ([]byte, error) {
	if r.StopReason == gw.StopError {
		return nil, &gw.Error{Code: gw.CodeUpstream, Message: "the vendor ended the response with an error"}
	}
	parts := make([]Part, 0, len(r.Content))
	for i := range r.Content {
		if p, ok := partOf(&r.Content[i], meta.IncludeThoughts); ok {
			parts = append(parts, p)
		}
	}
	out := Response{
		Candidates:    []Candidate{{Content: &Content{Role: "model", Parts: parts}, FinishReason: FinishReason(r.StopReason)}},
		UsageMetadata: EncodeUsage(r.Usage),
		ModelVersion:  meta.ModelVersion,
		ResponseID:    meta.ResponseID,
	}
	return json.Marshal(&out)
}

// partOf maps one canonical part; ok is false for a part the caller is
// not shown (thinking without includeThoughts, redacted thinking, a
// signature carrier).
func partOf(p *gw.Part, thoughts bool) (Part, bool) {
	switch p.Type {
	case gw.PartText:
		t := p.Text
		return Part{Text: &t}, true
	case gw.PartThinking:
		if !thoughts || p.Text == "" {
			return Part{}, false
		}
		t := p.Text
		return Part{Text: &t, Thought: true}, true
	case gw.PartToolCall:
		args := p.Arguments
		if len(args) == 0 {
			args = json.RawMessage("{}")
		}
		return Part{FunctionCall: &FunctionCall{ID: p.ToolCallID, Name: p.ToolName, Args: args}}, true
	case gw.PartImage:
		if p.Data != "" {
			return Part{InlineData: &Blob{MimeType: p.MediaType, Data: p.Data}}, true
		}
		if p.URL != "" {
			return Part{FileData: &FileData{MimeType: p.MediaType, FileURI: p.URL}}, true
		}
	}
	return Part{}, false
}
