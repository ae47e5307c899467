package gemini

import (
	"encoding/json"

	gw "github.com/gwlabs/gateway"
)

// Request is a generateContent (or streamGenerateContent) request body as
// a caller sends it. Only the members the mapping reads are declared;
// Decode lists the other top-level members it leaves out.
type Request struct {
	Contents          []Content         `json:"contents"`
	SystemInstruction *Content          `json:"systemInstruction,omitempty"`
	Tools             []Tool            `json:"tools,omitempty"`
	ToolConfig        *ToolConfig       `json:"toolConfig,omitempty"`
	GenerationConfig  *GenerationConfig `json:"generationConfig,omitempty"`
	SafetySettings    json.RawMessage   `json:"safetySettings,omitempty"`
	CachedContent     string            `json:"cachedContent,omitempty"`
	Labels            json.RawMessage   `json:"labels,omitempty"`
}

// Content is one turn ("user" or "model"; no role in systemInstruction)
// or a candidate's content.
type Content struct {
	Role  string `json:"role,omitempty"`
	Parts []Part `json:"parts"`
}

// Part is one part of a Content, request or response side. Text is a
// pointer so that an empty text part (Gemini's last stream record) is
// written.
type Part struct {
	Text             *string           `json:"text,omitempty"`
	Thought          bool              `json:"thought,omitempty"`
	InlineData       *Blob             `json:"inlineData,omitempty"`
	FileData         *FileData         `json:"fileData,omitempty"`
	FunctionCall     *FunctionCall     `json:"functionCall,omitempty"`
	FunctionResponse *FunctionResponse `json:"functionResponse,omitempty"`
	ThoughtSignature string            `json:"thoughtSignature,omitempty"`
	// Parts the mapping cannot carry to another vendor.
	ExecutableCode      json.RawMessage `json:"executableCode,omitempty"`
	CodeExecutionResult json.RawMessage `json:"codeExecutionResult,omitempty"`
	VideoMetadata       json.RawMessage `json:"videoMetadata,omitempty"`
}

// Blob is inline bytes, standard base64.
type Blob struct {
	MimeType string `json:"mimeType"`
	Data     string `json:"data"`
}

// FileData links a file by URI.
type FileData struct {
	MimeType string `json:"mimeType,omitempty"`
	FileURI  string `json:"fileUri"`
}

// FunctionCall is a model's tool call.
type FunctionCall struct {
	ID   string          `json:"id,omitempty"`
	Name string          `json:"name"`
	Args json.RawMessage `json:"args,omitempty"`
}

// FunctionResponse is a tool's result, sent back by the caller.
type FunctionResponse struct {
	ID       string          `json:"id,omitempty"`
	Name     string          `json:"name"`
	Response json.RawMessage `json:"response"`
}

// Tool is one entry of "tools". Only functionDeclarations map to other
// vendors; the hosted tools are served on google/ alone.
type Tool struct {
	FunctionDeclarations  []FunctionDeclaration `json:"functionDeclarations,omitempty"`
	GoogleSearch          json.RawMessage       `json:"googleSearch,omitempty"`
	GoogleSearchRetrieval json.RawMessage       `json:"googleSearchRetrieval,omitempty"`
	CodeExecution         json.RawMessage       `json:"codeExecution,omitempty"`
	URLContext            json.RawMessage       `json:"urlContext,omitempty"`
	FileSearch            json.RawMessage       `json:"fileSearch,omitempty"`
	GoogleMaps            json.RawMessage       `json:"googleMaps,omitempty"`
	ComputerUse           json.RawMessage       `json:"computerUse,omitempty"`
	Retrieval             json.RawMessage       `json:"retrieval,omitempty"`
}

// FunctionDeclaration declares a function. Parameters is Gemini's
// OpenAPI-subset schema; ParametersJSONSchema a JSON Schema.
type FunctionDeclaration struct {
	Name                 string          `json:"name"`
	Description          string          `json:"description,omitempty"`
	Parameters           json.RawMessage `json:"parameters,omitempty"`
	ParametersJSONSchema json.RawMessage `json:"parametersJsonSchema,omitempty"`
}

