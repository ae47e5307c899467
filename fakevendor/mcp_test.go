package fakevendor

import "testing"

// TestCallDirectiveBySuffix: "*SUFFIX" calls the declared tool whose
// name ends with SUFFIX, as a client prefixed it.
func TestCallDirectiveBySuffix(t *testing.T) {
	s := startServer(t)
	for _, v := range []string{"openai", "anthropic", "google"} {
		t.Run(v, func(t *testing.T) {
			_, b, _ := send(t, s, v, "gemini-2.5-flash", `go [fake:call=*srv__echo:{"message":"m"}][fake:call=*nothing]`, reqOpts{tools: []string{"Read", "mcp__gateway__srv__echo"}})
			p := parseBody(t, v, b)
			if len(p.calls) != 1 || p.calls[0].name != "mcp__gateway__srv__echo" || p.calls[0].args != `{"message":"m"}` {
				t.Errorf("calls = %+v, want one mcp__gateway__srv__echo call", p.calls)
			}
		})
	}
}
