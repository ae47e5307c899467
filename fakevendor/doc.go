// Package fakevendor impersonates the gateway's nine upstream vendors on
// loopback, in their real wire formats, so tests (and "gateway serve
// --fake-vendors") can exercise every prefix with no vendor keys and no
// network. One Server serves all vendors from one listener, each under
// "/<vendor>"; BaseURL gives the base URL to configure for each. Answers
// are scripted deterministically from the request, and every request is
// recorded (Requests, WaitCancelled). It imports only the standard library.
//
// # Routes and auth
//
//	openai      POST /openai/v1/chat/completions           Authorization: Bearer fake-openai-key
//	            POST /openai/v1/responses (and GET, DELETE /openai/v1/responses/{id},
//	            GET .../{id}/input_items, POST /openai/v1/responses/input_tokens)
//	together    POST /together/v1/chat/completions         Bearer
//	fireworks   POST /fireworks/inference/v1/chat/completions  Bearer
//	groq        POST /groq/openai/v1/chat/completions      Bearer
//	mistral     POST /mistral/v1/chat/completions          Bearer
//	deepseek    POST /deepseek/chat/completions (and /deepseek/v1/...)  Bearer
//	openrouter  POST /openrouter/api/v1/chat/completions   Bearer
//	anthropic   POST /anthropic/v1/messages                x-api-key, and anthropic-version is required (400 without)
//	google      POST /google/v1beta/models/{model}:generateContent
//	            POST /google/v1beta/models/{model}:streamGenerateContent?alt=sse   x-goog-api-key (or ?key=)
//
// Embeddings (embed.go): POST <base>/embeddings on openai, together,
// fireworks, mistral and openrouter (OpenAI's wire; usage prompt_tokens
// and total_tokens, OpenRouter's with cost; Mistral reads
// output_dimension and refuses dimensions, Together ignores it,
// Fireworks lists data in reverse order with each index), and Google's
// :embedContent and :batchEmbedContents (at most 100 requests, no
// usage, as the real API). Vectors are Vector(vendor, model, text, n).
//
// The expected key is APIKey(vendor) = "fake-<vendor>-key". A wrong or
// missing key gets the vendor's own answer: 401 with its error body, except
// Google, which answers a wrong key with 400 INVALID_ARGUMENT (ErrorInfo
// reason API_KEY_INVALID) and a missing one with 403 PERMISSION_DENIED, as
// the real API does. A model name containing "missing" gets the vendor's
// 404 model-not-found error; an OpenRouter model without a "/" gets 400.
//
// OpenRouter also serves GET /openrouter/api/v1/models, its price list
// (OpenRouterModels; not recorded). Anthropic also serves POST
// /anthropic/v1/messages/count_tokens, answering
// {"input_tokens": PromptTokens(body)}, and Google POST
// /google/v1beta/models/{model}:countTokens (contents or a
// generateContentRequest), answering {"totalTokens": PromptTokens(body)}.
//
// Two opt-in models make the gateway's own behaviours visible:
// EnablePrefixCache remembers prompt prefixes per cache key and reports
// cache reads and writes in each vendor's usage fields (prefixcache.go);
// EnableReplyModel answers JSON when JSON output is asked for and a
// shorter reply when the request carries a given directive (replies.go).
// "gateway serve --fake-vendors" turns both on. Env returns the GATEWAY_* settings
// (base URL and key of all nine vendors) that point a gateway here.
//
// # Request rules enforced
//
// Besides required fields (C model and non-empty messages; M model,
// max_tokens and messages; Gemini contents), the fake rejects with the
// vendor's own 400 the requests the real vendors reject and gateways are
// known to produce:
//
//   - Every OpenAI-compatible vendor: a "tool" message whose
//     tool_call_id is not a call of the assistant message before its run
//     of tool messages (OpenAI's "messages with role 'tool' must be a
//     response to a preceeding message with 'tool_calls'").
//   - Mistral: a tool call id (assistant tool_calls[].id or a tool
//     message's tool_call_id) not matching ^[a-zA-Z0-9]{9}$.
//   - DeepSeek: an assistant message with tool_calls but no
//     reasoning_content field ("" is fine), unless the request has
//     thinking {"type":"disabled"} (thinking is on by default). In
//     thinking mode every DeepSeek answer carries reasoning_content, as
//     the real one does, [fake:reasoning] or not.
//   - OpenAI, DeepSeek: a tool message that does not follow an
//     assistant message with tool_calls.
//   - Groq: n > 1.
//   - Anthropic: a message with empty content (a final assistant prefill
//     excepted), an empty or whitespace-only text block, a final assistant
//     string ending in whitespace, a tool_use not answered by a
//     tool_result in the next message (unless it is the last message), a
//     tool_result whose tool_use_id is not a tool_use of the previous
//     message.
//   - Google, models named gemini-3*: a model turn whose first
//     functionCall part has no thoughtSignature.
//
// Anthropic keeps message threads as the real API does (threads.go):
// "thread": {"type": "create"} keeps the conversation under the answer's
// id, {"type": "continue", "previous_message_id": id} expands it before
// the new messages (system and tools there are a 400), and an unknown id
// is 404 with error.details.error_code "thread_not_found".
//
// # OpenAI Responses API
//
// The openai fake also speaks the Responses API (responses.go). POST
// /v1/responses takes input as a string (one user message) or a list of
// items; directives come from the last user message with text (string
// content or input_text parts) of the conversation, previous turns
// included, and the function_call_output / custom_tool_call_output items
// that end the new input are the tool results ("Tool said: ..."). Tools:
// "function" and "custom" tools can be called by the tool and call
// directives; the function tools of a {"type":"namespace","name":N,
// "tools":[...]} group are called by their own names and the call item
// carries "namespace": N; hosted tools (web_search, file_search, ...) are
// accepted and never called. A custom tool's input is the "input" member
// of the call directive's arguments ([fake:call=apply_patch:{"input":
// "*** Begin Patch..."}]), else the arguments as written ("x" for schema-
// made ones).
//
// The answer is a response object (id resp_ + 48 hex, object "response",
// the request's settings echoed: instructions, tools, tool_choice,
// reasoning, text, store, previous_response_id, prompt_cache_key, ...)
// whose output holds, in order, a reasoning item (with [fake:reasoning]:
// id rs_..., summary [{"type":"summary_text","text":ReasoningText}] when
// the request's reasoning.summary is set, else [], and encrypted_content
// when include has "reasoning.encrypted_content"), a message item
// (msg_..., one output_text part with annotations [] and logprobs []),
// and the calls (function_call fc_... with call_id call_..., or
// custom_tool_call ctc_... with input). Usage: input_tokens = P,
// input_tokens_details.cached_tokens = cache read,
// output_tokens = O, output_tokens_details.reasoning_tokens = R,
// total_tokens = P + O. stop=length answers status "incomplete" with
// incomplete_details {"reason":"max_output_tokens"} (content_filter:
// "content_filter"); the message item is then "incomplete".
//
// A stream ("stream": true) is named SSE events, each data carrying its
// type and a sequence_number from 0, and no [DONE]: response.created and
// response.in_progress (status in_progress, output [], usage null); per
// reasoning item output_item.added, reasoning_summary_part.added,
// reasoning_summary_text.delta (one word each), reasoning_summary_text.done,
// reasoning_summary_part.done (the summary events only when a summary
// was asked), output_item.done; per message output_item.added,
// content_part.added, output_text.delta (one word each),
// output_text.done, content_part.done, output_item.done; per function
// call output_item.added (arguments ""), 3 function_call_arguments.delta,
// function_call_arguments.done, output_item.done (custom tools:
// custom_tool_call_input.delta/done); then response.completed, or
// response.incomplete. Delta events carry an "obfuscation" string unless
// stream_options.include_obfuscation is false. error-after=N sends an
// "error" event (code server_error) and a response.failed (status
// failed, error {code, message}) and ends. Content chunks are the delta
// events and a call's output_item.added.
//
// State, as OpenAI keeps it: a response created with store true (the
// default) is kept with its input and output items; previous_response_id
// expands the kept conversation before the new input (an unknown or
// store:false id is 400 code previous_response_not_found, param
// previous_response_id); GET /v1/responses/{id} returns the kept object,
// DELETE removes it ({"object":"response.deleted"}), GET
// .../input_items lists the request's input items newest first (order=asc
// reverses), and an unknown id is 404 "Response with id '...' not found.".
// An item given by reference (item_reference, or a reasoning item with an
// id and no encrypted_content) must be a kept item, else 404 "Item with
// id '...' not found." (with store false: "... Items are not persisted
// when `store` is set to false. ..."). A reasoning item's
// encrypted_content must be one the fake made (it seals the reasoning
// text with a check value): anything else is 400 code
// invalid_encrypted_content. So store:false plus encrypted reasoning
// round-trips through the caller alone. POST /v1/responses/input_tokens
// answers {"object":"response.input_tokens","input_tokens":P}.
//
// Request rules, with OpenAI's error body (error{message,type,param,
// code}): an unknown top-level member is 400 code unknown_parameter
// ("Unknown parameter: 'x'."), and so is a stream_options member other
// than include_obfuscation (OpenAI's Responses API has no include_usage);
// client_metadata, which Codex sends, is accepted. model is required, and
// input unless previous_response_id is given (missing_required_parameter);
// max_output_tokens below 16 is integer_below_min_value; a
// function_call_output (custom_tool_call_output) with no earlier call of
// its call_id is "No tool call found for function call output with
// call_id X.", a call with no later output "No tool output found for
// function call X." (both 400, param input). A request with an Upgrade
// header (a WebSocket attempt; the real API serves a WebSocket mode) is
// refused with 426 Upgrade Required, on which Codex falls back to HTTP at
// once. status, fail-first,
// slow, hang, delay, break and malformed apply as on chat completions.
//
// # Default reply
//
// The reply text is DefaultText(vendor, model) = "Hello from <vendor>
// <model>. This is a deterministic fake reply.", where model is the
// requested model, which every response echoes. Together ends a natural
// stop with finish_reason "eos", as its models do. Streams send it one word
// per content chunk ("Hello", " from", ...). Ids follow each vendor's
// style (chatcmpl-..., msg_01..., Gemini responseId, gen-... on OpenRouter)
// and derive from a hash of vendor, model and body, so they are stable.
//
// Per-vendor stream details: OpenAI sends a first chunk with role and ""
// content, an "obfuscation" field on every chunk unless
// stream_options.include_obfuscation is false, and, only with
// stream_options.include_usage, "usage":null on every chunk plus a final
// {"choices":[],"usage":{...}} chunk (DeepSeek and Groq do the same).
// Groq puts x_groq{id} on the first chunk and x_groq{id,usage} on the
// finish chunk always. Together ("usage":null on every chunk), Fireworks
// and Mistral put usage on the finish chunk. OpenRouter starts with a
// ": OPENROUTER PROCESSING" comment and always sends the usage chunk
// (with cost). DeepSeek starts with ": keep-alive" comments and, when not
// streaming, writes blank lines before the JSON body. Anthropic sends
// message_start, ping, content_block_start/delta/stop per block,
// message_delta (cumulative usage) and message_stop. Gemini sends "data:"
// records separated by "\r\n\r\n", usageMetadata on every record, the
// finishReason on a last record with an empty text part, and no
// terminator. All C streams end with "data: [DONE]". A gemini-3* answer
// with text and no function call carries a thoughtSignature, as Gemini 3
// sends one: on the text part without streaming, and in a stream on that
// last empty text part, after the answer's text.
//
// # Usage formula
//
// Let P = PromptTokens(body) = max(1, ceil(len(body)/4)) over the raw
// request body bytes as received (a test that does not know what the
// gateway sent upstream computes it from the recorded Received.Body); Tokens(n) = ceil(n/4) for a text of n
// bytes. Output: T = Tokens(len(reply text)), R = Tokens(len(reasoning
// text)) (0 without [fake:reasoning]), and per tool call
// Tokens(len(name)+len(arguments JSON)), summed as U. Output total
// O = T + U + R.
//
//   - C vendors: prompt_tokens = P (cached included), completion_tokens = O
//     (reasoning included), total_tokens = P + O.
//   - Anthropic: input_tokens = P - cache_read - cache_write (uncached part
//     only), output_tokens = O, cache fields always present (0 by default).
//   - Gemini: promptTokenCount = P (cached included), candidatesTokenCount
//     = T + U, thoughtsTokenCount = R (omitted when 0), totalTokenCount =
//     P + T + U + R.
//   - OpenRouter usage.cost = (P + 2*O) micro-USD as an exact decimal
//     ($1/M input, $2/M output), or the value of [fake:cost=...].
//   - DeepSeek prompt_cache_hit_tokens = cache read, miss = P - hit (always).
//   - OpenAI completion_tokens_details.reasoning_tokens = R (reasoning is
//     only visible in usage there).
//
// # Directives
//
// Directives are read from the text of the last user message that has
// text: C the last "user" message (string content or "text" parts), M the
// last "user" message (string content or "text" blocks), Gemini the last
// "user" content's non-thought text parts. Tool results are not user text,
// so in a tool loop the directives of the user turn that started it still
// apply. The grammar, any number anywhere in the text:
//
//	directive = "[fake:" name [ "=" value ] "]"    value = any characters but "]"
//
// An unknown name or a bad value is answered with the vendor's 400 naming
// the directive. Names:
//
//	text=STRING       exact reply text (a tool result reply is overridden too)
//	tool, tool=N, tools=N
//	                  reply with N (default 1) parallel tool calls to the
//	                  declared tools, the first N cycling; arguments from each
//	                  tool's JSON schema: required properties only, string "x",
//	                  integer/number 1, boolean true, array [], object
//	                  recursively, enum its first value, anyOf/oneOf the first
//	                  branch. Ids: OpenAI-style "call_"+24 base62 (DeepSeek
//	                  "call_0<i>_..."), Mistral 9 base62, Anthropic
//	                  "toolu_01"+22, Gemini an 8-char "id" plus a
//	                  thoughtSignature. No text accompanies the calls; finish
//	                  reason tool_calls / tool_use / STOP. Streams: OpenAI-style
//	                  first fragment {index,id,type,function{name,arguments:""}}
//	                  then 3 argument fragments {index,function{arguments}};
//	                  Mistral one whole call per chunk, without "index"
//	                  and "type" (as Mistral streams them; its non-stream
//	                  entries lack "type" too); Anthropic tool_use with
//	                  input {} then 3 input_json_delta; Gemini one functionCall
//	                  part per record. With no tools declared the directive is
//	                  ignored.
//	                  When the request ends in tool results (C trailing "tool"
//	                  messages, M tool_result blocks in the last user message,
//	                  Gemini functionResponse parts in the last user content),
//	                  the reply is "Tool said: " + the results joined by " | "
//	                  (a Gemini response object with a single string field
//	                  contributes that string, else its compact JSON).
//	call=NAME, call=NAME:ARGS
//	                  reply with a call of the declared tool NAME, with the
//	                  JSON object ARGS (which cannot contain "]") or, without
//	                  ARGS, arguments from its schema as for tool; several
//	                  call directives make parallel calls, in order. A name
//	                  the request did not declare is skipped (a model can
//	                  only call declared tools); with none left, the default
//	                  reply. Ids, streaming and finish reason as for tool.
//	                  E.g. a Read round trip of a coding tool:
//	                  [fake:call=Read:{"file_path":"/home/me/notes.txt"}].
//	                  A NAME starting with "*" calls the first declared
//	                  tool whose name ends with the rest, whatever prefix
//	                  the client gave an MCP server's tools:
//	                  [fake:call=*everything__echo:{"message":"hi"}].
//	reasoning         add reasoning text ReasoningText(model), one word per
//	                  chunk: Anthropic thinking block with signature (stream:
//	                  thinking_delta then signature_delta), DeepSeek and
//	                  Fireworks reasoning_content, Groq/Together/OpenRouter
//	                  "reasoning" (OpenRouter also reasoning_details), Mistral
//	                  array content with a "thinking" chunk, Gemini
//	                  thought:true parts; OpenAI only reasoning_tokens in usage.
//	                  DeepSeek reasons whenever thinking is on (its default:
//	                  unless the request has thinking {"type":"disabled"}),
//	                  directive or not, as the real one does.
//	cache, cache=READ[/WRITE5M[/WRITE1H]]
//	                  report prompt caching: default READ = P/2, WRITE5M =
//	                  P/4, WRITE1H = 0 (clamped so the sum never exceeds P).
//	                  Anthropic cache_read_input_tokens = READ,
//	                  cache_creation_input_tokens = WRITE5M+WRITE1H with
//	                  cache_creation{ephemeral_5m,ephemeral_1h}; OpenAI and
//	                  OpenRouter prompt_tokens_details.cached_tokens = READ and
//	                  cache_write_tokens = writes (when > 0); DeepSeek hit =
//	                  READ; Gemini cachedContentTokenCount = READ; Groq and
//	                  Fireworks prompt_tokens_details.cached_tokens = READ.
//	                  Together and Mistral report no cache fields.
//	stop=REASON       force the finish reason. Generic names map to the
//	                  vendor's own: length|max_tokens, content_filter|refusal,
//	                  stop|end_turn, stop_sequence (Anthropic echoes the
//	                  request's first stop sequence, or "STOP"), tool_calls|
//	                  tool_use, eos (Together "eos", others "stop"); any other
//	                  value is sent verbatim (e.g. model_length, pause_turn,
//	                  RECITATION).
//	status=NNN        answer HTTP NNN (>= 400) with the vendor's error body:
//	                  OpenAI-style nested error{message,type,param,code}
//	                  (429 code rate_limit_exceeded, 404 model_not_found);
//	                  Anthropic {"type":"error","error":{type,message},
//	                  "request_id"} (529 overloaded_error, 500 api_error);
//	                  Gemini google.rpc error with RetryInfo on 429; Mistral
//	                  top-level {"object":"error",...}; OpenRouter
//	                  {"error":{code,message,metadata}}. A 429 carries
//	                  retry-after (not on Google, which has RetryInfo).
//	retry=SECONDS     retry-after / retryDelay value, default 2.
//	quota=ID          Google's 429: the QuotaFailure quotaId (default
//	                  GenerateRequestsPerMinutePerProjectPerModel-FreeTier,
//	                  a per-project quota: the key's); "none" sends no
//	                  QuotaFailure (shared capacity ran out).
//	fail-first=N      the first N calls answer fail-status (default 503) with
//	                  the vendor's error body, later ones proceed. Calls are
//	                  counted per vendor and per exact sequence of directives
//	                  in the message; Reset clears the counters.
//	fail-status=NNN   status used by fail-first (>= 400).
//	retry-ms=N        also send retry-after-ms N (and Retry-After N/1000
//	                  rounded up) with status and fail-first answers.
//	searches=N        the answer made N hosted web searches, reported as
//	                  each vendor reports them: Anthropic
//	                  usage.server_tool_use.web_search_requests (0 at
//	                  message_start, N in message_delta and the body),
//	                  OpenAI Responses N web_search_call output items before
//	                  the message (in the final response object), Gemini
//	                  groundingMetadata.webSearchQueries on the candidate.
//	fetches=N         Anthropic: usage.server_tool_use.web_fetch_requests N.
//	container         Anthropic: the answer names a code-execution container
//	                  (top-level container; delta.container in a stream).
//	tier=NAME         OpenAI: the answer's service_tier is NAME. Without it
//	                  the answer names the tier the request asked for when
//	                  it is "priority" or "flex", else "default". Anthropic
//	                  answers a request with speed "fast" with usage.speed
//	                  "fast".
//	id=ANY            no effect but to make the directives' sequence (the
//	                  fail-first counter's key) unique to a request.
//	on=TARGET         the failures scripted here (hang, slow, fail-first,
//	                  status, reset, silent, break, error-after) apply only
//	                  when TARGET is the vendor, the requested model or
//	                  vendor/model; any other vendor answers normally (a
//	                  primary failing while its fallback serves).
//	reset             drop the connection with a TCP reset, answering
//	                  nothing.
//	silent            send the 200 status line and headers, then nothing
//	                  until the client goes away.
//	slow=DURATION     wait before the status line (Go duration, "300ms");
//	                  gives up when the client goes away.
//	delay=DURATION    wait between stream frames.
//	hang              never answer; the call is recorded Cancelled when the
//	                  client goes away or the server closes.
//	break=N           stream: after N content chunks close the connection
//	                  abruptly (no terminator, unfinished chunked encoding).
//	error-after=N     stream: after N content chunks send the vendor's
//	                  in-stream error and end: Anthropic event: error
//	                  overloaded_error; OpenAI-compatible data:{"error":{...}};
//	                  OpenRouter a chunk with error and finish_reason "error"
//	                  then [DONE]; Groq a chunk with x_groq.error; Gemini a
//	                  data: record holding only a google.rpc error (503).
//	                  Except on OpenRouter no [DONE] follows.
//	malformed         non-stream: 200 with a non-JSON body; stream: a garbage
//	                  data line after the first content chunk (the stream
//	                  then continues normally).
//	chunks=N          split the reply text into N content chunks of nearly
//	                  equal length instead of one per word.
//	cost=DECIMAL      OpenRouter usage.cost.
//	report-twice      the vendor's reports count this request twice.
//	report-omit       the vendor's reports leave this request out.
//
// # Reports
//
// Every answered request is logged (UsageLog: vendor, inference key,
// model, time, token classes), and the vendors' admin report endpoints are
// served from that log (report.go): OpenAI's organization usage and costs,
// Anthropic's usage and cost reports, OpenRouter's generation records and
// key usage, DeepSeek's balance. They bill at the rate card's prices (a
// model off the card at $1/M in, $2/M out), so an honest run matches the
// gateway's ledger, and need AdminKey(vendor), which the inference
// endpoints refuse (and the report endpoints refuse the inference key,
// 403). Drift knobs: SetReportPrice (a price change from a time),
// DropReportHour (a missing hour), AddReportSurcharge (a cost line the
// rate card does not price), DuplicateInReport and report-twice (a
// request counted twice), report-omit; SetGenerationLag (generation
// records 404 for their first lookups), SetBalance, SetReportPageSize
// (results per page, to exercise pagination), LogUsage (a history).
//
// Content chunks, counted by break and error-after, are the frames that
// carry reasoning text, reply text or tool-call payload (for Anthropic the
// content_block_delta events except signature_delta; for Gemini every
// record but the last). With N at or beyond the count, the cut comes after
// the last content chunk; with 0, before the first. An OpenAI-style tool
// call's first fragment (id and name) is a content chunk too. break,
// error-after, delay and chunks only affect streams.
//
// # Recording
//
// Every request is recorded on arrival (Requests, in arrival order, deep
// copies) and completed when its handler returns: Status is the status
// sent, Done is set, and Cancelled tells a client that went away (or a
// Close) before the response was complete from a finished one. A stream
// cut by break is Done, not Cancelled, with Status 200. WaitCancelled and
// WaitDone block until enough records reach that state.
//
// Precedence: reset, then silent, then hang, then slow, then fail-first, then status, then the
// reply. Authentication and request validation come before all of them.
package fakevendor
