package embed

import (
	"fmt"
	"strings"
	"testing"
)

// benchBatch is gwbench's embeddings row: 64 inputs, 256 dimensions.
func benchBatch() (*Request, []byte) {
	r := &Request{Model: "openai/text-embedding-3-small", Dimensions: 256}
	var sb strings.Builder
	sb.WriteString(`{"object":"list","data":[`)
	for i := range 64 {
		r.Inputs = append(r.Inputs, Input{Text: fmt.Sprintf("Passage %d of the corpus: Say hello in one short sentence.", i)})
		if i > 0 {
			sb.WriteByte(',')
		}
		fmt.Fprintf(&sb, `{"object":"embedding","index":%d,"embedding":[`, i)
		for j := range 256 {
			if j > 0 {
				sb.WriteByte(',')
			}
			fmt.Fprintf(&sb, "%g", float64((i*31+j*17)%2049-1024)/1024)
		}
		sb.WriteString(`]}`)
	}
	sb.WriteString(`],"usage":{"prompt_tokens":640,"total_tokens":640}}`)
	return r, []byte(sb.String())
}

func BenchmarkCount64(b *testing.B) {
	r, _ := benchBatch()
	Count(r.Inputs)
	for b.Loop() {
		Count(r.Inputs)
	}
}

func BenchmarkDecodeEncode64x256(b *testing.B) {
	r, raw := benchBatch()
	for b.Loop() {
		v, _, err := DecodeOpenAI(raw, 64, 256)
		if err != nil {
			b.Fatal(err)
		}
		OpenAIAnswer(r.Model, v, 640, false)
	}
}
