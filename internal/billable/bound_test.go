package billable_test

import (
	"bytes"
	"math/rand/v2"
	"testing"

	gw "github.com/gwlabs/gateway"
	"github.com/gwlabs/gateway/internal/agentbody"
	"github.com/gwlabs/gateway/internal/billable"
	"github.com/gwlabs/gateway/proxy"
)

// boundPieces are the marks of every list, escaped and cut variants,
// and JSON around them, to build bodies from.
var boundPieces = []string{
	`"image_url"`, `"input_image"`, `"type":"image"`, `"type": "image"`, `"inlineData"`, `"inline_data"`, `"input_audio"`,
	`"document"`, `"input_file"`, `"file_data"`, `"file"`, `"cachedContent"`, `"cached_content"`, `"conversation"`,
	`"prompt":{`, `"prompt": {`, `"previous_response_id"`, `"container"`, `"mcp_servers"`, `"plugins"`, `"thread"`,
	`"web_search`, `"file_search`, `"code_execution`, `"code_interpreter`, `"googleSearch`, `"google_search`,
	`"urlContext`, `"url_context`,
	`"type":"url"`, `"file_id"`, `"file_url"`, `"fileUri"`, `"file_uri"`, `"url":"http`, `"url": "http`, `"image_url":"http`,
	`\"document\"`, `\"type\":\"image\"`, `"type":"imag`, `"type":"image`, `"image"`, `"url"`, `"prompt":"x"`,
	`"`, `""`, `{`, `}`, `[`, `]`, `,`, `:`, ` `, `\`, `text`, `"type"`, `"content":"hi"`, `"image_url":{"url":"data:`,
}

// PromptBound reads a body once and says what the dispute's bound, which
// reads it once per mark, says: on bodies made of the marks, their
// escaped and cut variants and JSON around them, and on agent-sized
// bodies of every shape.
func TestPromptBoundMatchesEachMark(t *testing.T) {
	r := rand.New(rand.NewPCG(40, 2))
	check := func(body []byte, extra int, calls bool) {
		t.Helper()
		var h gw.Hosted
		if calls {
			h.WebSearches = 1
		}
		want := proxy.PromptBound(body, extra, h)
		if got := billable.PromptBound(body, extra, h.Calls()); got != want {
			t.Fatalf("PromptBound(%q, %d, %v) = %d, want %d", body, extra, calls, got, want)
		}
		checkMarks(t, body, extra, calls)
	}
	for range 20000 {
		var b bytes.Buffer
		for range r.IntN(12) {
			b.WriteString(boundPieces[r.IntN(len(boundPieces))])
		}
		check(b.Bytes(), r.IntN(3)*500-100, r.IntN(8) == 0)
	}
	// Image marks that overlap each other or themselves are counted as
	// bytes.Count counts them.
	for _, s := range []string{`"type":"image"type":"image"`, `"type":"image"type": "image"`, `"image_url""image_url"`, `"image_url"image_url"`} {
		check([]byte(s), 0, false)
	}
	for _, shape := range []string{"C", "M", "R"} {
		c := agentbody.New(shape, "m", 110<<10, "bound", 3)
		for k := range c.Turns() {
			check(c.Body(k), 0, false)
		}
	}
}

func BenchmarkPromptBound(b *testing.B) {
	body := agentbody.New("C", "m", 110<<10, "bench", 1).Body(0)
	b.SetBytes(int64(len(body)))
	b.Run("one-pass", func(b *testing.B) {
		for b.Loop() {
			billable.PromptBound(body, 0, false)
		}
	})
	b.Run("per-mark", func(b *testing.B) {
		for b.Loop() {
			proxy.PromptBound(body, 0, gw.Hosted{})
		}
	})
}

// checkMarks holds ScanMarks to ExternalInput and to the per-mark
// prompt bound.
func checkMarks(t *testing.T, body []byte, extra int, calls bool) {
	t.Helper()
	m := billable.ScanMarks(body)
	if got, want := m.External, billable.ExternalInput(body); got != want {
		t.Fatalf("ScanMarks(%q).External = %v, want %v", body, got, want)
	}
	// The per-mark bound (the dispute's) is the reference: PromptBound
	// itself is ScanMarks'.
	var h gw.Hosted
	if calls {
		h.WebSearches = 1
	}
	if got, want := m.PromptBound(extra, calls), proxy.PromptBound(body, extra, h); got != want {
		t.Fatalf("ScanMarks(%q).PromptBound(%d, %v) = %d, want %d", body, extra, calls, got, want)
	}
}

// ScanMarks reads in one pass what ExternalInput and PromptBound read.
func FuzzScanMarks(f *testing.F) {
	for _, s := range boundPieces {
		f.Add([]byte(`{"a":[`+s+`,"image_url",`+s+`]}`), 0)
	}
	f.Add([]byte(`"type":"image"type":"image""document""file_id"`), 7)
	f.Fuzz(func(t *testing.T, body []byte, extra int) {
		checkMarks(t, body, extra%100000, false)
		checkMarks(t, body, extra%100000, true)
	})
}

func BenchmarkScanMarks(b *testing.B) {
	body := agentbody.New("C", "m", 110<<10, "bench", 1).Body(0)
	b.SetBytes(int64(len(body)))
	b.Run("ScanMarks", func(b *testing.B) {
		for b.Loop() {
			billable.ScanMarks(body)
		}
	})
	b.Run("ExternalInput+PromptBound", func(b *testing.B) {
		for b.Loop() {
			billable.ExternalInput(body)
			billable.PromptBound(body, 0, false)
		}
	})
}
