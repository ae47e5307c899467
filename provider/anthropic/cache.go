package anthropic

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"

	"github.com/gwlabs/gateway/internal/rawjson"
)

// Prompt caching. Anthropic caches a prompt prefix only where a request
// marks it (cache_control on a tool, system block or message block, at
// most four), so a caller that sets no marker never gets a cache hit; a
// Chat Completions client cannot even express one. When the body carries
// no cache_control anywhere (the caller's markers, on either endpoint,
// are honoured as sent and none are added), addCacheMarkers adds
// explicit 5-minute breakpoints:
//
//   - on the last tool and the last system block, once tools + system pass
//     the model's minimum cacheable length, so that every conversation
//     with the same tools and system prompt shares that entry;
//   - on the last block of the last user message, once the whole prompt
//     passes it, writing the conversation so far, and on the last block of
//     the user message before it, which is where the previous turn wrote:
//     each turn reads what the one before it wrote, however many blocks
//     the turn added.
//
// That is four at most. Explicit markers were chosen over the top-level
// automatic cache_control because the automatic one sets a single
// breakpoint on the last block: the shared tools/system entry is lost and
// its 20-block look-back misses the previous turn in long tool loops.
// The optimizer's directive is appended after the marked system block, so
// it never changes the cached system prefix.

// marker is the cache_control the adapter adds.
const marker = `"cache_control":{"type":"ephemeral"}`

// minCacheTokens is the model's minimum cacheable prefix, from
// Anthropic's model notes (2026): below it nothing is cached (and nothing
// fails), so the adapter does not spend breakpoints there.
func minCacheTokens(model string) int {
	switch {
	case hasPrefix(model, "claude-opus-5", "claude-fable-5", "claude-mythos-5"):
		return 512
	case hasPrefix(model, "claude-opus-4-7"):
		return 2048
	case hasPrefix(model, "claude-opus-4-5", "claude-opus-4-6", "claude-haiku-4-5"):
		return 4096
	}
	return 1024
}

// estTokens is a conservative estimate of the tokens of n bytes of JSON
// (about four bytes a token in English text and code).
func estTokens(n int) int { return n / 4 }

// addCacheMarkers returns body with the adapter's breakpoints (see above),
// or body unchanged when the caller set markers or the prompt is too
// short. It never fails: a body it cannot read goes on unchanged (the
// vendor reports what is wrong with it).
func addCacheMarkers(body []byte, model string) []byte {
	if bytes.Contains(body, []byte(`"cache_control"`)) {
		return body
	}
	ms, err := rawjson.Members(body)
	if err != nil {
		return body
	}
	edits := cacheMarkerEdits(body, ms, model)
	slices.SortFunc(edits, func(a, b rawjson.Edit) int { return a.Start - b.Start })
	return rawjson.Splice(body, edits...)
}

// passThroughBody is addCacheMarkers(rawjson.Set(body, "model", mq),
// model) from one scan of body and one copy: the markers go inside the
// tools, system and messages values, which setting the model leaves as
// they are.
func passThroughBody(body []byte, mq []byte, model string) ([]byte, error) {
	ms, err := rawjson.Members(body)
	if err != nil {
		return nil, err
	}
	edits := rawjson.SetEdits(body, ms, rawjson.KV{Key: "model", Value: mq})
	if !hasCacheControl(body, ms, mq) {
		edits = append(edits, cacheMarkerEdits(body, ms, model)...)
		slices.SortFunc(edits, func(a, b rawjson.Edit) int { return a.Start - b.Start })
	}
	return rawjson.Splice(body, edits...), nil
}

// hasCacheControl reports whether body with its model values set to mq
// holds "cache_control" as written. A match lies wholly inside a model
// value or wholly outside (the bytes around a value are a colon, spaces,
// a comma or a brace, none of which the mark holds).
func hasCacheControl(body []byte, ms []rawjson.Member, mq []byte) bool {
	mark := []byte(`"cache_control"`)
	if bytes.Contains(mq, mark) {
		return true
	}
	at := 0
	for _, m := range ms {
		if m.Key == "model" {
			if bytes.Contains(body[at:m.ValStart], mark) {
				return true
			}
			at = m.ValEnd
		}
	}
	return bytes.Contains(body[at:], mark)
}

