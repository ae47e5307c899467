// Package responses is the OpenAI Responses API (shape R, POST
// /v1/responses) <-> the gateway's canonical types, for the mapped
// routes (every vendor but OpenAI, which serves R itself and gets the
// caller's bytes), plus what the server needs on the native route: the
// usage of an answer and a Meter for relayed streams.
//
// Requests (request.go, canonical.go): Parse reads a body strictly (JSON
// keys case-sensitive, duplicates and invalid UTF-8 refused) for the
// model, stream, max_output_tokens and the guard's text (instructions and
// system/developer messages are system text; user messages and tool
// outputs the caller's). Messages maps the input items (a string input is
// one user message; message items with input_text / input_image /
// input_file parts; function_call, custom_tool_call and their outputs;
// reasoning items whose encrypted_content the gateway sealed) to
// canonical turns; Canonical adds instructions and leading
// system/developer messages as the system prompt, tools (function tools;
// custom tools as functions taking {"input": string}; namespace groups
// flattened to "<namespace>__<tool>"; hosted tools such as web_search
// left out and listed, never refused), tool_choice, reasoning.effort,
// text.format, max_output_tokens, temperature, top_p and
// user/safety_identifier. ToolNames restores the caller's names (and
// namespace, and custom-ness) on the way back.
//
// Responses (response.go, stream.go): a canonical answer becomes a
// response object (status completed, incomplete with
// incomplete_details.reason max_output_tokens or content_filter, or
// failed) whose output has one item per canonical part: message with an
// output_text part, function_call or custom_tool_call, reasoning with the
// thinking text as summary_text and an encrypted_content blob (seal.go)
// carrying the vendor's reasoning state (thinking signatures, redacted
// thinking, Gemini thought signatures, DeepSeek reasoning) sealed with
// AES-GCM under the gateway's key and the caller's account, so that it
// round-trips through callers that keep nothing server-side (store:false)
// and is tamper-evident. The stream encoder sends the event sequence of
// the API with sequence numbers, ending in response.completed,
// response.incomplete, or an error event and response.failed.
package responses
