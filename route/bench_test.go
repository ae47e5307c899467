package route

import "testing"

// BenchmarkParse is the routing of one request: a plain prefix and the
// longer openrouter form.
func BenchmarkParse(b *testing.B) {
	for _, model := range []string{"openai/gpt-6-sol", "openrouter/meta-llama/llama-3.3-70b-instruct"} {
		b.Run(model, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Parse(model); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