// ToolConfig is the caller's function-calling mode.
type ToolConfig struct {
	FunctionCallingConfig *FunctionCallingConfig `json:"functionCallingConfig,omitempty"`
}

// FunctionCallingConfig: mode AUTO, ANY, NONE or VALIDATED.
type FunctionCallingConfig struct {
	Mode                 string   `json:"mode,omitempty"`
	AllowedFunctionNames []string `json:"allowedFunctionNames,omitempty"`
}

// GenerationConfig is the sampling and output configuration.
type GenerationConfig struct {
	MaxOutputTokens    *int            `json:"maxOutputTokens,omitempty"`
	Temperature        *float64        `json:"temperature,omitempty"`
	TopP               *float64        `json:"topP,omitempty"`
	TopK               *float64        `json:"topK,omitempty"`
	CandidateCount     *int            `json:"candidateCount,omitempty"`
	StopSequences      []string        `json:"stopSequences,omitempty"`
	Seed               *int64          `json:"seed,omitempty"`
	ResponseMimeType   string          `json:"responseMimeType,omitempty"`
	ResponseSchema     json.RawMessage `json:"responseSchema,omitempty"`
	ResponseJSONSchema json.RawMessage `json:"responseJsonSchema,omitempty"`
	ThinkingConfig     *ThinkingConfig `json:"thinkingConfig,omitempty"`
	PresencePenalty    *float64        `json:"presencePenalty,omitempty"`
	FrequencyPenalty   *float64        `json:"frequencyPenalty,omitempty"`
	ResponseModalities []string        `json:"responseModalities,omitempty"`
	ResponseLogprobs   *bool           `json:"responseLogprobs,omitempty"`
	Logprobs           *int            `json:"logprobs,omitempty"`
	MediaResolution    string          `json:"mediaResolution,omitempty"`
	SpeechConfig       json.RawMessage `json:"speechConfig,omitempty"`
}

// ThinkingConfig is Gemini's reasoning control.
type ThinkingConfig struct {
	IncludeThoughts *bool  `json:"includeThoughts,omitempty"`
	ThinkingBudget  *int   `json:"thinkingBudget,omitempty"`
	ThinkingLevel   string `json:"thinkingLevel,omitempty"`
}

// Response is a GenerateContentResponse: a whole answer or one record of
// a stream.
type Response struct {
	Candidates     []Candidate     `json:"candidates,omitempty"`
	PromptFeedback *PromptFeedback `json:"promptFeedback,omitempty"`
	UsageMetadata  *UsageMetadata  `json:"usageMetadata,omitempty"`
	ModelVersion   string          `json:"modelVersion,omitempty"`
	ResponseID     string          `json:"responseId,omitempty"`
}

// Candidate is one answer.
type Candidate struct {
	Content       *Content `json:"content,omitempty"`
	FinishReason  string   `json:"finishReason,omitempty"`
	FinishMessage string   `json:"finishMessage,omitempty"`
	Index         int      `json:"index"`
}

// PromptFeedback tells a prompt refused before any candidate.
type PromptFeedback struct {
	BlockReason string `json:"blockReason,omitempty"`
}

// UsageMetadata is Gemini's token report. promptTokenCount includes
// cachedContentTokenCount; candidatesTokenCount excludes
// thoughtsTokenCount.
type UsageMetadata struct {
	PromptTokenCount        *gw.Count `json:"promptTokenCount,omitempty"`
	CachedContentTokenCount *gw.Count `json:"cachedContentTokenCount,omitempty"`
	CandidatesTokenCount    *gw.Count `json:"candidatesTokenCount,omitempty"`
	ThoughtsTokenCount      *gw.Count `json:"thoughtsTokenCount,omitempty"`
	ToolUsePromptTokenCount *gw.Count `json:"toolUsePromptTokenCount,omitempty"`
	TotalTokenCount         *gw.Count `json:"totalTokenCount,omitempty"`
}
