package guard

import "strings"

// Quoted material. A developer working on security quotes attacks: the
// inputs of a test for an injection filter, the patterns of a
// blocklist under review, the example rows of a jailbreak dataset's
// README. The rules read a phrasing against the few words around it and
// miss a frame set a line or a paragraph away. So a text that names
// such a frame (framed) and whose flagged phrasing sits only inside its
// quoted material (strings in quotes, code spans and blocks, table rows,
// indented lines) is read as mentioning it: its score is held at the
// mention cap, in the grey band a second stage judges. An order outside
// the quotes is still read as one.

// frameCues name the frames that hold attacks as data (lower case).
var frameCues = []string{
	"pytest", "unittest", "test case", "parametrize", "assert ", "expect(",
	"blocklist", "blacklist", "denylist", "allowlist", "regex", "re.search", "re.compile",
	"dataset", "detector", "classifier", "filter", "guardrail", "moderation", "benchmark",
}

// framed reports whether text names a frame of frameCues.
func framed(text string) bool {
	// Only texts long enough to set a frame apart from the quote.
	if len(text) < 80 {
		return false
	}
	lower := strings.ToLower(text)
	for _, c := range frameCues {
		if strings.Contains(lower, c) {
			return true
		}
	}
	return false
}

// unquoted is text without its quoted material: fenced code blocks,
// table rows and lines indented by four spaces or a tab are dropped,
// and strings in straight or curly double quotes and backticks within a
// line are blanked. It reports whether anything was taken out.
func unquoted(text string) (string, bool) {
	var b strings.Builder
	b.Grow(len(text))
	fence, changed := false, false
	for line := range strings.Lines(text) {
		t := strings.TrimSpace(line)
		switch {
		case strings.HasPrefix(t, "```") || strings.HasPrefix(t, "~~~"):
			fence = !fence
			changed = true
			continue
		case fence, strings.HasPrefix(t, "|"), strings.HasPrefix(line, "    ") || strings.HasPrefix(line, "\t"):
			if t != "" {
				changed = true
			}
			b.WriteByte('\n')
			continue
		}
		c := blankQuotes(&b, line)
		changed = changed || c
	}
	return b.String(), changed
}

// blankQuotes writes line with the strings between matching quotes
// ("...", “...”, `...`) left out.
func blankQuotes(b *strings.Builder, line string) bool {
	changed := false
	for {
		i, open, close := -1, "", ""
		for _, q := range [][2]string{{`"`, `"`}, {"“", "”"}, {"`", "`"}} {
			if k := strings.Index(line, q[0]); k >= 0 && (i < 0 || k < i) {
				i, open, close = k, q[0], q[1]
			}
		}
		if i < 0 {
			b.WriteString(line)
			return changed
		}
		j := strings.Index(line[i+len(open):], close)
		if j < 0 {
			b.WriteString(line)
			return changed
		}
		b.WriteString(line[:i])
		b.WriteString(" ")
		line = line[i+len(open)+j+len(close):]
		changed = true
	}
}

// framedMention is r held at the mention cap when text is framed and the
// score that flags it comes only from its quoted material.
func (g *Guard) framedMention(sc *scratch, r result, text string) result {
	if r.score < g.threshold || !framed(text) {
		return r
	}
	rest, changed := unquoted(text)
	if !changed {
		return r
	}
	if strings.TrimSpace(rest) != "" {
		if rr := g.scoreWindow(sc, rest); rr.score >= g.threshold {
			return r // an order outside the quotes
		}
	}
	r.score = min(r.score, g.mentionCap())
	r.rule, r.cue, r.mentioned = "", "", true
	return r
}
