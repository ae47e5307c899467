package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"time"
)

// floorEnv, when set ("LISTEN TARGET"), makes the binary serve the floor:
// a bare reverse proxy from LISTEN to TARGET, and nothing else.
const floorEnv = "GWBENCH_FLOOR"

// serveFloor runs the bare httputil.ReverseProxy the gateway is compared
// with: the same loopback hops, no work of its own.
func serveFloor(spec string) error {
	var listen, target string
	if _, err := fmt.Sscan(spec, &listen, &target); err != nil {
		return fmt.Errorf("%s: want \"LISTEN TARGET\": %w", floorEnv, err)
	}
	u, err := url.Parse(target)
	if err != nil {
		return err
	}
	rp := httputil.NewSingleHostReverseProxy(u)
	rp.Transport = &http.Transport{MaxIdleConns: 1024, MaxIdleConnsPerHost: 1024, IdleConnTimeout: 30 * time.Second}
	rp.FlushInterval = -1 // flush every write, as a relaying gateway must for streams
	srv := &http.Server{Addr: listen, Handler: floorHandler(rp), ReadHeaderTimeout: 10 * time.Second}
	return srv.ListenAndServe()
}

// floorHandler reads the request body whole before proxying it, as the
// gateway does. Streaming the server's own body into the transport
// races: once the vendor answers, writing the answer's headers drains
// and closes the inbound body, and the transport's read after the
// declared length (its check that the body was not longer) can land
// after that close, fail the request's write, and make the transport
// close the vendor connection under the answer it is still reading;
// the proxy then aborts the client's stream (unexpected EOF) and logs
// "read error during body copy: use of closed network connection". A
// loaded machine loses that race now and then.
func floorHandler(rp http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// One buffer of the announced size: the floor's cost of
		// buffering is one allocation and one copy a request.
		var b bytes.Buffer
		if n := r.ContentLength; n > 0 && n <= 64<<20 {
			b.Grow(int(n) + bytes.MinRead)
		}
		if _, err := b.ReadFrom(r.Body); err != nil {
			http.Error(w, "read body: "+err.Error(), http.StatusBadRequest)
			return
		}
		r.Body, r.ContentLength = io.NopCloser(bytes.NewReader(b.Bytes())), int64(b.Len())
		rp.ServeHTTP(w, r)
	})
}

// proc is a started target process.
type proc struct {
	cmd  *exec.Cmd
	url  string
	pid  int
	logs *os.File
}

func (p *proc) stop() {
	if p == nil || p.cmd.Process == nil {
		return
	}
	p.cmd.Process.Signal(os.Interrupt)
	done := make(chan struct{})
	go func() { p.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		p.cmd.Process.Kill()
		<-done
	}
	if p.logs != nil {
		p.logs.Close()
	}
}

// freeAddr returns a loopback address nothing listens on right now.
func freeAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

// pinning returns the command prefix that pins a process to cpu, or nil
// when taskset or a second CPU is missing.
func pinning(cpu int) []string {
	if runtime.NumCPU() < 2 {
		return nil
	}
	ts, err := exec.LookPath("taskset")
	if err != nil {
		return nil
	}
	return []string{ts, "-c", strconv.Itoa(cpu)}
}

// pinSelf pins this process (every thread) to cpu; it reports whether it
// could.
func pinSelf(cpu int) bool {
	ts, err := exec.LookPath("taskset")
	if err != nil || runtime.NumCPU() < 2 {
		return false
	}
	return exec.Command(ts, "-a", "-p", "-c", strconv.Itoa(cpu), strconv.Itoa(os.Getpid())).Run() == nil
}

