// Command record writes the client corpus: it starts the gateway with its
// fake vendors, puts a recording proxy in front of it, runs the
// client-conformance suite's cells (conformance/run.mjs) through the
// proxy, one client at a time, and writes every chat request's path and
// body to DIR/<client>.jsonl. Run it from the repository root, with the
// clients installed (cd conformance && npm ci), through
// scripts/record-client-corpus.
package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/gwlabs/gateway/guard/clientcorpus"
)

// A run is one client row of run.mjs's matrix on some of its columns,
// written to the client's corpus file. A client that sends the same body
// whatever the model (Gemini CLI) runs on one column.
type run struct {
	client  string   // the corpus file's name
	check   string   // run.mjs's client row
	columns []string // run.mjs's vendor columns
}

// extraColumns are the real Claude model ids Claude Code runs with (see
// conformance's TestClaudeCodeRealModelIDs).
const extraColumns = "sonnet-4-5=anthropic/claude-sonnet-4-5,haiku-4-5=anthropic/claude-haiku-4-5,openrouter-sonnet-4-5=openrouter/anthropic/claude-sonnet-4.5"

var runs = []run{
	// real Claude ids, natively and mapped; a name Claude Code does not
	// know; a non-Claude model mapped to chat completions
	{"claude-code", "claude -p", []string{"sonnet-4-5", "haiku-4-5", "openrouter-sonnet-4-5", "anthropic", "openai"}},
	{"claude-code", "claude Read", []string{"sonnet-4-5", "openai"}},
	{"claude-code", "claude Bash", []string{"sonnet-4-5"}},
	{"codex", "codex-exec", []string{"openai", "anthropic"}},
	{"codex", "codex-exec_command", []string{"openai"}},
	{"codex", "codex-apply_patch", []string{"openai"}},
	{"gemini-cli", "gemini -p", []string{"google"}},
	{"gemini-cli", "gemini run_shell_command", []string{"google"}},
	{"gemini-cli", "gemini thinking+tool", []string{"google"}},
	{"openai-agents", "agents-sdk", []string{"openai"}},
	{"ai-sdk", "ai-sdk", []string{"openai"}},
	{"openai-node", "chat.completions.stream", []string{"openai"}},
	{"openai-node", "runTools", []string{"openai"}},
	{"openai-node", "runTools non-stream", []string{"openai"}},
	{"openai-node", "responses.create", []string{"openai"}},
	{"openai-node", "responses.stream", []string{"openai"}},
	{"openai-node", "responses.tools", []string{"openai"}},
	{"anthropic-sdk", "messages.stream", []string{"anthropic"}},
	{"anthropic-sdk", "beta.messages.toolRunner", []string{"anthropic"}},
	{"google-genai", "genai.generateContent", []string{"google"}},
	{"google-genai", "genai.generateContentStream", []string{"google"}},
	{"google-genai", "genai.functionCall", []string{"google"}},
	{"google-genai", "genai.countTokens", []string{"google"}},
}

type recorder struct {
	mu    sync.Mutex
	cell  string
	seen  map[[32]byte]bool
	items []clientcorpus.Request
}

func (rc *recorder) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && clientcorpus.Shape(r.URL.Path) != nil {
			body, err := io.ReadAll(r.Body)
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			r.Body = io.NopCloser(bytes.NewReader(body))
			rc.add(r.URL.Path, body)
		} else if os.Getenv("RECORD_DEBUG") != "" {
			log.Printf("not recorded: %s %s", r.Method, r.URL.Path)
		}
		next.ServeHTTP(w, r)
	})
}

func (rc *recorder) add(path string, body []byte) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	h := sha256.Sum256(append([]byte(path+"\x00"), body...))
	if rc.seen[h] {
		return
	}
	rc.seen[h] = true
	var compact bytes.Buffer
	if json.Compact(&compact, body) != nil {
		compact.Reset()
		b, _ := json.Marshal(string(body)) // not JSON: kept as a string
		compact.Write(b)
	}
	rc.items = append(rc.items, clientcorpus.Request{Cell: rc.cell, Path: path, Body: bytes.Clone(compact.Bytes())})
}

func (rc *recorder) start(cell string) {
	rc.mu.Lock()
	rc.cell = cell
	rc.mu.Unlock()
}

func (rc *recorder) take() []clientcorpus.Request {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	out := rc.items
	rc.items = nil
	return out
}

