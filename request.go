package gw

import "encoding/json"

// Shape names a wire format: the three the gateway serves and Gemini's.
type Shape string

// Shapes.
const (
	ShapeM Shape = "messages"         // Anthropic Messages
	ShapeC Shape = "chat_completions" // OpenAI Chat Completions
	ShapeR Shape = "responses"        // OpenAI Responses
	ShapeG Shape = "gemini"           // Gemini generateContent
)

// Role is the author of a Message.
type Role string

// Roles. System content lives in Request.System, not in a message, except
// where a caller put a system message mid-conversation (RoleSystem).
const (
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
	RoleSystem    Role = "system"
)

// PartType tells the kind of a Part.
type PartType string

// Part types.
const (
	PartText             PartType = "text"
	PartImage            PartType = "image"    // MediaType+Data (base64) or URL
	PartDocument         PartType = "document" // MediaType+Data, URL, or Text
	PartToolCall         PartType = "tool_call"
	PartToolResult       PartType = "tool_result"
	PartThinking         PartType = "thinking"
	PartRedactedThinking PartType = "redacted_thinking"
)

// Part is one piece of message content. Which fields are meaningful
// depends on Type; the others are zero.
type Part struct {
	Type PartType

	// Text is the text of a text, thinking or text-document part.
	Text string

	// MediaType and Data (standard base64) carry inline images and
	// documents; URL carries linked ones. Filename names a document.
	MediaType string
	Data      string
	URL       string
	Filename  string

	// ToolCallID links a tool call and its result. ToolName is the called
	// function. Arguments is the call's input as a JSON object text
	// (never empty on a decoded call: "{}" when there were none).
	ToolCallID string
	ToolName   string
	Arguments  json.RawMessage

	// Content is a tool result's content; IsError marks a failed call.
	Content []Part
	IsError bool

	// Signature is a thinking block's signature, or a vendor's opaque
	// reasoning token (Gemini thoughtSignature) carried for replay.
	// RedactedData is a redacted_thinking block's data.
	Signature    string
	RedactedData string

	// CacheControl is the caller's cache marker on this part, kept for
	// vendors that take one (Anthropic), as raw JSON.
	CacheControl json.RawMessage
}

// Message is one turn of the conversation.
type Message struct {
	Role    Role
	Content []Part
}

// Tool is a function the model may call.
type Tool struct {
	Name         string
	Description  string
	Parameters   json.RawMessage // JSON Schema object; "{}"-like when absent
	Strict       *bool
	CacheControl json.RawMessage
}

// ToolChoiceMode says how the model must use tools.
type ToolChoiceMode string

// Tool choice modes.
const (
	ToolChoiceAuto     ToolChoiceMode = "auto"
	ToolChoiceNone     ToolChoiceMode = "none"
	ToolChoiceRequired ToolChoiceMode = "required" // Anthropic "any"
	ToolChoiceTool     ToolChoiceMode = "tool"     // a named function
)

// ToolChoice is the caller's tool choice.
type ToolChoice struct {
	Mode ToolChoiceMode
	Name string // with ToolChoiceTool
}

// Reasoning is the caller's reasoning control. Effort is one of
// none|minimal|low|medium|high|xhigh|max; BudgetTokens is an explicit
// thinking budget; Disabled turns reasoning off; Adaptive leaves the
// amount to the model. Display is Anthropic's thinking.display
// ("summarized", "omitted", or "" for the model's default).
type Reasoning struct {
	Effort       string
	BudgetTokens int
	Disabled     bool
	Adaptive     bool
	Display      string
}

// ResponseFormat asks for JSON output. Type is "json_object" or
// "json_schema" (then Schema, Name and Strict apply).
type ResponseFormat struct {
	Type   string
	Name   string
	Schema json.RawMessage
	Strict *bool
}

// Request is the canonical chat request that shape decoders produce and
// vendor encoders consume on mapped routes. Pointer fields tell "absent"
// from zero.
type Request struct {
	Model    string // vendor model id, prefix stripped
	System   []Part // system text, in order (text parts)
	Messages []Message

	MaxTokens   *int
	Temperature *float64
	TopP        *float64
	TopK        *int
	Stop        []string
	Seed        *int64

	Stream       bool
	IncludeUsage bool // C callers: stream_options.include_usage

	Tools             []Tool
	ToolChoice        *ToolChoice
	ParallelToolCalls *bool

	Reasoning      *Reasoning
	ResponseFormat *ResponseFormat
	User           string

	// Dropped lists caller fields the mapping could not carry and left out
	// by a documented rule; they are reported in x-gateway-dropped-fields.
	Dropped []string
}
