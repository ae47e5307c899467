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
	TextToolSpec                    // tool and JSON-schema descriptions: third-party text the caller passes on
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
	case TextToolSpec:
		return "tool_spec"
	}
	return "TextSource(" + strconv.Itoa(int(s)) + ")"
}

// MessagesText is the text of conversation turns the gateway adds back
// to a request (a kept thread, a previous response), with sources as a
// body's reader gives them: user turns as user text, assistant turns
// and their tool-call arguments as assistant text, tool results and
// text documents as tool text, system turns as system text. The guard
// reads it with the request's own text, so history a caller gets the
// gateway to replay is read like history it sends.
func MessagesText(msgs []Message) []Text {
	var out []Text
	var parts func(src TextSource, ps []Part)
	parts = func(src TextSource, ps []Part) {
		for _, p := range ps {
			switch p.Type {
			case PartText:
				if p.Text != "" {
					out = append(out, Text{Source: src, Text: p.Text})
				}
			case PartDocument:
				if p.Text != "" {
					out = append(out, Text{Source: TextTool, Text: p.Text})
				}
			case PartToolCall:
				if len(p.Arguments) > 0 && string(p.Arguments) != "{}" {
					out = append(out, Text{Source: TextAssistant, Text: string(p.Arguments)})
				}
			case PartToolResult:
				parts(TextTool, p.Content)
			}
		}
	}
	for _, m := range msgs {
		src := TextUser
		switch m.Role {
		case RoleAssistant:
			src = TextAssistant
		case RoleSystem:
			src = TextSystem
		}
		parts(src, m.Content)
	}
	return out
}
