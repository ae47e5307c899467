package guard

import (
	"fmt"
	"strings"
	"testing"
)

// agentTools are tool descriptions in the style of a coding agent's
// (written for these tests).
var agentTools = []string{
	"Runs a shell command in the project directory and returns its output. Use it for builds, tests and git. Avoid interactive commands; they time out after two minutes.",
	"Reads a file from the local filesystem. The path must be absolute. Returns at most 2000 lines, numbered; pass an offset to read further.",
	"Replaces an exact string in a file with another. The old string must occur once in the file; include surrounding lines to make it unique.",
	"Writes a file, replacing it if it exists. Prefer editing existing files to writing new ones.",
	"Searches file contents with a regular expression and returns matching lines with their paths.",
	"Lists files matching a glob pattern, sorted by modification time.",
	"Fetches a URL and returns its content converted to Markdown. Large pages are truncated.",
	"Keeps a list of the tasks of the current job, each pending, in progress or done.",
}

// agentFile is file-like tool output: Go-ish source lines.
func agentFile(seed, n int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "// file %d\npackage store\n\n", seed)
	for i := 0; b.Len() < n; i++ {
		switch (i + seed) % 6 {
		case 0:
			fmt.Fprintf(&b, "func (s *Store) Get%d(ctx context.Context, id int64) (*Item, error) {\n", i)
		case 1:
			fmt.Fprintf(&b, "\trow := s.db.QueryRowContext(ctx, \"SELECT name, price FROM items WHERE id = $1\", id)\n")
		case 2:
			fmt.Fprintf(&b, "\tif err := row.Scan(&it.Name, &it.Price); err != nil {\n\t\treturn nil, fmt.Errorf(\"item %%d: %%w\", id, err)\n\t}\n")
		case 3:
			fmt.Fprintf(&b, "\t// The price is kept in cents so sums stay exact (line %d).\n", i)
		case 4:
			fmt.Fprintf(&b, "\treturn &it, nil\n}\n\n")
		default:
			fmt.Fprintf(&b, "var errNotFound%d = errors.New(\"item not found\")\n", i)
		}
	}
	return b.String()[:n]
}

// agentRound is one round of an agent's turn: the model's short note and
// tool call, and the tool's result.
func agentRound(i int) []Segment {
	return []Segment{
		{Source: SourceAssistant, Text: fmt.Sprintf("I'll look at store%d.go to see how prices are read.", i)},
		{Source: SourceAssistant, Text: fmt.Sprintf(`{"path":"/src/app/store%d.go"}`, i)},
		{Source: SourceTool, Text: agentFile(i, 2500+(i*977)%2500)},
	}
}

// agentConversation is an agent-shaped conversation of about n bytes: a
// long system prompt, tool descriptions, the user's task, then rounds of
// tool calls and file-sized results.
func agentConversation(n int) []Segment {
	segs := []Segment{{Source: SourceSystem, Text: strings.Repeat("You are a coding agent working in the user's repository. Follow the project's style. ", 40)}}
	for _, t := range agentTools {
		segs = append(segs, Segment{Source: SourceToolSpec, Text: t})
	}
	segs = append(segs, Segment{Source: SourceUser, Text: "The invoice totals are off by a cent sometimes. Find out why and fix it, with a test."})
	size := func() int {
		t := 0
		for _, s := range segs {
			t += len(s.Text)
		}
		return t
	}
	for i := 0; size() < n; i++ {
		segs = append(segs, agentRound(i)...)
	}
	return segs
}

// followUp is conv and one more round whose text is new (k makes it
// unique), as an agent's next turn sends it.
func followUp(conv []Segment, k int) []Segment {
	next := append(conv[:len(conv):len(conv)], agentRound(len(conv)+k)...)
	next[len(next)-1].Text = fmt.Sprintf("// turn %d\n", k) + next[len(next)-1].Text
	return next
}

// BenchmarkAgentTurn times the first stage on an agent's turn of 8, 20,
// 110 and 250 KB: the first turn (nothing of it seen: a cold cache) and a
// follow-up (the conversation so far seen once, then one new round of
// about 3 KB, different every time). The cost of a follow-up is the new
// bytes, the last pack and one hash over the rest.
//
//	go test ./guard -run '^$' -bench AgentTurn -benchtime 200x
func BenchmarkAgentTurn(b *testing.B) {
	for _, n := range []int{8 << 10, 20 << 10, 110 << 10, 250 << 10} {
		conv := agentConversation(n)
		b.Run(sizeName(n)+"/first", func(b *testing.B) {
			g := newGuard(b)
			b.SetBytes(int64(n))
			b.ReportAllocs()
			tenants := make([]string, b.N)
			for i := range tenants {
				tenants[i] = fmt.Sprint("t", i)
			}
			latencies(b, func(i int) {
				g.CheckPolicy(conv, Policy{Tenant: tenants[i]}) // a tenant never seen: nothing cached
			})
		})
		b.Run(sizeName(n)+"/followup", func(b *testing.B) {
			g := newGuard(b)
			g.Check(conv)
			next := make([][]Segment, b.N)
			for i := range next {
				next[i] = followUp(conv, i)
			}
			b.SetBytes(int64(n))
			b.ReportAllocs()
			latencies(b, func(i int) { g.Check(next[i]) })
		})
	}
}
