package guard

import "testing"

func TestByteClassBitmapsMatchDefinitions(t *testing.T) {
	for c := 0; c < 256; c++ {
		b := byte(c)
		want := b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9' || b == '+' || b == '/' || b == '=' || b == '-' || b == '_'
		if isB64(b) != want {
			t.Errorf("isB64(%q)", b)
		}
		want = b >= 'a' && b <= 'z' || b >= '0' && b <= '9' || b == '\'' || b == '@' || b == '$'
		if isWordByte(b) != want {
			t.Errorf("isWordByte(%q)", b)
		}
	}
}
