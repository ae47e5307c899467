// Package conformance runs the current official clients, unchanged, against
// the gateway and its in-project fake vendors: Claude Code
// (non-interactively, "claude -p") and the Node SDKs' helpers
// (openai: chat.completions.stream() and runTools; @anthropic-ai/sdk:
// messages.stream() and beta.messages.toolRunner) on the C and M routes;
// on the Responses route (R) Codex CLI ("codex exec" with a plain prompt,
// an exec_command round trip and an apply_patch file edit in its
// workspace-write sandbox), openai-node's responses.create,
// responses.stream and a function-tool loop (previous_response_id, then
// store false with encrypted reasoning), the OpenAI Agents SDK running an
// agent with a function tool, and the Vercel AI SDK's generateText and
// streamText with a tool; on the Gemini endpoints (G) Google's
// @google/genai (generateContent, generateContentStream, a function-call
// round trip, countTokens) and Gemini CLI ("gemini -p ... -o json" with
// the gemini-api-key auth and GOOGLE_GEMINI_BASE_URL at the gateway: a
// prompt, a run_shell_command round trip with a file written in its
// working folder under --approval-mode yolo, and a thinking turn that
// calls read_file); and embeddings: openai-node's embeddings.create
// (floats, base64 as sent and as the SDK decodes it), @google/genai's
// embedContent (one content, a batch in order) and the AI SDK's embed and
// embedMany (the prefixes without embeddings answer the 400 naming those
// that do); all on every vendor prefix. The clients are
// pinned in package-lock.json and installed with "npm ci" in this
// directory; run.mjs holds the checks, runs them concurrently and prints
// the matrix. TestCodexRequest checks what Codex sends on /v1/responses
// and that the native openai/ route passes it on unchanged;
// BenchmarkCodexTTFT measures Codex's time to first token, direct and
// through the gateway.
//
// The Go test builds the gateway, starts "gateway serve --fake-vendors" on
// a free loopback port with a fresh SQLite file, and runs run.mjs against
// it. Under CI (CI=true) missing Node modules or a missing client fail
// the test; elsewhere the test skips with a message saying how to install
// them.
package conformance

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

// missing fails the test under CI and skips it elsewhere.
func missing(t *testing.T, format string, args ...any) {
	t.Helper()
	msg := fmt.Sprintf(format, args...)
	if os.Getenv("CI") == "true" {
		t.Fatalf("%s (CI must run the client-conformance suite)", msg)
	}
	t.Skipf("SKIPPING the client-conformance suite: %s. Install the clients with: cd conformance && npm ci", msg)
}

var (
	listenRE = regexp.MustCompile(`gateway listening on (http://\S+)`)
	keyRE    = regexp.MustCompile(`GATEWAY_KEY=(gwk_[0-9A-Za-z]+)`)
	resultRE = regexp.MustCompile(`(?m)^(\d+) passed, (\d+) failed$`)
)

func TestClients(t *testing.T) {
	if testing.Short() {
		t.Skip("the client-conformance suite is not short")
	}
	node, err := exec.LookPath("node")
	if err != nil {
		missing(t, "node is not installed")
	}
	for _, m := range []string{"openai", "@anthropic-ai/sdk", "@anthropic-ai/claude-code", "@openai/codex", "@openai/agents", "ai", "@ai-sdk/openai", "zod", "@google/genai", "@google/gemini-cli"} {
		if _, err := os.Stat(filepath.Join("node_modules", m, "package.json")); err != nil {
			missing(t, "node_modules/%s is not installed", m)
		}
	}

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	url, key, logs := startGateway(t, ctx)

	run := exec.CommandContext(ctx, node, "run.mjs")
	run.Env = append(os.Environ(), "GATEWAY_URL="+url, "GATEWAY_KEY="+key)
	out, err := run.CombinedOutput()
	t.Logf("client-conformance suite:\n%s", out)
	m := resultRE.FindSubmatch(out)
	if m == nil {
		t.Fatalf("the suite did not finish with an \"N passed, M failed\" line: %v\ngateway log:\n%s", err, logs.String())
	}
	if err != nil {
		t.Fatalf("the suite failed (%s passed, %s failed; cells not in expected-failures.txt failed, or listed ones passed): %v", m[1], m[2], err)
	}
}

// startGateway builds the gateway and runs "gateway serve
// --fake-vendors" on a free loopback port with a fresh SQLite file (and
// env added to its environment) until the test ends. It returns the
// gateway's URL, the demo key it created and its log.
func startGateway(tb testing.TB, ctx context.Context, env ...string) (url, key string, logs *lockedBuffer) {
	tb.Helper()
	dir := tb.TempDir()
	bin := filepath.Join(dir, "gateway")
	build := exec.Command("go", "build", "-o", bin, "../cmd/gateway")
	if out, err := build.CombinedOutput(); err != nil {
		tb.Fatalf("build the gateway: %v\n%s", err, out)
	}
	srv := exec.CommandContext(ctx, bin, "serve", "--fake-vendors", "--addr", "127.0.0.1:0", "--db", filepath.Join(dir, "gateway.db"))
	srv.Env = append(gatewayEnv(), env...)
	stdout, err := srv.StdoutPipe()
	if err != nil {
		tb.Fatal(err)
	}
	logs = &lockedBuffer{}
	srv.Stderr = logs
	if err := srv.Start(); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		_ = srv.Process.Signal(os.Interrupt)
		done := make(chan struct{})
		go func() { _ = srv.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = srv.Process.Kill()
			<-done
		}
	})
	url, key = readAnnouncement(tb, stdout)
	go func() { _, _ = io.Copy(io.Discard, stdout) }()
	return url, key, logs
}

