// Package agentbody makes request bodies shaped like a coding agent's
// turns, for the load harness and the benchmarks: a long system prompt,
// 18 tools with JSON schemas, rounds of tool calls answered by file-sized
// tool results, and a short user message at the end. Every turn of a
// conversation sends the whole history again plus a new tail, as agents
// do. The content comes from a fixed seed, so a size and a salt always
// give the same bytes.
package agentbody

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
)

// Shapes are the ingress shapes a body can take: "C" (Chat Completions),
// "M" (Anthropic Messages) and "R" (Responses).
var Shapes = []string{"C", "M", "R"}

// Conversation is one agent conversation: the rounds it has so far and
// the ones its later turns add.
type Conversation struct {
	shape  string
	model  string
	salt   string
	system string
	tools  []tool
	rounds []round
	base   int // rounds in the first turn
}

type tool struct {
	name, desc string
	schema     json.RawMessage
}

type round struct {
	id, name string
	args     string // JSON object
	result   string
}

// New is a conversation of the given shape whose first turn is about
// size bytes, for model (as the request names it, e.g. "openai/gpt-6-sol"
// or, to a vendor, "gpt-6-sol"). Conversations with different salts
// share the layout and differ in every message's text (no cache sees
// one's messages in another's). turns is how many turns Body can make.
func New(shape, model string, size int, salt string, turns int) *Conversation {
	r := rand.New(rand.NewPCG(40, 1))
	c := &Conversation{shape: shape, model: model, salt: salt}
	// The prompt and the tools' descriptions grow with the size, as
	// agents with more tools and instructions send more history too.
	f := min(float64(size)/float64(110<<10), 1.6)
	c.system = "You are a coding agent working in the user's repository [" + salt + "]. " + prose(r, int(7000*f))
	for i := range 18 {
		c.tools = append(c.tools, makeTool(r, i, f))
	}
	// Rounds until the first turn reaches size, then turns-1 more.
	for len(c.Body(0)) < size || len(c.rounds) == 0 {
		c.rounds = append(c.rounds, makeRound(r, len(c.rounds), salt))
		c.base = len(c.rounds)
	}
	// The round that took the body past size belongs to it.
	for range max(turns-1, 0) {
		c.rounds = append(c.rounds, makeRound(r, len(c.rounds), salt))
	}
	return c
}

// Turns is how many turns Body can make.
func (c *Conversation) Turns() int { return len(c.rounds) - c.base + 1 }

// Body is turn k's request body (k from 0): the first turn's history,
// k rounds more, and the user's message, streamed.
func (c *Conversation) Body(k int) []byte {
	n := min(c.base+k, len(c.rounds))
	switch c.shape {
	case "M":
		return c.messages(n)
	case "R":
		return c.responses(n)
	}
	return c.chat(n)
}

const userAsk = "Fix the failing test in the storage package and explain the change."

func (c *Conversation) chat(n int) []byte {
	var b strings.Builder
	fmt.Fprintf(&b, `{"model":%s,"stream":true,"stream_options":{"include_usage":true},"max_completion_tokens":4096,"messages":[`, q(c.model))
	fmt.Fprintf(&b, `{"role":"system","content":%s},{"role":"user","content":%s}`, q(c.system), q(userAsk+" ["+c.salt+"]"))
	for _, rd := range c.rounds[:n] {
		fmt.Fprintf(&b, `,{"role":"assistant","content":null,"tool_calls":[{"id":%s,"type":"function","function":{"name":%s,"arguments":%s}}]}`, q(rd.id), q(rd.name), q(rd.args))
		fmt.Fprintf(&b, `,{"role":"tool","tool_call_id":%s,"content":%s}`, q(rd.id), q(rd.result))
	}
	b.WriteString(`],"tools":[`)
	for i, t := range c.tools {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"type":"function","function":{"name":%s,"description":%s,"parameters":%s}}`, q(t.name), q(t.desc), t.schema)
	}
	b.WriteString(`],"tool_choice":"auto","parallel_tool_calls":true}`)
	return []byte(b.String())
}

func (c *Conversation) messages(n int) []byte {
	var b strings.Builder
	fmt.Fprintf(&b, `{"model":%s,"max_tokens":4096,"stream":true,"system":[{"type":"text","text":%s}],"tools":[`, q(c.model), q(c.system))
	for i, t := range c.tools {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"name":%s,"description":%s,"input_schema":%s}`, q(t.name), q(t.desc), t.schema)
	}
	fmt.Fprintf(&b, `],"messages":[{"role":"user","content":[{"type":"text","text":%s}]}`, q(userAsk+" ["+c.salt+"]"))
	for _, rd := range c.rounds[:n] {
		fmt.Fprintf(&b, `,{"role":"assistant","content":[{"type":"text","text":"Reading it."},{"type":"tool_use","id":%s,"name":%s,"input":%s}]}`, q(rd.id), q(rd.name), rd.args)
		fmt.Fprintf(&b, `,{"role":"user","content":[{"type":"tool_result","tool_use_id":%s,"content":%s}]}`, q(rd.id), q(rd.result))
	}
	b.WriteString(`]}`)
	return []byte(b.String())
}

