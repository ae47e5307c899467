package chat

import (
	"bytes"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	openaishape "github.com/gwlabs/gateway/shape/openai"
	"github.com/gwlabs/gateway/sse"
)

// BenchmarkRelayChunk is the relay's work per stream event, as
// relayStream does it: read the vendor's event, let the meter read its
// usage, write its exact bytes to the caller and flush. One op relays an
// OpenAI stream of 50 content chunks, its usage chunk and [DONE];
// ns/event is the cost per event.
func BenchmarkRelayChunk(b *testing.B) {
	var up bytes.Buffer
	const chunks = 50
	for i := range chunks {
		sse.WriteData(&up, fmt.Appendf(nil, `{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"gpt-6-sol","choices":[{"index":0,"delta":{"content":"word %d "},"finish_reason":null}]}`, i))
	}
	sse.WriteData(&up, []byte(`{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"gpt-6-sol","choices":[],"usage":{"prompt_tokens":12,"completion_tokens":50,"total_tokens":62}}`))
	sse.WriteData(&up, []byte("[DONE]"))
	stream := up.Bytes()
	events := chunks + 2
	b.SetBytes(int64(len(stream)))
	b.ReportAllocs()
	for b.Loop() {
		rec := httptest.NewRecorder()
		fw := flushWriter{w: rec, rc: http.NewResponseController(rec)}
		m := openaishape.Shape{}.NewMeter("openai", false)
		rd := sse.NewReader(bytes.NewReader(stream))
		for rd.Next() {
			ev := rd.Event()
			if m.Observe(&ev) {
				continue
			}
			if _, err := fw.Write(ev.Raw); err != nil {
				b.Fatal(err)
			}
		}
		if !m.Done() || m.Usage().OutputTokens != chunks {
			b.Fatalf("meter: done %t usage %+v", m.Done(), m.Usage())
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*events), "ns/event")
}
