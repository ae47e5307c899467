package chat

import (
	"errors"
	"testing"

	gw "github.com/gwlabs/gateway"
	"github.com/gwlabs/gateway/proxy"
)

func TestStripUsageNull(t *testing.T) {
	tests := []struct{ in, want string }{
		{`data: {"id":"x","choices":[],"usage":null}` + "\n\n", `data: {"id":"x","choices":[]}` + "\n\n"},
		{`data: {"usage":{"prompt_tokens":1}}` + "\n\n", `data: {"usage":{"prompt_tokens":1}}` + "\n\n"},
		{": keep-alive\n\n", ": keep-alive\n\n"},
	}
	for _, tt := range tests {
		if got := string(stripUsageNull([]byte(tt.in))); got != tt.want {
			t.Errorf("stripUsageNull(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestStreamOutcome(t *testing.T) {
	in := &proxy.Inbound{Vendor: "openai", Body: make([]byte, 400)}
	reported := gw.Usage{InputTokens: 10, OutputTokens: 20, Reported: true}
	vendorErr := &gw.Error{Code: gw.CodeOverloaded, Message: "openai: overloaded"}
	tests := []struct {
		name    string
		end     streamEnd
		success bool
		note    string
		code    gw.Code
		broke   bool
		output  int64
	}{
		{"complete", streamEnd{done: true, usage: reported, events: 5}, true, "", "", false, 20},
		{"complete, caller closed after the end", streamEnd{done: true, callerLeft: true, usage: reported}, true, "", "", false, 20},
		// Without usage the output is the text relayed, one token per
		// byte (an upper bound), never the event count.
		{"complete without usage", streamEnd{done: true, events: 7, textBytes: 31}, true, "usage_missing", "", false, 31},
		// A reported output older than the content relayed since (fewer
		// tokens than events) gives way to the text estimate.
		{"abandoned mid-way, stale count", streamEnd{callerLeft: true, usage: reported, events: 30, textBytes: 120}, true, "abandoned", "", false, 120},
		{"abandoned mid-way, current count", streamEnd{callerLeft: true, usage: reported, events: 12, textBytes: 120}, true, "abandoned", "", false, 20},
		{"abandoned before any usage", streamEnd{callerLeft: true, events: 3, textBytes: 17}, true, "abandoned; usage_missing", "", false, 17},
		// A vendor that failed after producing tokens: not a success (no
		// charge), but its usage is kept as the operator's cost.
		{"vendor error", streamEnd{vendorErr: vendorErr, callerLeft: true, usage: reported}, false, "", gw.CodeOverloaded, false, 20},
		{"cut without a word", streamEnd{readErr: errors.New("reset")}, false, "", gw.CodeUpstream, true, 0},
		{"cut after tokens", streamEnd{readErr: errors.New("reset"), events: 4, textBytes: 25}, false, "", gw.CodeUpstream, true, 25},
		{"ended early", streamEnd{}, false, "", gw.CodeUpstream, true, 0},
	}
	for _, tt := range tests {
		o, broke := streamOutcome(in, tt.end)
		if o.Success != tt.success || o.Note != tt.note || gw.ErrorCode(o.Err) != tt.code || (broke != nil) != tt.broke || o.Usage.OutputTokens != tt.output {
			t.Errorf("%s: outcome %+v broke=%v", tt.name, o, broke)
		}
	}
}
