package anthropic

import (
	"bytes"
	"encoding/json"
	"fmt"
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
	obj, err := rawjson.NewObject(body)
	if err != nil {
		return body
	}
	e := obj.Edit()
	addMarkers(e, model)
	return e.Bytes()
}

// passThroughBody is addCacheMarkers(rawjson.Set(body, "model", mq),
// model) from one scan of body and one copy (passThroughEdit).
func passThroughBody(body []byte, mq []byte, model string) ([]byte, error) {
	obj, err := rawjson.NewObject(body)
	if err != nil {
		return nil, err
	}
	e := obj.Edit()
	passThroughEdit(e, mq, model)
	return e.Bytes(), nil
}

// PassThroughEdit is PassThrough on an edit of the caller's body (read
// once, written once by the caller).
func (p *Provider) PassThroughEdit(e *rawjson.Editor, model string, stream bool) (bool, error) {
	mq, err := json.Marshal(model)
	if err != nil {
		return false, fmt.Errorf("encode model: %w", err)
	}
	passThroughEdit(e, mq, model)
	return false, nil
}

// passThroughEdit sets the model to mq (a JSON string) and then, unless
// the body holds "cache_control", adds the adapter's breakpoints: they go
// inside the tools, system and messages values, which setting the model
// leaves as they are.
func passThroughEdit(e *rawjson.Editor, mq []byte, model string) {
	e.Set("model", mq)
	if !e.Contains([]byte(`"cache_control"`)) {
		addMarkers(e, model)
	}
}

// addMarkers makes the adapter's breakpoints in the values of the last
// tools, system and messages members.
func addMarkers(e *rawjson.Editor, model string) {
	te, se, me := markerEdits(e.Value("tools"), e.Value("system"), e.Value("messages"), model, e.Elements)
	e.EditValue("tools", te...)
	e.EditValue("system", se...)
	e.EditValue("messages", me...)
}

// markerEdits are addCacheMarkers' edits of the values tools, system and
// messages (nil: the body has none), each sorted and with offsets into
// its own value. elements gives the messages' elements (rawjson.Elements,
// or the Editor's, which knows them when the parse found them).
func markerEdits(tools, system, messages []byte, model string, elements func([]byte) ([]rawjson.Span, error)) (te, se, me []rawjson.Edit) {
	size := len(tools) + len(system)
	min := minCacheTokens(model)
	if estTokens(size) >= min {
		if e, ok := markLast(tools); ok {
			te = append(te, e)
		}
		if system != nil && system[0] == '"' {
			if e, ok := markString(system, 0, len(system)); ok {
				se = append(se, e)
			}
		} else if e, ok := markLast(system); ok {
			se = append(se, e)
		}
	}
	if messages != nil && estTokens(size+len(messages)) >= min {
		me = markUserTurns(messages, elements)
		slices.SortFunc(me, func(a, b rawjson.Edit) int { return a.Start - b.Start })
	}
	return te, se, me
}

// markLast marks the last element (an object) of the array v.
func markLast(v []byte) (rawjson.Edit, bool) {
	if len(v) == 0 || v[0] != '[' {
		return rawjson.Edit{}, false
	}
	els, err := rawjson.Elements(v)
	if err != nil || len(els) == 0 {
		return rawjson.Edit{}, false
	}
	last := els[len(els)-1]
	return markObject(v, last.Start, last.End)
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

// markUserTurns marks the last block of the last two user messages of
// the messages array arr (offsets into arr), whose elements elements
// gives.
func markUserTurns(arr []byte, elements func([]byte) ([]rawjson.Span, error)) []rawjson.Edit {
	els, err := elements(arr)
	if err != nil {
		return nil
	}
	var edits []rawjson.Edit
	for i := len(els) - 1; i >= 0 && len(edits) < 2; i-- {
		off := els[i].Start
		msg := arr[off:els[i].End]
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
		cs, ce := off+content.ValStart, off+content.ValEnd
		var e rawjson.Edit
		var ok bool
		if arr[cs] == '"' {
			e, ok = markString(arr, cs, ce)
		} else if e, ok = markLast(arr[cs:ce]); ok {
			e.Start += cs
			e.End += cs
		}
		if ok {
			edits = append(edits, e)
		}
	}
	return edits
}
