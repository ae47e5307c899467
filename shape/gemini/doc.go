// Package gemini is shape G: the Gemini API's generateContent,
// streamGenerateContent and countTokens, as Google's SDKs and Gemini CLI
// send them, on the caller's side of the gateway. It is self-contained:
//
//   - Parse (and DecodeRequest) read a request body strictly (case-
//     sensitive members, no duplicates, valid UTF-8) into the canonical
//     gw.Request, with the text the guard reads and the output cap;
//     SplitPath reads the model and method from the URL (the model is
//     everything between "models/" and the last ":", slashes and all).
//   - EncodeResponse and StreamEncoder write a canonical answer as a
//     GenerateContentResponse, or a stream of them (SSE for alt=sse,
//     else Google's JSON array).
//   - ErrorBody is Google's error envelope with ErrorInfo and, on 429,
//     RetryInfo.
//   - UsageFromBody and Meter read usage from answers relayed unchanged
//     from Gemini itself (google/ callers).
//   - Model, Page: the model list in Google's shape.
//
// # Request mapping
//
// contents become messages ("model" is the assistant; consecutive turns
// of one role merge); text parts text; inlineData and fileData images
// (image/*) or documents; functionCall parts tool calls (the id is the
// call's own, else "call_N" by its order in the history); functionResponse
// parts tool results, matched to their call by id, else to the first
// unanswered call of that name; a response {"output": s} (or "result",
// "content") gives the text s, {"error": s} a failed call, anything else
// its JSON. Thought parts and bare thoughtSignatures are left out (they
// mean something to Gemini alone). systemInstruction is the system text.
// functionDeclarations become tools (parametersJsonSchema as is;
// parameters, Gemini's OpenAPI subset, as JSON Schema: type names lower-
// cased, nullable folded into the type); toolConfig's mode AUTO, NONE,
// ANY (one allowed name: that tool) is the tool choice. generationConfig:
// maxOutputTokens, temperature, topP, topK, stopSequences, seed;
// responseMimeType application/json is JSON output, with responseSchema
// or responseJsonSchema a schema; thinkingConfig thinkingLevel is the
// effort, thinkingBudget 0 off, -1 the model's choice, N a budget.
//
// Dropped by rule (gw.Request.Dropped): safetySettings (no other vendor
// has per-category thresholds), labels, presencePenalty,
// frequencyPenalty, logprobs, mediaResolution, allowedFunctionNames
// beyond one, unknown top-level members. Refused on every prefix but
// google/ (Parsed.GoogleOnly, Mappable): cachedContent, hosted tools
// (googleSearch, codeExecution, urlContext, ...), candidateCount above
// 1, speechConfig, non-text responseModalities.
//
// # Response mapping
//
// One candidate: text parts, thought parts (only when the caller asked
// includeThoughts), functionCall parts with their ids; finishReason STOP
// (tool calls too), MAX_TOKENS, SAFETY for a refusal, OTHER; usageMetadata
// with promptTokenCount (every prompt token), cachedContentTokenCount
// (cache reads), candidatesTokenCount (output less reasoning) and
// thoughtsTokenCount; modelVersion is the prefixed model, responseId the
// answer's id. A stream sends a record per text or thought fragment and
// per whole function call, then one with finishReason and usageMetadata.
package gemini
