package conformance

import (
	"context"
	"fmt"
	"net"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gwlabs/gateway/mcp/mcptest"
)

// TestMCP runs /mcp against the official checks, with the gateway in
// front of three upstream MCP servers: mcptest over streamable HTTP
// ("conf": the resources and prompts the conformance suite reads), and
// the reference server-everything over streamable HTTP ("everything")
// and over stdio ("local", a process the gateway starts):
//
//   - the MCP conformance suite (@modelcontextprotocol/conformance, its
//     command line), every server scenario; those that do not apply to a
//     gateway are listed with the reason in mcp-expected-failures.yml,
//     and a listed one that passes fails the run;
//   - Claude Code (--mcp-config naming /mcp with the key header, stdio
//     and HTTP upstreams), Codex CLI ([mcp_servers] in its config.toml)
//     and Gemini CLI (mcpServers in its settings.json), each listing and
//     calling an upstream tool while it chats through the gateway against
//     the fake vendors (run.mjs's MCP cells, mcp.mjs).
func TestMCP(t *testing.T) {
	if testing.Short() {
		t.Skip("the client-conformance suite is not short")
	}
	node, err := exec.LookPath("node")
	if err != nil {
		missing(t, "node is not installed")
	}
	suite := filepath.Join("node_modules", "@modelcontextprotocol", "conformance", "dist", "index.js")
	everything := filepath.Join("node_modules", "@modelcontextprotocol", "server-everything", "dist", "index.js")
	for _, f := range []string{suite, everything} {
		if _, err := os.Stat(f); err != nil {
			missing(t, "%s is not installed", f)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	here, _ := os.Getwd()
	everything = filepath.Join(here, everything)

	conf := httptest.NewServer(mcptest.New("conf").Handler())
	t.Cleanup(conf.Close)
	port := freePort(t)
	ev := exec.CommandContext(ctx, node, everything, "streamableHttp")
	ev.Env = append(os.Environ(), "PORT="+port)
	if err := ev.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ev.Process.Kill(); _ = ev.Wait() })
	waitListening(t, "127.0.0.1:"+port)

	cfg := filepath.Join(t.TempDir(), "gateway.toml")
	toml := fmt.Sprintf(`[mcp.servers.conf]
url = %q

[mcp.servers.everything]
url = "http://127.0.0.1:%s/mcp"

[mcp.servers.local]
command = [%q, %q, "stdio"]
`, conf.URL, port, node, everything)
	if err := os.WriteFile(cfg, []byte(toml), 0o600); err != nil {
		t.Fatal(err)
	}
	gwURL, key, logs := startGateway(t, ctx, "GATEWAY_CONFIG="+cfg)

	t.Run("suite", func(t *testing.T) {
		// The suite's client sends no headers of its own: a loopback
		// proxy adds the key, and passes everything else on.
		target, _ := url.Parse(gwURL)
		keyed := httptest.NewServer(&httputil.ReverseProxy{Rewrite: func(r *httputil.ProxyRequest) {
			r.SetURL(target)
			r.Out.Host = r.In.Host
			r.Out.Header.Set("Authorization", "Bearer "+key)
		}, FlushInterval: -1})
		t.Cleanup(keyed.Close)
		run := exec.CommandContext(ctx, node, "--import", filepath.Join(here, "node20.mjs"), filepath.Join(here, suite),
			"server", "--url", keyed.URL+"/mcp", "--expected-failures", filepath.Join(here, "mcp-expected-failures.yml"))
		run.Dir = t.TempDir() // its results/ folder
		out, err := run.CombinedOutput()
		t.Logf("MCP conformance suite:\n%s", tail(out, 6000))
		if err != nil {
			t.Fatalf("the MCP conformance suite failed (a scenario not in mcp-expected-failures.yml failed, or a listed one passed): %v\ngateway log:\n%s", err, tail([]byte(logs.String()), 4000))
		}
	})

	t.Run("clients", func(t *testing.T) {
		run := exec.CommandContext(ctx, node, "run.mjs")
		run.Env = append(os.Environ(), "GATEWAY_URL="+gwURL, "GATEWAY_KEY="+key, "CONFORMANCE_MCP=1", "CONFORMANCE_VENDORS=anthropic",
			"CONFORMANCE_CLIENTS=claude mcp stdio,claude mcp http,codex mcp,gemini mcp")
		out, err := run.CombinedOutput()
		t.Logf("clients through /mcp:\n%s", out)
		m := resultRE.FindSubmatch(out)
		if m == nil || err != nil || string(m[2]) != "0" || string(m[1]) != "4" {
			t.Fatalf("want 4 passed, 0 failed (%v)\ngateway log:\n%s", err, tail([]byte(logs.String()), 4000))
		}
	})
}

func freePort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	_, port, _ := net.SplitHostPort(l.Addr().String())
	return port
}

// waitListening waits until something accepts connections at addr.
func waitListening(t *testing.T, addr string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if c, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
			c.Close()
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("nothing listens at %s", addr)
}

func tail(b []byte, n int) string {
	s := string(b)
	if len(s) > n {
		s = "…" + s[len(s)-n:]
	}
	return strings.TrimSpace(s)
}