func (c *Conversation) responses(n int) []byte {
	var b strings.Builder
	fmt.Fprintf(&b, `{"model":%s,"stream":true,"instructions":%s,"tools":[`, q(c.model), q(c.system))
	for i, t := range c.tools {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"type":"function","name":%s,"description":%s,"parameters":%s}`, q(t.name), q(t.desc), t.schema)
	}
	fmt.Fprintf(&b, `],"input":[{"type":"message","role":"user","content":[{"type":"input_text","text":%s}]}`, q(userAsk+" ["+c.salt+"]"))
	for _, rd := range c.rounds[:n] {
		fmt.Fprintf(&b, `,{"type":"function_call","call_id":%s,"name":%s,"arguments":%s}`, q(rd.id), q(rd.name), q(rd.args))
		fmt.Fprintf(&b, `,{"type":"function_call_output","call_id":%s,"output":%s}`, q(rd.id), q(rd.result))
	}
	b.WriteString(`],"max_output_tokens":4096}`)
	return []byte(b.String())
}

func q(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

var toolNames = []string{"read_file", "write_file", "edit_file", "list_dir", "glob", "grep", "run_shell", "run_tests",
	"git_status", "git_diff", "git_log", "web_fetch", "web_search", "todo_write", "ask_user", "spawn_task", "notebook_edit", "lint"}

func makeTool(r *rand.Rand, i int, f float64) tool {
	n := func(k int) int { return max(int(float64(k)*f), 20) }
	props := map[string]any{}
	req := []string{}
	for j := range 3 + r.IntN(4) {
		name := fmt.Sprintf("%s_%d", words[r.IntN(len(words))], j)
		p := map[string]any{"type": []string{"string", "integer", "boolean"}[r.IntN(3)], "description": prose(r, n(60+r.IntN(80)))}
		if j == 0 {
			p = map[string]any{"type": "string", "description": "Absolute path of the file or directory. " + prose(r, n(60))}
			req = append(req, name)
		}
		if j == 1 {
			p = map[string]any{"type": "array", "items": map[string]any{"type": "string", "enum": []string{"a", "b", "c"}}, "description": prose(r, n(50))}
		}
		props[name] = p
	}
	s, _ := json.Marshal(map[string]any{"type": "object", "properties": props, "required": req, "additionalProperties": false})
	return tool{name: toolNames[i], desc: prose(r, n(150+r.IntN(250))), schema: s}
}

func makeRound(r *rand.Rand, i int, salt string) round {
	name := toolNames[r.IntN(4)]
	path := fmt.Sprintf("/repo/internal/%s/%s_%d.go", words[r.IntN(len(words))], words[r.IntN(len(words))], i)
	args, _ := json.Marshal(map[string]any{"path": path, "offset": 0, "limit": 400})
	return round{
		id:     fmt.Sprintf("call_%s_%03d", salt, i),
		name:   name,
		args:   string(args),
		result: code(r, 2500+r.IntN(2500), path, salt),
	}
}

var words = strings.Fields(`store account ledger request stream vendor budget window token cache marker shape
	model prompt answer relay guard key limit hold settle batch commit record usage price card route
	retry breaker fallback health probe config server client handler buffer offset value member array`)

// prose is about n bytes of sentences.
func prose(r *rand.Rand, n int) string {
	var b strings.Builder
	for b.Len() < n {
		k := 6 + r.IntN(10)
		for j := range k {
			w := words[r.IntN(len(words))]
			if j == 0 {
				w = strings.ToUpper(w[:1]) + w[1:]
			}
			b.WriteString(w)
			if j < k-1 {
				b.WriteByte(' ')
			}
		}
		b.WriteString(". ")
	}
	return b.String()
}

// code is about n bytes of a Go-like source file, numbered as a file
// reader shows it: quotes, tabs and newlines that JSON escapes.
func code(r *rand.Rand, n int, path, salt string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "     1\t// %s [%s]\n     2\tpackage %s\n", path, salt, words[r.IntN(len(words))])
	for line := 3; b.Len() < n; line++ {
		w1, w2 := words[r.IntN(len(words))], words[r.IntN(len(words))]
		switch r.IntN(5) {
		case 0:
			fmt.Fprintf(&b, "%6d\tfunc (s *%s) %s(ctx context.Context, id string) error {\n", line, w1, strings.ToUpper(w2[:1])+w2[1:])
		case 1:
			fmt.Fprintf(&b, "%6d\t\tif err := s.%s.Get(ctx, \"%s/\" + id); err != nil {\n", line, w1, w2)
		case 2:
			fmt.Fprintf(&b, "%6d\t\t\treturn fmt.Errorf(\"%s %s: %%w\", err)\n", line, w1, w2)
		case 3:
			fmt.Fprintf(&b, "%6d\t\t}\n", line)
		default:
			fmt.Fprintf(&b, "%6d\t\t// %s\n", line, prose(r, 40))
		}
	}
	return b.String()
}