// lockedBuffer is a log buffer safe to read while the process writes it.
type lockedBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// gatewayEnv is the environment without any GATEWAY_* setting of the
// caller's, so that every vendor is faked and nothing real is reached.
func gatewayEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "GATEWAY_") {
			env = append(env, kv)
		}
	}
	return append(env, "GATEWAY_LOG_LEVEL=warn")
}

// readAnnouncement reads the gateway's start-up lines up to its address,
// returning the address and the demo key it created.
func readAnnouncement(t testing.TB, r io.Reader) (url, key string) {
	t.Helper()
	sc := bufio.NewScanner(r)
	var seen strings.Builder
	for sc.Scan() {
		line := sc.Text()
		seen.WriteString(line + "\n")
		if m := keyRE.FindStringSubmatch(line); m != nil {
			key = m[1]
		}
		if m := listenRE.FindStringSubmatch(line); m != nil {
			url = m[1]
			break
		}
	}
	if url == "" || key == "" {
		t.Fatalf("the gateway did not announce its address and demo key:\n%s", seen.String())
	}
	return url, key
}

// TestClaudeCodeThroughFailingRoute runs Claude Code (a prompt, a Read
// and a Bash tool round trip) through an operator route whose first
// member, anthropic/, cannot be reached: every turn is served by the
// route's fallback, openai/ (mapped from Messages), after the first
// member's retries or at once while its breaker is open.
func TestClaudeCodeThroughFailingRoute(t *testing.T) {
	if testing.Short() {
		t.Skip("the client-conformance suite is not short")
	}
	node, err := exec.LookPath("node")
	if err != nil {
		missing(t, "node is not installed")
	}
	if _, err := os.Stat(filepath.Join("node_modules", "@anthropic-ai/claude-code", "package.json")); err != nil {
		missing(t, "node_modules/@anthropic-ai/claude-code is not installed")
	}
	cfg := filepath.Join(t.TempDir(), "gateway.toml")
	if err := os.WriteFile(cfg, []byte("[routes.\"gw/code\"]\nmodels = [\"anthropic/claude-sonnet-5-5\", \"openai/gpt-6-sol\"]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	// A configured key makes anthropic/ the "real" vendor, at an address
	// where nothing listens.
	url, key, logs := startGateway(t, ctx, "GATEWAY_CONFIG="+cfg,
		"GATEWAY_ANTHROPIC_API_KEY=unreachable", "GATEWAY_ANTHROPIC_BASE_URL=http://127.0.0.1:1",
		"GATEWAY_RETRY_BASE=10ms")
	run := exec.CommandContext(ctx, node, "run.mjs")
	run.Env = append(os.Environ(), "GATEWAY_URL="+url, "GATEWAY_KEY="+key,
		"CONFORMANCE_ROUTE=gw/code", "CONFORMANCE_VENDORS=route", "CONFORMANCE_CLIENTS=claude -p,claude Read,claude Bash")
	out, err := run.CombinedOutput()
	t.Logf("Claude Code through gw/code:\n%s", out)
	m := resultRE.FindSubmatch(out)
	if m == nil || err != nil || string(m[1]) != "3" || string(m[2]) != "0" {
		t.Fatalf("want 3 passed, 0 failed (%v)\ngateway log:\n%s", err, logs.String())
	}
}

// TestClaudeCodeRealModelIDs runs Claude Code (a prompt, a Read and a
// Bash round trip) with real Claude model ids of the rate card, natively
// on anthropic/ and mapped from Messages to chat completions on
// openrouter/. Claude Code sends other system and tool texts for a model
// it knows (its Agent tool's "Forks are cheap because they share your
// prompt cache." among them) than for an unknown name, and the guard must
// pass them.
func TestClaudeCodeRealModelIDs(t *testing.T) {
	if testing.Short() {
		t.Skip("the client-conformance suite is not short")
	}
	node, err := exec.LookPath("node")
	if err != nil {
		missing(t, "node is not installed")
	}
	if _, err := os.Stat(filepath.Join("node_modules", "@anthropic-ai/claude-code", "package.json")); err != nil {
		missing(t, "node_modules/@anthropic-ai/claude-code is not installed")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	url, key, logs := startGateway(t, ctx)
	run := exec.CommandContext(ctx, node, "run.mjs")
	run.Env = append(os.Environ(), "GATEWAY_URL="+url, "GATEWAY_KEY="+key,
		"CONFORMANCE_MODELS="+claudeRealModels, "CONFORMANCE_VENDORS=sonnet-4-5,haiku-4-5,openrouter-sonnet-4-5",
		"CONFORMANCE_CLIENTS=claude -p,claude Read,claude Bash")
	out, err := run.CombinedOutput()
	t.Logf("Claude Code with real model ids:\n%s", out)
	m := resultRE.FindSubmatch(out)
	if m == nil || err != nil || string(m[1]) != "9" || string(m[2]) != "0" {
		t.Fatalf("want 9 passed, 0 failed (%v)\ngateway log:\n%s", err, logs.String())
	}
}

// claudeRealModels are run.mjs's extra columns for real Claude model ids
// (the rate card's anthropic entries and OpenRouter's listing).
const claudeRealModels = "sonnet-4-5=anthropic/claude-sonnet-4-5,haiku-4-5=anthropic/claude-haiku-4-5,openrouter-sonnet-4-5=openrouter/anthropic/claude-sonnet-4.5"
