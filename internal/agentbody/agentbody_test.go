package agentbody

import (
	"bytes"
	"encoding/json"
	"testing"
)

func TestBodies(t *testing.T) {
	for _, shape := range Shapes {
		for _, size := range []int{20 << 10, 110 << 10, 250 << 10} {
			c := New(shape, "openai/gpt-6-sol", size, "s0000001", 4)
			if c.Turns() != 4 {
				t.Fatalf("%s %d: %d turns, want 4", shape, size, c.Turns())
			}
			var prev map[string]json.RawMessage
			for k := range c.Turns() {
				b := c.Body(k)
				if k == 0 && (len(b) < size || len(b) > size+6<<10) {
					t.Errorf("%s %d: first turn is %d bytes", shape, size, len(b))
				}
				var m map[string]json.RawMessage
				if err := json.Unmarshal(b, &m); err != nil {
					t.Fatalf("%s %d turn %d: %v", shape, size, k, err)
				}
				hist := map[string]string{"C": "messages", "M": "messages", "R": "input"}[shape]
				if prev != nil {
					// The history is sent again, the new round after it.
					p := prev[hist]
					if !bytes.HasPrefix(m[hist], p[:len(p)-1]) || len(m[hist]) <= len(p) {
						t.Errorf("%s %d turn %d does not repeat turn %d's history", shape, size, k, k-1)
					}
				}
				prev = m
			}
			if !bytes.Equal(c.Body(1), New(shape, "openai/gpt-6-sol", size, "s0000001", 4).Body(1)) {
				t.Errorf("%s %d: not the same bytes from the same seed", shape, size)
			}
			if bytes.Equal(c.Body(0), New(shape, "openai/gpt-6-sol", size, "s0000002", 4).Body(0)) {
				t.Errorf("%s %d: salts give the same body", shape, size)
			}
		}
	}
}
