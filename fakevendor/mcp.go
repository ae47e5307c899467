package fakevendor

import (
	"slices"
	"strings"
)

// declaredTool finds the declared tool a [fake:call=NAME] directive
// names: NAME itself, or, when NAME starts with "*", the first declared
// tool whose name ends with the rest. Clients rename the tools of MCP
// servers with prefixes of their own (Claude Code's
// "mcp__SERVER__tool", Codex's and Gemini CLI's), so a prompt can name
// a gateway tool ("*everything__echo") whatever client carries it. -1:
// no such tool.
func declaredTool(tools []toolDecl, name string) int {
	if suffix, ok := strings.CutPrefix(name, "*"); ok && suffix != "" {
		return slices.IndexFunc(tools, func(t toolDecl) bool { return strings.HasSuffix(t.name, suffix) })
	}
	return slices.IndexFunc(tools, func(t toolDecl) bool { return t.name == name })
}
