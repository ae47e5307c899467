package fakevendor

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// What the fake makes up: tool arguments from a schema, word splits for
// streaming, and ids derived from the request.

// argsFor builds tool arguments from a JSON schema: required properties
// only, strings "x", numbers 1, booleans true, arrays [], objects
// recursively, enums their first value.
func argsFor(schema json.RawMessage) string {
	var s map[string]any
	_ = json.Unmarshal(schema, &s)
	v := sample(s)
	if _, ok := v.(map[string]any); !ok {
		v = map[string]any{}
	}
	b, _ := json.Marshal(v)
	return string(b)
}

func sample(s map[string]any) any {
	if s == nil {
		return map[string]any{}
	}
	if e, ok := s["enum"].([]any); ok && len(e) > 0 {
		return e[0]
	}
	for _, k := range []string{"anyOf", "oneOf", "allOf"} {
		if alts, ok := s[k].([]any); ok && len(alts) > 0 {
			if m, ok := alts[0].(map[string]any); ok {
				return sample(m)
			}
		}
	}
	typ := ""
	switch t := s["type"].(type) {
	case string:
		typ = t
	case []any:
		for _, x := range t {
			if x, ok := x.(string); ok && !strings.EqualFold(x, "null") {
				typ = x
				break
			}
		}
	}
	switch strings.ToLower(typ) {
	case "string":
		return "x"
	case "integer", "number":
		return 1
	case "boolean":
		return true
	case "array":
		return []any{}
	case "null":
		return nil
	case "object", "":
		obj := map[string]any{}
		props, _ := s["properties"].(map[string]any)
		req, _ := s["required"].([]any)
		for _, r := range req {
			name, ok := r.(string)
			if !ok {
				continue
			}
			p, _ := props[name].(map[string]any)
			if p == nil {
				obj[name] = "x"
				continue
			}
			obj[name] = sample(p)
		}
		return obj
	}
	return "x"
}

// splitWords splits s before every space that follows a non-space, so
// "Hello big world" becomes "Hello", " big", " world".
func splitWords(s string) []string {
	var out []string
	start := 0
	for i := 1; i < len(s); i++ {
		if s[i] == ' ' && s[i-1] != ' ' {
			out = append(out, s[start:i])
			start = i
		}
	}
	if start < len(s) {
		out = append(out, s[start:])
	}
	return out
}

// splitN splits s into n pieces of nearly equal rune counts (fewer when s
// has fewer runes; none when s is empty).
func splitN(s string, n int) []string {
	rs := []rune(s)
	if len(rs) == 0 {
		return nil
	}
	n = min(n, len(rs))
	out := make([]string, 0, n)
	for i := range n {
		out = append(out, string(rs[i*len(rs)/n:(i+1)*len(rs)/n]))
	}
	return out
}

const base62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

// idFrom derives n base62 characters from seed and salt.
func idFrom(seed [32]byte, salt string, n int) string {
	h := sha256.Sum256(append(seed[:], salt...))
	b := make([]byte, n)
	for i := range n {
		if i > 0 && i%32 == 0 {
			h = sha256.Sum256(h[:])
		}
		b[i] = base62[int(h[i%32])%62]
	}
	return string(b)
}

func hexFrom(seed [32]byte, salt string, n int) string {
	h := sha256.Sum256(append(seed[:], salt...))
	return fmt.Sprintf("%x", h[:])[:n]
}

func uuidFrom(seed [32]byte, salt string) string {
	x := hexFrom(seed, salt, 32)
	return x[0:8] + "-" + x[8:12] + "-4" + x[13:16] + "-a" + x[17:20] + "-" + x[20:32]
}

// toolID returns the i-th tool call id in the vendor's style.
func toolID(c *call, i int) string {
	salt := "tool" + strconv.Itoa(i)
	switch c.vendor {
	case "anthropic":
		return "toolu_01" + idFrom(c.seed, salt, 22)
	case "mistral":
		return idFrom(c.seed, salt, 9)
	case "google":
		return strings.ToLower(idFrom(c.seed, salt, 8))
	case "deepseek":
		return "call_0" + strconv.Itoa(i) + "_" + idFrom(c.seed, salt, 24)
	}
	return "call_" + idFrom(c.seed, salt, 24)
}

// responseID returns the response id in the vendor's style.
func responseID(c *call) string {
	switch c.vendor {
	case "anthropic":
		return "msg_01" + idFrom(c.seed, "id", 22)
	case "google":
		return idFrom(c.seed, "id", 22)
	case "mistral":
		return hexFrom(c.seed, "id", 32)
	case "deepseek", "fireworks":
		return uuidFrom(c.seed, "id")
	case "together":
		return idFrom(c.seed, "id", 7) + "-" + hexFrom(c.seed, "id2", 16)
	case "openrouter":
		return "gen-1767225600-" + idFrom(c.seed, "id", 20)
	case "groq":
		return "chatcmpl-" + uuidFrom(c.seed, "id")
	}
	return "chatcmpl-" + idFrom(c.seed, "id", 29)
}
