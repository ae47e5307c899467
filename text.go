package gw

import "strconv"

// TextSource says where a piece of a request's text came from: the
// guard scores user, assistant and tool text and never system text.
type TextSource int

// Text sources.
const (
	TextSystem    TextSource = iota // system prompts and per-turn system messages
	TextUser                        // user turns
	TextAssistant                   // assistant turns, including tool-call arguments
	TextTool                        // tool results and documents
)

// Text is one piece of a request's text and its source, in request
// order: what the body carries as the vendor reads it.
type Text struct {
	Source TextSource
	Text   string
}

// String names the source.
func (s TextSource) String() string {
	switch s {
	case TextSystem:
		return "system"
	case TextUser:
		return "user"
	case TextAssistant:
		return "assistant"
	case TextTool:
		return "tool"
	}
	return "TextSource(" + strconv.Itoa(int(s)) + ")"
}
