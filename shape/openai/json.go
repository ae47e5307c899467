package openai

import (
	"bytes"
	"encoding/json"
)

// jsonMarshal encodes v compactly without HTML escaping, so that "<", ">"
// and "&" in model text stay as they are.
func jsonMarshal(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	b := buf.Bytes()
	return b[:len(b)-1], nil // drop Encode's newline
}
