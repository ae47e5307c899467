// Package optimize is the gateway's optimization layer: one fixed,
// versioned directive for concise output, added to every request before
// the vendor call as a separate system segment after the caller's own
// system content, and the count of the prompt tokens it adds, so that
// those are never billed.
//
// Placement (Apply), per vendor shape, by byte-exact patching of the body
// the vendor is about to receive (every other byte stays as prepared):
//
//   - Messages: one more text block at the end of "system" (a string
//     system becomes a one-block array holding the same string first;
//     no system: "system" is added).
//   - Chat Completions: one more system message right after the caller's
//     leading system/developer messages, or first when there are none
//     (role "developer" when the last leading message is one).
//   - Gemini: one more part at the end of systemInstruction.parts.
//
// The text and its place never change between requests, so it sits inside
// (and after) the cached system prefix without breaking vendors' prompt
// caches. Version goes into each request's record.
//
// Token counts (Optimizer.Tokens), per vendor and model, counted once per
// directive version and cached: OpenAI's o200k encoding (embedded tables,
// nothing downloaded) plus the 4 tokens a chat message adds; Anthropic's
// count_tokens and Gemini's countTokens (the difference with and without
// the directive, the larger of two placements); for every other vendor,
// and whenever a count call fails, an upper bound: one token per byte of
// the text plus 16 for the message framing (a BPE token covers at least
// one byte). The gateway absorbs any excess; the customer is never charged
// for the directive.
package optimize
