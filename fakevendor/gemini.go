package fakevendor

import (
	"encoding/json"
	"strconv"
	"strings"
)

// geminiUsage returns usageMetadata with candidatesTokenCount visible
// output (text and function calls) and thoughts counted apart.
func geminiUsage(r *reply, candidates, thoughts int) map[string]any {
	u := r.usage
	m := map[string]any{
		"promptTokenCount":     u.prompt,
		"candidatesTokenCount": candidates,
		"totalTokenCount":      u.prompt + candidates + thoughts,
		"promptTokensDetails":  []any{map[string]any{"modality": "TEXT", "tokenCount": u.prompt}},
	}
	if thoughts > 0 {
		m["thoughtsTokenCount"] = thoughts
	}
	if u.cacheRead > 0 {
		m["cachedContentTokenCount"] = u.cacheRead
		m["cacheTokensDetails"] = []any{map[string]any{"modality": "TEXT", "tokenCount": u.cacheRead}}
	}
	return m
}

func geminiCallPart(tc toolCall, sig string) map[string]any {
	return map[string]any{
		"functionCall":     map[string]any{"id": tc.id, "name": tc.name, "args": toolInput(tc.args)},
		"thoughtSignature": sig,
	}
}

// geminiSignature is the thoughtSignature on a function call part:
// standard base64 (46 characters and "=="), as Gemini's are and as
// Google's SDKs decode them.
func geminiSignature(c *call, i int) string {
	return idFrom(c.seed, "thought-signature"+string(rune('0'+i%10)), 46) + "=="
}

// textSignature returns the thoughtSignature the fake Gemini puts on the
// last part of a Gemini 3 answer without function calls; "" when it puts
// none. Gemini 3 does so for answers without function calls: on the
// final text part without streaming, and in streams on a final part of
// its own with empty text, after the answer's text.
func (c *call) textSignature(r *reply) string {
	if !strings.HasPrefix(c.model, "gemini-3") || len(r.calls) > 0 || r.text == "" {
		return ""
	}
	return idFrom(c.seed, "thought-signature-text", 46) + "=="
}

func geminiResponse(c *call, r *reply, parts []any, finish string, usage map[string]any) map[string]any {
	cand := map[string]any{"content": map[string]any{"role": "model", "parts": parts}, "index": 0}
	if finish != "" {
		cand["finishReason"] = finish
	}
	if n := c.dirs.searches; n > 0 {
		// Grounding with Google Search: the queries run, on the
		// candidate (every stream chunk repeats them).
		qs := make([]any, n)
		for i := range qs {
			qs[i] = "fake query " + strconv.Itoa(i+1)
		}
		cand["groundingMetadata"] = map[string]any{"webSearchQueries": qs, "groundingChunks": []any{}}
	}
	return map[string]any{"candidates": []any{cand}, "usageMetadata": usage, "modelVersion": c.model, "responseId": r.id}
}

// geminiBody returns a non-stream generateContent response.
func geminiBody(c *call, r *reply) []byte {
	parts := []any{}
	if r.reasoning != "" {
		parts = append(parts, map[string]any{"text": r.reasoning, "thought": true})
	}
	if r.text != "" {
		p := map[string]any{"text": r.text}
		if sig := c.textSignature(r); sig != "" {
			p["thoughtSignature"] = sig
		}
		parts = append(parts, p)
	}
	for i, tc := range r.calls {
		parts = append(parts, geminiCallPart(tc, geminiSignature(c, i)))
	}
	u := r.usage
	b, _ := json.Marshal(geminiResponse(c, r, parts, r.stop, geminiUsage(r, u.text+u.tool, u.reasoning)))
	return b
}

// geminiFrames returns the records of a streamGenerateContent?alt=sse
// stream: "data: " records separated by "\r\n\r\n", no terminator. The
// finish reason and final usage ride on the last record.
func geminiFrames(c *call, r *reply) []frame {
	type rec struct {
		parts    []any
		thoughts int // cumulative
		cands    int // cumulative
	}
	var recs []rec
	thoughts, cands, text := 0, 0, 0
	for _, p := range r.reasonPieces {
		thoughts += len(p)
		recs = append(recs, rec{parts: []any{map[string]any{"text": p, "thought": true}}, thoughts: Tokens(thoughts)})
	}
	for _, p := range r.textPieces {
		text += len(p)
		cands = Tokens(text)
		recs = append(recs, rec{parts: []any{map[string]any{"text": p}}, thoughts: Tokens(thoughts), cands: cands})
	}
	for i, tc := range r.calls {
		cands += Tokens(len(tc.name) + len(tc.args))
		recs = append(recs, rec{parts: []any{geminiCallPart(tc, geminiSignature(c, i))}, thoughts: Tokens(thoughts), cands: cands})
	}
	var fs []frame
	for _, x := range recs {
		fs = append(fs, dataFrame(frameContent, geminiResponse(c, r, x.parts, "", geminiUsage(r, x.cands, x.thoughts)), "\r\n\r\n"))
	}
	u := r.usage
	last := map[string]any{"text": ""}
	if sig := c.textSignature(r); sig != "" {
		last["thoughtSignature"] = sig
	}
	fs = append(fs, dataFrame(frameOther, geminiResponse(c, r, []any{last}, r.stop, geminiUsage(r, u.text+u.tool, u.reasoning)), "\r\n\r\n"))
	return fs
}