// cacheMarkerEdits are addCacheMarkers' edits of body (whose members are
// ms), unsorted.
func cacheMarkerEdits(body []byte, ms []rawjson.Member, model string) []rawjson.Edit {
	var tools, system, messages *rawjson.Member
	for i := range ms {
		switch ms[i].Key {
		case "tools":
			tools = &ms[i]
		case "system":
			system = &ms[i]
		case "messages":
			messages = &ms[i]
		}
	}
	size := func(m *rawjson.Member) int {
		if m == nil {
			return 0
		}
		return m.ValEnd - m.ValStart
	}
	min := minCacheTokens(model)
	var edits []rawjson.Edit
	if estTokens(size(tools)+size(system)) >= min {
		if e, ok := markLast(body, tools); ok {
			edits = append(edits, e)
		}
		if system != nil && body[system.ValStart] == '"' {
			if e, ok := markString(body, system.ValStart, system.ValEnd); ok {
				edits = append(edits, e)
			}
		} else if e, ok := markLast(body, system); ok {
			edits = append(edits, e)
		}
	}
	if messages != nil && estTokens(size(tools)+size(system)+size(messages)) >= min {
		edits = append(edits, markUserTurns(body, messages)...)
	}
	return edits
}

// markLast marks the last element (an object) of the array member m.
func markLast(body []byte, m *rawjson.Member) (rawjson.Edit, bool) {
	if m == nil || body[m.ValStart] != '[' {
		return rawjson.Edit{}, false
	}
	els, err := rawjson.Elements(body[m.ValStart:m.ValEnd])
	if err != nil || len(els) == 0 {
		return rawjson.Edit{}, false
	}
	last := els[len(els)-1]
	return markObject(body, m.ValStart+last.Start, m.ValStart+last.End)
}

// markObject adds the marker as the last member of the object
// body[start:end].
func markObject(body []byte, start, end int) (rawjson.Edit, bool) {
	obj := body[start:end]
	if obj[0] != '{' {
		return rawjson.Edit{}, false
	}
	ms, err := rawjson.Members(obj)
	if err != nil {
		return rawjson.Edit{}, false
	}
	if len(ms) > 0 && ms[0].Key == "type" {
		var typ string
		_ = json.Unmarshal(obj[ms[0].ValStart:ms[0].ValEnd], &typ)
		if strings.Contains(typ, "thinking") {
			return rawjson.Edit{}, false // thinking blocks take no marker
		}
	}
	at := start + bytes.LastIndexByte(obj, '}')
	text := "," + marker
	if len(ms) == 0 {
		text = marker
	}
	return rawjson.Edit{Start: at, End: at, Text: []byte(text)}, true
}

// markString turns the string body[start:end] (a system prompt or a
// message's content) into one marked text block holding the same string.
func markString(body []byte, start, end int) (rawjson.Edit, bool) {
	s := body[start:end]
	if string(s) == `""` {
		return rawjson.Edit{}, false // an empty text block is refused
	}
	t := append([]byte(`[{"type":"text","text":`), s...)
	t = append(t, ","+marker+"}]"...)
	return rawjson.Edit{Start: start, End: end, Text: t}, true
}

// markUserTurns marks the last block of the last two user messages.
func markUserTurns(body []byte, messages *rawjson.Member) []rawjson.Edit {
	arr := body[messages.ValStart:messages.ValEnd]
	els, err := rawjson.Elements(arr)
	if err != nil {
		return nil
	}
	var edits []rawjson.Edit
	for i := len(els) - 1; i >= 0 && len(edits) < 2; i-- {
		off := messages.ValStart + els[i].Start
		msg := body[off : messages.ValStart+els[i].End]
		ms, err := rawjson.Members(msg)
		if err != nil {
			return nil
		}
		var role string
		var content *rawjson.Member
		for j := range ms {
			switch ms[j].Key {
			case "role":
				_ = json.Unmarshal(msg[ms[j].ValStart:ms[j].ValEnd], &role)
			case "content":
				content = &ms[j]
			}
		}
		if role != "user" || content == nil {
			continue
		}
		abs := rawjson.Member{ValStart: off + content.ValStart, ValEnd: off + content.ValEnd}
		var e rawjson.Edit
		var ok bool
		if body[abs.ValStart] == '"' {
			e, ok = markString(body, abs.ValStart, abs.ValEnd)
		} else {
			e, ok = markLast(body, &abs)
		}
		if ok {
			edits = append(edits, e)
		}
	}
	return edits
}
