// Package anthropic maps the Anthropic Messages wire shape ("M") to and
// from the gateway's canonical chat types (package gw), in both roles:
//
//   - Client side, for callers of the gateway's /v1/messages endpoint whose
//     model is served by a vendor of another shape: DecodeRequest turns the
//     caller's request into a gw.Request; EncodeResponse and StreamEncoder
//     turn the vendor's decoded answer back into an M message or event
//     stream (ids and model from ResponseMeta); ErrorEvent is the in-stream
//     error event.
//   - Vendor side, for callers of /v1/chat/completions (or any other shape)
//     whose model is Anthropic's: EncodeRequest writes the Anthropic
//     request; DecodeResponse and NewStreamDecoder read its answer.
//   - Metering, for the pass-through route (M caller, Anthropic model),
//     where the bytes are relayed unchanged: DecodeUsage, UsageFromBody and
//     Meter read usage, the end of the stream and in-stream errors.
//
// Usage is normalised into gw.Usage's disjoint buckets: input_tokens is
// already the uncached input; cache writes come from the cache_creation
// object (5m and 1h TTL) when present, else from
// cache_creation_input_tokens as 5-minute writes; in streams,
// message_delta's cumulative counts replace message_start's, never add.
//
// Mapping rules that lose or change something, so that nothing changes
// meaning silently:
//
//   - DecodeRequest reports unknown top-level fields (service_tier,
//     container, top-level cache_control, ...) in gw.Request.Dropped, and
//     refuses with invalid_request what no other vendor can run: server
//     tools (web_search_*, bash_*, code_execution_*, computer_*,
//     text_editor_*, ...), server-tool and search-result blocks, and file
//     sources. A per-turn system message (a messages[] entry with role
//     "system", as current Claude Code sends) and a mid_conv_system block
//     become a gw.RoleSystem message at their place. Tool options only
//     Anthropic has (defer_loading, eager_input_streaming,
//     input_examples) are dropped and listed as "tools.<option>", the
//     tool itself being declared in full; thinking.display is kept in
//     gw.Reasoning.Display for the encoders. Model is kept as sent; the
//     caller strips the vendor prefix.
//   - EncodeRequest documents its rules on the function (system hoisting,
//     turn merging, tool results first, thinking replay, max_tokens and
//     thinking budgets, sampling with thinking, tool choice downgrades).
//     Fields it drops are appended to gw.Request.Dropped.
//   - EncodeResponse and StreamEncoder write the thinking signature as ""
//     when the vendor gave none (such blocks cannot be replayed to
//     Anthropic, and EncodeRequest drops them), and tool_use input as the
//     parsed arguments. Since Anthropic's message_delta carries only cache
//     totals, the stream encoder adds the 5m/1h cache_creation split there
//     as an extra field.
//   - Errors: request problems are *gw.Error invalid_request naming the
//     field; vendor answers that cannot be read or mapped are
//     upstream_error, Anthropic's overloaded_error is overloaded, and a
//     stream that ends before message_stop is an error, never a success.
package anthropic
