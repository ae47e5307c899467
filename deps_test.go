package gw_test

import (
	"go/build"
	"strings"
	"testing"
)

const module = "github.com/gwlabs/gateway"

// allowed lists, for the packages that must stay small, every import of
// this module or outside the standard library they may have, and why the
// line is drawn there. Imports point down the layers: the vocabulary at
// the root, policies and wire formats at the edge, wiring only in cmd.
var allowed = map[string]struct {
	why     string
	imports []string
}{
	".":                 {"the root package is the vocabulary: standard library only", nil},
	"sse":               {"the SSE codec depends on nothing of ours", nil},
	"proxy":             {"proxy runs the policies over gw interfaces: no HTTP server, vendor, wire format or database", []string{module, module + "/internal/id", module + "/internal/outlimit", module + "/internal/billable", module + "/internal/rawjson", module + "/guard/leak"}},
	"internal/billable": {"finding billable features is reading JSON", []string{module, module + "/internal/rawjson"}},
	"route":             {"routing is pure computation over the vocabulary", []string{module}},
	"auth":              {"keys are checked through a lookup interface", []string{module}},
	"ratecard":          {"the rate card is data", nil},
	"billing":           {"pricing is computation over the vocabulary and the card", []string{module, module + "/ratecard"}},
	"guard":             {"the guard is pure computation", []string{module}},
	"runs":              {"runs are read from headers and reported over gw.RunStore: no server, vendor or database", []string{module}},
	"convstate":         {"client state is kept through a small store interface: no HTTP, vendor or database", []string{module, module + "/internal/rawjson"}},
	"tracing": {"OpenTelemetry stays at the edge: proxy and server see only proxy.Tracer",
		[]string{module, module + "/proxy", "go.opentelemetry.io/otel/attribute", "go.opentelemetry.io/otel/codes",
			"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp", "go.opentelemetry.io/otel/propagation",
			"go.opentelemetry.io/otel/sdk/resource", "go.opentelemetry.io/otel/sdk/trace", "go.opentelemetry.io/otel/trace"}},
	"fakevendor":  {"the fakes impersonate vendors independently of the gateway; their reports bill at the rate card's prices (data) by default", []string{module, module + "/ratecard"}},
	"cmd/gateway": {"the binary only stamps its version and runs the command line", []string{module + "/internal/cli"}},
	"optimize": {"the directive is text, byte patching and a token count (the embedded o200k tables); proxy reaches it through an interface",
		[]string{module, module + "/internal/rawjson", "github.com/tiktoken-go/tokenizer/codec", "golang.org/x/sync/singleflight"}},
}

// banned lists imports that would couple packages that must stay apart.
var banned = map[string]map[string]string{
	"shape/openai":    {module + "/shape/anthropic": "shapes meet only through gw"},
	"shape/anthropic": {module + "/shape/openai": "shapes meet only through gw"},
	"provider/openai": {
		module + "/provider/anthropic": "vendors do not import each other",
		module + "/provider/google":    "vendors do not import each other",
	},
	"provider/anthropic": {
		module + "/provider/openai": "vendors do not import each other",
		module + "/provider/google": "vendors do not import each other",
	},
	"provider/google": {
		module + "/provider/openai":    "vendors do not import each other",
		module + "/provider/anthropic": "vendors do not import each other",
		module + "/shape/openai":       "Gemini maps to the canonical types only",
		module + "/shape/anthropic":    "Gemini maps to the canonical types only",
	},
	"sqlite":   {module + "/postgres": "stores are independent"},
	"postgres": {module + "/sqlite": "stores are independent"},
	"chat": {
		module + "/sqlite":   "the lifecycle reaches the store only through proxy",
		module + "/postgres": "the lifecycle reaches the store only through proxy",
		module + "/guard":    "the guard is wired in cmd",
		module + "/billing":  "billing is wired in cmd",
		module + "/server":   "server hands requests to the lifecycle, not the other way",
	},
	"internal/app": {
		module + "/internal/cli": "the command line sits on the wiring, not under it",
	},
	"mcp": {
		module + "/sqlite":   "the MCP endpoint reaches the store through proxy and its own small interfaces",
		module + "/postgres": "the MCP endpoint reaches the store through proxy and its own small interfaces",
		module + "/guard":    "the guard is wired in cmd and reached through proxy",
		module + "/chat":     "tool calls are a lifecycle of their own beside chat, sharing proxy's steps",
		module + "/server":   "server hands /mcp to the endpoint, not the other way",
	},
	"internal/clitest": {
		module + "/internal/cli": "the command line's own tests use clitest: it runs the command it is given",
	},
	"internal/cli": {
		module + "/sqlite":   "the commands open the store through app.OpenStore",
		module + "/postgres": "the commands open the store through app.OpenStore",
		module + "/server":   "the serve command is app.RunServer",
	},
	"server": {
		module + "/sqlite":   "server reaches the store only through proxy",
		module + "/postgres": "server reaches the store only through proxy",
		module + "/guard":    "the guard is wired in cmd",
		module + "/billing":  "billing is wired in cmd",
	},
}

func isStdlib(imp string) bool { return !strings.Contains(strings.SplitN(imp, "/", 2)[0], ".") }

func TestDependencies(t *testing.T) {
	for dir, rule := range allowed {
		pkg, err := build.ImportDir(dir, 0)
		if err != nil {
			t.Fatalf("%s: %v", dir, err)
		}
		ok := map[string]bool{}
		for _, imp := range rule.imports {
			ok[imp] = true
		}
		for _, imp := range pkg.Imports {
			if !isStdlib(imp) && !ok[imp] {
				t.Errorf("%s imports %s: %s", dir, imp, rule.why)
			}
		}
	}
	for dir, rules := range banned {
		pkg, err := build.ImportDir(dir, 0)
		if err != nil {
			t.Fatalf("%s: %v", dir, err)
		}
		for _, imp := range pkg.Imports {
			if why, bad := rules[imp]; bad {
				t.Errorf("%s imports %s: %s", dir, imp, why)
			}
		}
	}
}

// The end-to-end suites are a package of test files only, so nothing
// builds on them, and they reach the gateway through what internal/app
// and internal/cli export (Go keeps the rest out of reach).
func TestEndToEndIsOnlyTests(t *testing.T) {
	pkg, err := build.ImportDir("e2e", 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(pkg.GoFiles) != 0 {
		t.Errorf("e2e has non-test files %v: the suites' helpers are test files", pkg.GoFiles)
	}
	want := map[string]bool{module + "/internal/app": false, module + "/internal/cli": false}
	for _, imp := range pkg.TestImports {
		if _, ok := want[imp]; ok {
			want[imp] = true
		}
	}
	for imp, ok := range want {
		if !ok {
			t.Errorf("e2e does not import %s: the suites drive the gateway through it", imp)
		}
	}
}