func main() {
	out := flag.String("out", "guard/clientcorpus/testdata", "the corpus directory")
	only := flag.String("clients", "", "comma-separated corpus files to record (default: all)")
	flag.Parse()
	root, err := os.Getwd()
	if err != nil {
		log.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "conformance", "run.mjs")); err != nil {
		log.Fatal("run from the repository root")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	gwURL, key, stop, err := startGateway(ctx)
	if err != nil {
		log.Fatal(err)
	}
	defer stop()

	target, _ := url.Parse(gwURL)
	rc := &recorder{seen: map[[32]byte]bool{}}
	srv := &http.Server{Handler: rc.wrap(httputil.NewSingleHostReverseProxy(target))}
	ln, err := listen()
	if err != nil {
		log.Fatal(err)
	}
	go func() { _ = srv.Serve(ln) }()
	defer srv.Close()
	proxyURL := "http://" + ln.Addr().String()

	want := map[string]bool{}
	for _, c := range strings.Split(*only, ",") {
		if c != "" {
			want[c] = true
		}
	}
	if err := os.MkdirAll(*out, 0o755); err != nil {
		log.Fatal(err)
	}
	byClient := map[string][]clientcorpus.Request{}
	var order []string
	for _, r := range runs {
		if len(want) > 0 && !want[r.client] {
			continue
		}
		rc.start(r.check)
		cmd := exec.CommandContext(ctx, "node", "run.mjs")
		cmd.Dir = filepath.Join(root, "conformance")
		cmd.Env = append(os.Environ(), "GATEWAY_URL="+proxyURL, "GATEWAY_KEY="+key,
			"CONFORMANCE_MODELS="+extraColumns, "CONFORMANCE_VENDORS="+strings.Join(r.columns, ","),
			"CONFORMANCE_CLIENTS="+r.check)
		res, err := cmd.CombinedOutput()
		fmt.Printf("%s / %s: %s\n", r.client, r.check, lastLine(res))
		if err != nil {
			fmt.Printf("%s\n", res)
		}
		if _, ok := byClient[r.client]; !ok {
			order = append(order, r.client)
		}
		byClient[r.client] = append(byClient[r.client], rc.take()...)
	}
	for _, c := range order {
		if err := write(filepath.Join(*out, c+".jsonl"), byClient[c], root, key); err != nil {
			log.Fatal(err)
		}
		fmt.Printf("%s: %d requests\n", c, len(byClient[c]))
	}
}

// write writes the requests, one a line, with the repository's path and
// the key replaced by placeholders.
func write(file string, items []clientcorpus.Request, root, key string) error {
	var b bytes.Buffer
	for _, it := range items {
		body := bytes.ReplaceAll(it.Body, []byte(root), []byte("/repo"))
		body = bytes.ReplaceAll(body, []byte(key), []byte("gwk_corpus"))
		it.Body = body
		line, err := json.Marshal(it)
		if err != nil {
			return err
		}
		b.Write(line)
		b.WriteByte('\n')
	}
	return os.WriteFile(file, b.Bytes(), 0o644)
}

func lastLine(b []byte) string {
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	return lines[len(lines)-1]
}

var (
	listenRE = regexp.MustCompile(`gateway listening on (http://\S+)`)
	keyRE    = regexp.MustCompile(`GATEWAY_KEY=(gwk_[0-9A-Za-z]+)`)
)

// startGateway builds the gateway and runs "gateway serve --fake-vendors"
// on a free loopback port with a fresh SQLite file and no GATEWAY_*
// setting of the caller's.
func startGateway(ctx context.Context) (gwURL, key string, stop func(), err error) {
	dir, err := os.MkdirTemp("", "clientcorpus-")
	if err != nil {
		return "", "", nil, err
	}
	bin := filepath.Join(dir, "gateway")
	if out, err := exec.Command("go", "build", "-o", bin, "./cmd/gateway").CombinedOutput(); err != nil {
		return "", "", nil, fmt.Errorf("build the gateway: %v\n%s", err, out)
	}
	srv := exec.CommandContext(ctx, bin, "serve", "--fake-vendors", "--addr", "127.0.0.1:0", "--db", filepath.Join(dir, "gateway.db"))
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "GATEWAY_") {
			srv.Env = append(srv.Env, kv)
		}
	}
	srv.Env = append(srv.Env, "GATEWAY_LOG_LEVEL=warn")
	stdout, err := srv.StdoutPipe()
	if err != nil {
		return "", "", nil, err
	}
	srv.Stderr = os.Stderr
	if err := srv.Start(); err != nil {
		return "", "", nil, err
	}
	stop = func() {
		_ = srv.Process.Signal(os.Interrupt)
		_ = srv.Wait()
		_ = os.RemoveAll(dir)
	}
	sc := bufio.NewScanner(stdout)
	for sc.Scan() {
		line := sc.Text()
		if m := keyRE.FindStringSubmatch(line); m != nil {
			key = m[1]
		}
		if m := listenRE.FindStringSubmatch(line); m != nil {
			gwURL = m[1]
			break
		}
	}
	go func() { _, _ = io.Copy(io.Discard, stdout) }()
	if gwURL == "" || key == "" {
		stop()
		return "", "", nil, fmt.Errorf("the gateway did not announce its address and key")
	}
	return gwURL, key, stop, nil
}
