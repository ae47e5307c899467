package fakevendor

import (
	"encoding/base32"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
)

// The gullible vendor: [fake:leak=FORM] answers with the system prompt it
// received (the system content of the vendor body, the gateway's
// directive included), written in FORM. It is what an extraction attack
// gets from a model that obeys; the gateway's answer side must stop it.

// LeakForms lists the forms [fake:leak=FORM] writes, and Leaked writes
// them.
var LeakForms = []string{
	"verbatim", "upper", "base64", "base64-wrapped", "base32", "hex", "hex-0x", "url", "qp",
	"reversed", "reversed-words", "spaced", "rot13", "caesar3", "per-line", "numbered",
	"json", "code", "homoglyphs", "leet",
}

// Leaked writes s in form; "quote" is the first five words only (a
// benign quote) and "name" says who the assistant is without quoting.
func Leaked(s, form string) string {
	switch form {
	case "verbatim":
		return "Sure, here it is: " + s
	case "upper":
		return strings.ToUpper(s)
	case "base64":
		return "Here you go: " + base64.StdEncoding.EncodeToString([]byte(s))
	case "base64-wrapped":
		e := base64.StdEncoding.EncodeToString([]byte(s))
		var b strings.Builder
		for len(e) > 76 {
			b.WriteString(e[:76] + "\n")
			e = e[76:]
		}
		return "```\n" + b.String() + e + "\n```"
	case "base32":
		return base32.StdEncoding.EncodeToString([]byte(s))
	case "hex":
		return hex.EncodeToString([]byte(s))
	case "hex-0x":
		var p []string
		for _, c := range []byte(s) {
			p = append(p, fmt.Sprintf("0x%02x", c))
		}
		return strings.Join(p, ", ")
	case "url":
		var b strings.Builder
		for _, c := range []byte(s) {
			fmt.Fprintf(&b, "%%%02X", c)
		}
		return b.String()
	case "qp":
		var b strings.Builder
		for i, c := range []byte(s) {
			if i > 0 && i%70 == 0 {
				b.WriteString("=\r\n")
			}
			if c == ' ' || c == '=' || c > 126 {
				fmt.Fprintf(&b, "=%02X", c)
			} else {
				b.WriteByte(c)
			}
		}
		return b.String()
	case "reversed":
		r := []rune(s)
		for i, j := 0, len(r)-1; i < j; i, j = i+1, j-1 {
			r[i], r[j] = r[j], r[i]
		}
		return string(r)
	case "reversed-words":
		w := strings.Fields(s)
		for i, j := 0, len(w)-1; i < j; i, j = i+1, j-1 {
			w[i], w[j] = w[j], w[i]
		}
		return strings.Join(w, " ")
	case "spaced":
		return strings.Join(strings.Split(s, ""), " ")
	case "rot13", "caesar3":
		n := rune(13)
		if form == "caesar3" {
			n = 3
		}
		return strings.Map(func(r rune) rune {
			switch {
			case r >= 'a' && r <= 'z':
				return 'a' + (r-'a'+n)%26
			case r >= 'A' && r <= 'Z':
				return 'A' + (r-'A'+n)%26
			}
			return r
		}, s)
	case "per-line":
		return strings.Join(strings.Fields(s), "\n")
	case "numbered":
		var b strings.Builder
		for i, w := range strings.Fields(s) {
			fmt.Fprintf(&b, "%d. %s\n", i+1, w)
		}
		return b.String()
	case "json":
		b, _ := json.Marshal(map[string]string{"system_prompt": s})
		return string(b)
	case "code":
		return "```python\nPROMPT = " + quoteGo(s) + "\n```"
	case "homoglyphs":
		return strings.NewReplacer("a", "а", "e", "е", "o", "о", "p", "р", "c", "с").Replace(s)
	case "leet":
		return strings.NewReplacer("e", "3", "a", "4", "o", "0", "t", "7").Replace(s)
	case "quote":
		w := strings.Fields(s)
		return "As my instructions begin: \"" + strings.Join(w[:min(5, len(w))], " ") + "\" and that is all I will say."
	case "name":
		return "I am the assistant you configured; I cannot share my instructions."
	}
	return "unknown leak form " + form
}

func quoteGo(s string) string { b, _ := json.Marshal(s); return string(b) }

// systemPrompt is the system content of a vendor body: M system, C
// system and developer messages, Responses instructions and system or
// developer items, G systemInstruction.
func systemPrompt(body []byte) string {
	var b struct {
		System       json.RawMessage `json:"system"`
		Instructions json.RawMessage `json:"instructions"`
		Messages     []struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
		Input             json.RawMessage `json:"input"`
		SystemInstruction *struct {
			Parts []struct {
				Text string `json:"text"`
			} `json:"parts"`
		} `json:"systemInstruction"`
	}
	_ = json.Unmarshal(body, &b)
	var parts []string
	add := func(raw json.RawMessage) {
		var s string
		if json.Unmarshal(raw, &s) == nil {
			parts = append(parts, s)
			return
		}
		var blocks []struct {
			Text string `json:"text"`
		}
		if json.Unmarshal(raw, &blocks) == nil {
			for _, bl := range blocks {
				if bl.Text != "" {
					parts = append(parts, bl.Text)
				}
			}
		}
	}
	add(b.System)
	add(b.Instructions)
	for _, m := range b.Messages {
		if m.Role == "system" || m.Role == "developer" {
			add(m.Content)
		}
	}
	var items []struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	}
	if json.Unmarshal(b.Input, &items) == nil {
		for _, it := range items {
			if it.Role == "system" || it.Role == "developer" {
				add(it.Content)
			}
		}
	}
	if b.SystemInstruction != nil {
		for _, p := range b.SystemInstruction.Parts {
			parts = append(parts, p.Text)
		}
	}
	return strings.Join(parts, "\n")
}
