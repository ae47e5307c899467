package google

import (
	"encoding/json"

	"github.com/gwlabs/gateway/shape/gemini"
)

// This file holds the Gemini wire types the adapter alone uses: the
// request the encoder writes
// (field order = output order, so encoded bodies are stable) and the
// response the decoders read. Only the members the gateway uses are
// declared; the decoder ignores the rest (safetyRatings, citationMetadata,
// avgLogprobs...). The types both sides of the gateway write alike
// (inline and linked files, tools and tool choice, usage) are
// shape/gemini's.

// genRequest is a generateContent request body.
type genRequest struct {
	Contents          []content          `json:"contents"`
	SystemInstruction *content           `json:"systemInstruction,omitempty"`
	Tools             []gemini.Tool      `json:"tools,omitempty"`
	ToolConfig        *gemini.ToolConfig `json:"toolConfig,omitempty"`
	GenerationConfig  *generationCf      `json:"generationConfig,omitempty"`
}

// content is one turn: role "user" or "model" (no role in
// systemInstruction).
type content struct {
	Role  string    `json:"role,omitempty"`
	Parts []outPart `json:"parts"`
}

// outPart is a request part. Text is a pointer because a part that only
// carries a thought signature is replayed as {"text":"",...}, the way
// Gemini sent it.
type outPart struct {
	Text             *string          `json:"text,omitempty"`
	Thought          bool             `json:"thought,omitempty"`
	InlineData       *gemini.Blob     `json:"inlineData,omitempty"`
	FileData         *gemini.FileData `json:"fileData,omitempty"`
	FunctionCall     *outCall         `json:"functionCall,omitempty"`
	FunctionResponse *outResponse     `json:"functionResponse,omitempty"`
	ThoughtSignature string           `json:"thoughtSignature,omitempty"`
}

type outCall struct {
	Name string          `json:"name"`
	Args json.RawMessage `json:"args"`
	ID   string          `json:"id,omitempty"`
}

type outResponse struct {
	Name     string          `json:"name"`
	Response json.RawMessage `json:"response"`
	ID       string          `json:"id,omitempty"`
	// callerID is the tool-call id as the caller holds it, for ordering.
	callerID string
}

type generationCf struct {
	MaxOutputTokens    *int            `json:"maxOutputTokens,omitempty"`
	Temperature        *float64        `json:"temperature,omitempty"`
	TopP               *float64        `json:"topP,omitempty"`
	TopK               *int            `json:"topK,omitempty"`
	CandidateCount     int             `json:"candidateCount,omitempty"`
	StopSequences      []string        `json:"stopSequences,omitempty"`
	Seed               *int64          `json:"seed,omitempty"`
	ResponseMimeType   string          `json:"responseMimeType,omitempty"`
	ResponseJSONSchema json.RawMessage `json:"responseJsonSchema,omitempty"`
	ThinkingConfig     *thinkingConfig `json:"thinkingConfig,omitempty"`
}

type thinkingConfig struct {
	IncludeThoughts bool   `json:"includeThoughts,omitempty"`
	ThinkingBudget  *int   `json:"thinkingBudget,omitempty"`
	ThinkingLevel   string `json:"thinkingLevel,omitempty"`
}

// genResponse is a GenerateContentResponse: a whole answer, or one record
// of a stream. Error is set on an error record (a stream's bare
// {"error":...}).
type genResponse struct {
	Candidates     []candidate           `json:"candidates"`
	PromptFeedback *promptFeedback       `json:"promptFeedback"`
	UsageMetadata  *gemini.UsageMetadata `json:"usageMetadata"`
	ModelVersion   string                `json:"modelVersion"`
	ResponseID     string                `json:"responseId"`
	Error          *rpcStatus            `json:"error"`
}

type candidate struct {
	Content       *candidateContent `json:"content"`
	FinishReason  string            `json:"finishReason"`
	FinishMessage string            `json:"finishMessage"`
	Index         int               `json:"index"`
	// GroundingMetadata is present when Google Search grounded the
	// answer (billed per search query, or per grounded request on
	// Gemini 2.5).
	GroundingMetadata *groundingMetadata `json:"groundingMetadata"`
}

type groundingMetadata struct {
	WebSearchQueries []json.RawMessage `json:"webSearchQueries"`
}

type candidateContent struct {
	Role  string   `json:"role"`
	Parts []inPart `json:"parts"`
}

// inPart is a response part.
type inPart struct {
	Text                string               `json:"text"`
	Thought             bool                 `json:"thought"`
	ThoughtSignature    string               `json:"thoughtSignature"`
	InlineData          *gemini.Blob         `json:"inlineData"`
	FileData            *gemini.FileData     `json:"fileData"`
	FunctionCall        *inCall              `json:"functionCall"`
	ExecutableCode      *executableCode      `json:"executableCode"`
	CodeExecutionResult *codeExecutionResult `json:"codeExecutionResult"`
}

type inCall struct {
	ID   string          `json:"id"`
	Name string          `json:"name"`
	Args json.RawMessage `json:"args"`
}

type executableCode struct {
	Language string `json:"language"`
	Code     string `json:"code"`
}

type codeExecutionResult struct {
	Outcome string `json:"outcome"`
	Output  string `json:"output"`
}

type promptFeedback struct {
	BlockReason        string `json:"blockReason"`
	BlockReasonMessage string `json:"blockReasonMessage"`
}

// rpcStatus is a google.rpc.Status error body member.
type rpcStatus struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Status  string          `json:"status"`
	Details []rpcStatusInfo `json:"details"`
}

// rpcStatusInfo is one detail: RetryInfo (retryDelay) or ErrorInfo
// (reason); the others are ignored.
type rpcStatusInfo struct {
	Type       string `json:"@type"`
	RetryDelay string `json:"retryDelay"`
	Reason     string `json:"reason"`
}
