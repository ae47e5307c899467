package openai

import (
	"bytes"
	"encoding/json"
	"unicode/utf8"
)

// This file holds the C wire types the gateway writes to vendors and
// reads from them. Field order is the order of the encoded output, so
// goldens stay stable.

// outRequest is a chat completion request as sent to a C vendor.
type outRequest struct {
	Model               string             `json:"model"`
	Messages            []outMessage       `json:"messages"`
	MaxTokens           *int               `json:"max_tokens,omitempty"`
	MaxCompletionTokens *int               `json:"max_completion_tokens,omitempty"`
	Temperature         *float64           `json:"temperature,omitempty"`
	TopP                *float64           `json:"top_p,omitempty"`
	TopK                *int               `json:"top_k,omitempty"`
	Stop                []string           `json:"stop,omitempty"`
	Seed                *int64             `json:"seed,omitempty"`
	RandomSeed          *int64             `json:"random_seed,omitempty"`
	Stream              bool               `json:"stream,omitempty"`
	StreamOptions       *outStreamOptions  `json:"stream_options,omitempty"`
	Tools               []outTool          `json:"tools,omitempty"`
	ToolChoice          json.RawMessage    `json:"tool_choice,omitempty"`
	ParallelToolCalls   *bool              `json:"parallel_tool_calls,omitempty"`
	ReasoningEffort     string             `json:"reasoning_effort,omitempty"`
	Thinking            *outThinking       `json:"thinking,omitempty"`
	Reasoning           *outReasoning      `json:"reasoning,omitempty"`
	ResponseFormat      *outResponseFormat `json:"response_format,omitempty"`
	User                string             `json:"user,omitempty"`
	SafetyIdentifier    string             `json:"safety_identifier,omitempty"`
}

type outStreamOptions struct {
	IncludeUsage bool `json:"include_usage"`
}

// outThinking is DeepSeek's thinking switch.
type outThinking struct {
	Type string `json:"type"`
}

// outReasoning is OpenRouter's reasoning object.
type outReasoning struct {
	Effort    string `json:"effort,omitempty"`
	MaxTokens int    `json:"max_tokens,omitempty"`
	Enabled   *bool  `json:"enabled,omitempty"`
}

type outResponseFormat struct {
	Type       string         `json:"type"`
	JSONSchema *outJSONSchema `json:"json_schema,omitempty"`
}

type outJSONSchema struct {
	Name   string          `json:"name"`
	Schema json.RawMessage `json:"schema,omitempty"`
	Strict *bool           `json:"strict,omitempty"`
}

type outTool struct {
	Type     string      `json:"type"`
	Function outFunction `json:"function"`
}

type outFunction struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters,omitempty"`
	Strict      *bool           `json:"strict,omitempty"`
}

// outMessage is one message of a vendor request. Content is a string, an
// array of parts, or null (an assistant turn with only tool calls).
type outMessage struct {
	Role             string        `json:"role"`
	Content          outContent    `json:"content"`
	ReasoningContent *string       `json:"reasoning_content,omitempty"`
	Reasoning        *string       `json:"reasoning,omitempty"`
	ToolCalls        []outToolCall `json:"tool_calls,omitempty"`
	ToolCallID       string        `json:"tool_call_id,omitempty"`
}

// outContent marshals as a string (Parts nil, Null false), an array of
// parts, or null.
type outContent struct {
	Text  string
	Parts []outPart
	Null  bool
}

func (c outContent) MarshalJSON() ([]byte, error) {
	switch {
	case c.Null:
		return []byte("null"), nil
	case c.Parts != nil:
		return jsonMarshal(c.Parts)
	}
	return jsonMarshal(c.Text)
}

type outPart struct {
	Type     string       `json:"type"`
	Text     string       `json:"text,omitempty"`
	ImageURL *outImageURL `json:"image_url,omitempty"`
	File     *outFile     `json:"file,omitempty"`
}

type outImageURL struct {
	URL string `json:"url"`
}

type outFile struct {
	FileData string `json:"file_data,omitempty"`
	Filename string `json:"filename,omitempty"`
}

type outToolCall struct {
	Index    *int            `json:"index,omitempty"`
	ID       string          `json:"id,omitempty"`
	Type     string          `json:"type,omitempty"`
	Function outFunctionCall `json:"function"`
}

type outFunctionCall struct {
	Name      string `json:"name,omitempty"`
	Arguments string `json:"arguments"`
}

// inResponse is a chat.completion body as a vendor sends it.
type inResponse struct {
	ID      string     `json:"id"`
	Model   string     `json:"model"`
	Choices []inChoice `json:"choices"`
	Usage   *wireUsage `json:"usage"`
	XGroq   *struct {
		Usage *wireUsage `json:"usage"`
	} `json:"x_groq"`
	Error json.RawMessage `json:"error"`
}

type inChoice struct {
	Index        int       `json:"index"`
	Message      inMessage `json:"message"`
	FinishReason *string   `json:"finish_reason"`
}

// inMessage is a response message (or a stream delta).
type inMessage struct {
	Role             string       `json:"role"`
	Content          inContent    `json:"content"`
	ReasoningContent *string      `json:"reasoning_content"`
	Reasoning        *string      `json:"reasoning"`
	Refusal          *string      `json:"refusal"`
	ToolCalls        []inToolCall `json:"tool_calls"`
}

type inToolCall struct {
	Index    *int   `json:"index"`
	ID       string `json:"id"`
	Type     string `json:"type"`
	Function struct {
		Name      string  `json:"name"`
		Arguments *string `json:"arguments"`
	} `json:"function"`
}

// inContent is message content as vendors send it: a string, null, or
// (Mistral reasoning models) an array of text and thinking chunks.
type inContent struct {
	Text  string
	Parts []inContentPart
}

type inContentPart struct {
	Type     string `json:"type"`
	Text     string `json:"text"`
	Thinking []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	} `json:"thinking"`
}

func (c *inContent) UnmarshalJSON(b []byte) error {
	c.Text, c.Parts = "", nil
	if len(b) == 0 {
		return nil
	}
	switch b[0] {
	case 'n':
		return nil
	case '[':
		return json.Unmarshal(b, &c.Parts)
	case '"':
		// Fast path for the common case, a fragment without escapes:
		// its bytes between the quotes are the text.
		if len(b) >= 2 {
			if inner := b[1 : len(b)-1]; bytes.IndexByte(inner, '\\') < 0 && utf8.Valid(inner) {
				c.Text = string(inner)
				return nil
			}
		}
	}
	return json.Unmarshal(b, &c.Text)
}

// inChunkHead is the part of the first chunk that Start reports.
type inChunkHead struct {
	ID    string `json:"id"`
	Model string `json:"model"`
}

// inChunk is a chat.completion.chunk as a vendor sends it, without the
// id and model that only the first chunk needs (see inChunkHead).
type inChunk struct {
	Choices []struct {
		Index        int       `json:"index"`
		Delta        inMessage `json:"delta"`
		FinishReason *string   `json:"finish_reason"`
	} `json:"choices"`
	Usage *wireUsage `json:"usage"`
	XGroq *struct {
		Usage *wireUsage      `json:"usage"`
		Error json.RawMessage `json:"error"`
	} `json:"x_groq"`
	Error json.RawMessage `json:"error"`
}