// start runs argv with env added, logging to a file in dir, and waits
// until GET url+ready answers 200.
func start(ctx context.Context, dir, name string, argv, env []string, url, ready string) (*proc, error) {
	logs, err := os.Create(filepath.Join(dir, name+".log"))
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdout, cmd.Stderr = logs, logs
	if err := cmd.Start(); err != nil {
		logs.Close()
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	p := &proc{cmd: cmd, url: url, pid: cmd.Process.Pid, logs: logs}
	deadline := time.Now().Add(30 * time.Second)
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url+ready, nil)
		if resp, err := http.DefaultClient.Do(req); err == nil {
			resp.Body.Close()
			if ready == "" || resp.StatusCode == http.StatusOK {
				return p, nil
			}
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			p.stop()
			b, _ := os.ReadFile(logs.Name())
			return nil, fmt.Errorf("%s did not become ready: %.500s", name, b)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// startFloor starts the bare proxy (this binary, re-run with floorEnv),
// pinned when pin is not nil.
func startFloor(ctx context.Context, dir string, pin []string, mockURL string) (*proc, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	addr, err := freeAddr()
	if err != nil {
		return nil, err
	}
	argv := append(append([]string{}, pin...), self)
	if isTestBinary() {
		argv = append(argv, "-test.run=^$")
	}
	return start(ctx, dir, "floor", argv, []string{floorEnv + "=" + addr + " " + mockURL}, "http://"+addr, "")
}

// gatewayOpts says how to run the gateway under test.
type gatewayOpts struct {
	Binary   string // built gateway
	Database string // SQLite file or postgres:// URL
	Redis    string // redis:// URL, or empty
	Pprof    string // GATEWAY_PPROF_ADDR, or empty
	Key      string // a key already in the store (another instance's); empty: create one
	Env      []string
	Name     string // of the log file; empty: "gateway"
}

// startGateway provisions an account and key through the binary's admin
// command and serves it against the mock, pinned when pin is not nil. It
// returns the process and the key.
func startGateway(ctx context.Context, dir string, pin []string, o gatewayOpts, mockURL string) (*proc, string, error) {
	env := []string{
		"GATEWAY_DATABASE_URL=" + o.Database,
		"GATEWAY_OPENAI_BASE_URL=" + mockURL + "/v1", "GATEWAY_OPENAI_API_KEY=mock",
		"GATEWAY_ANTHROPIC_BASE_URL=" + mockURL, "GATEWAY_ANTHROPIC_API_KEY=mock",
		"GATEWAY_GOOGLE_BASE_URL=" + mockURL, "GATEWAY_GOOGLE_API_KEY=mock",
	}
	if o.Redis != "" {
		env = append(env, "GATEWAY_REDIS_URL="+o.Redis)
	}
	if o.Pprof != "" {
		env = append(env, "GATEWAY_PPROF_ADDR="+o.Pprof)
	}
	env = append(env, o.Env...)
	name := o.Name
	if name == "" {
		name = "gateway"
	}
	addr, err := freeAddr()
	if err != nil {
		return nil, "", err
	}
	argv := append(append([]string{}, pin...), o.Binary, "serve", "--addr", addr)
	if o.Key != "" {
		p, err := start(ctx, dir, name, argv, env, "http://"+addr, "/readyz")
		return p, o.Key, err
	}
	// A key whose limits the load cannot reach: the limiter still runs.
	var out bytes.Buffer
	admin := exec.CommandContext(ctx, o.Binary, "keys", "create", "--account", "gwbench-"+strconv.FormatInt(time.Now().UnixNano(), 36),
		"--balance-usd", "1000000", "--rpm", "1000000000", "--tpm", "1000000000000", "--json")
	admin.Env = append(os.Environ(), env...)
	admin.Stdout = &out
	admin.Stderr = &out
	if err := admin.Run(); err != nil {
		return nil, "", fmt.Errorf("keys create: %w: %s", err, out.Bytes())
	}
	var k struct {
		Key string `json:"key"`
	}
	if err := json.Unmarshal(out.Bytes(), &k); err != nil || k.Key == "" {
		return nil, "", fmt.Errorf("keys create: unexpected output %q", out.Bytes())
	}
	p, err := start(ctx, dir, name, argv, env, "http://"+addr, "/readyz")
	return p, k.Key, err
}

// buildGateway builds ./cmd/gateway of the module in the working
// directory (or above) into dir.
func buildGateway(ctx context.Context, dir string) (string, error) {
	root, err := moduleRoot()
	if err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "gateway")
	cmd := exec.CommandContext(ctx, "go", "build", "-o", bin, "./cmd/gateway")
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build ./cmd/gateway: %w: %s", err, out)
	}
	return bin, nil
}

func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod above the working directory")
		}
		dir = parent
	}
}
