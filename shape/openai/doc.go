// Package openai maps the OpenAI Chat Completions wire shape ("C") to and
// from the gateway's canonical chat types (package gw), in both roles:
//
//   - client side, for callers of the gateway's C endpoint: DecodeRequest
//     (C request -> gw.Request), EncodeResponse and StreamEncoder
//     (gw.Response / gw.Event -> chat.completion / chunks);
//   - vendor side, for the seven C-shaped vendors (openai, together,
//     fireworks, groq, mistral, deepseek, openrouter): EncodeRequest
//     (gw.Request -> the vendor's C body), DecodeResponse and
//     NewStreamDecoder (the vendor's answer -> gw types). Each vendor's
//     quirks are a Dialect (DialectFor);
//   - pass-through metering: DecodeUsage, UsageFromBody and Meter read the
//     usage of a C answer that the server relays unchanged;
//   - pass-through normalisation (normalize.go): Dialect.NormalizeBody and
//     NewStreamNormalizer fix only the listed vendor deviations that break
//     the official SDKs' helpers (Together's "eos", Mistral's streamed
//     tool calls without index and type), keeping every other byte.
//
// Usage. C prompt_tokens includes cached reads and cache writes; gw.Usage
// buckets are disjoint, so InputTokens = prompt_tokens - cached_tokens -
// cache_write_tokens (clamped at 0), CacheReadTokens = cached_tokens (or
// DeepSeek's prompt_cache_hit_tokens, or Together's top-level
// usage.cached_tokens), CacheWrite5mTokens =
// cache_write_tokens, OutputTokens = completion_tokens (reasoning
// included), ReasoningTokens = reasoning_tokens. Groq may carry usage in
// x_groq.usage; OpenRouter's usage.cost (USD) is parsed exactly into
// ReportedCost. Encoding back, prompt_tokens = every prompt bucket.
//
// Dropped and refused fields (gw.Request.Dropped; the server reports them
// in x-gateway-dropped-fields) are listed on DecodeRequest and
// EncodeRequest. DecodeRequest takes one extension: a tool message with
// "is_error": true is a failed call (gw.Part.IsError), which Anthropic
// and Gemini can express.
package openai
