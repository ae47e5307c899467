package embed

import (
	"sync"

	"github.com/tiktoken-go/tokenizer/codec"
)

// countBytes bounds the text Count tokenizes; past it the rest is
// counted at the rate measured on the part read (rounded up), so that a
// count costs at most about as much CPU as this many bytes.
const countBytes = 256 << 10

var (
	o200kOnce sync.Once
	o200k     *codec.Codec
)

// Count is the gateway's own count of the inputs' tokens, for a vendor
// that reports none (Gemini's embed methods) or 0: each text in OpenAI's
// o200k encoding (at least 1 token a text), each token array its length.
// Never 0 for a request with inputs: an embedding is never free.
func Count(inputs []Input) int64 {
	o200kOnce.Do(func() { o200k = codec.NewO200kBase() })
	var n, read, counted, skipped int64
	for _, in := range inputs {
		if in.IsTokens {
			n += int64(len(in.Tokens))
			continue
		}
		text := in.Text
		if in.Title != "" {
			text = in.Title + " " + text
		}
		room := countBytes - read
		if int64(len(text)) > room {
			skipped += int64(len(text)) - max(room, 0)
			text = text[:max(room, 0)]
		}
		k := 0
		if text != "" {
			k, _ = o200k.Count(text)
			read += int64(len(text))
			counted += int64(k)
		}
		n += max(int64(k), 1)
	}
	if skipped > 0 {
		// The rest at the rate read so far, rounded up; at least one
		// token per four bytes when nothing was read.
		if read > 0 {
			n += (skipped*max(counted, 1) + read - 1) / read
		} else {
			n += (skipped + 3) / 4
		}
	}
	return n
}
