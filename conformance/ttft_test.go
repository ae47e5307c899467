package conformance

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/gwlabs/gateway/fakevendor"
)

// BenchmarkCodexTTFT measures Codex CLI's time to first token ("codex
// exec" with a plain prompt): the time from its request reaching a
// recording proxy to the first response.output_text.delta event passing
// back through it, against the fake OpenAI Responses API called directly
// and through the gateway (the native openai/ route to the same fake, and
// the mapped anthropic/ route). The proxy sits in front of both, so its
// cost is in every arm. It reports the median over b.N runs as ttft-ms,
// and the median ratio to the direct arm (run the direct arm first):
//
//	(cd conformance && npm ci) && go test ./conformance/ -run '^$' -bench CodexTTFT -benchtime 15x
func BenchmarkCodexTTFT(b *testing.B) {
	codex := codexBinary()
	if codex == "" {
		b.Skip("the Codex binary is not installed (cd conformance && npm ci)")
	}
	fake, err := fakevendor.Start()
	if err != nil {
		b.Fatal(err)
	}
	defer fake.Close()

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// The openai vendor is the fake started here (a configured key wins
	// over --fake-vendors), so both arms reach the same fake.
	gwURL, key, _ := startGateway(b, ctx, "GATEWAY_OPENAI_BASE_URL="+fake.BaseURL("openai"), "GATEWAY_OPENAI_API_KEY="+fake.APIKey("openai"))

	arms := []struct {
		name, target, base, model, key string
	}{
		{"direct", fake.URL(), "/openai/v1", "gpt-6-sol", fake.APIKey("openai")},
		{"gateway-openai", gwURL, "/v1", "openai/gpt-6-sol", key},
		{"gateway-anthropic", gwURL, "/v1", "anthropic/claude-sonnet-5-5", key},
	}
	var direct float64
	for _, a := range arms {
		b.Run(a.name, func(b *testing.B) {
			p := newTTFTProxy(b, a.target)
			var ttfts []time.Duration
			for range b.N {
				p.reset()
				runCodexOnce(b, codex, p.url+a.base, a.model, a.key)
				t, ok := p.first()
				if !ok {
					b.Fatal("no output_text.delta passed the proxy")
				}
				ttfts = append(ttfts, t)
			}
			slices.Sort(ttfts)
			med := float64(ttfts[len(ttfts)/2].Microseconds()) / 1000
			b.ReportMetric(med, "ttft-ms")
			if a.name == "direct" {
				direct = med
			} else if direct > 0 {
				b.ReportMetric(med/direct, "x-direct")
			}
		})
	}
}

// ttftProxy forwards to a target and records, for the last Responses
// call, the time from the request's arrival to the first output text
// delta in the answer.
type ttftProxy struct {
	url string
	mu  sync.Mutex
	ttf []time.Duration
}

func newTTFTProxy(b *testing.B, target string) *ttftProxy {
	u, err := url.Parse(target)
	if err != nil {
		b.Fatal(err)
	}
	p := &ttftProxy{}
	rp := httputil.NewSingleHostReverseProxy(u)
	rp.FlushInterval = -1
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		w = &deltaWatcher{ResponseWriter: w, seen: func() {
			p.mu.Lock()
			p.ttf = append(p.ttf, time.Since(start))
			p.mu.Unlock()
		}}
		rp.ServeHTTP(w, r)
	}))
	b.Cleanup(hs.Close)
	p.url = hs.URL
	return p
}

func (p *ttftProxy) reset() {
	p.mu.Lock()
	p.ttf = nil
	p.mu.Unlock()
}

// first returns the TTFT of the run's first call that streamed text.
func (p *ttftProxy) first() (time.Duration, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.ttf) == 0 {
		return 0, false
	}
	return p.ttf[0], true
}

// deltaWatcher calls seen once, when the first output text delta event is
// written.
type deltaWatcher struct {
	http.ResponseWriter
	buf  []byte
	done bool
	seen func()
}

var deltaEvent = []byte("response.output_text.delta")

func (d *deltaWatcher) Write(p []byte) (int, error) {
	if !d.done {
		d.buf = append(d.buf, p...)
		if bytes.Contains(d.buf, deltaEvent) {
			d.done = true
			d.buf = nil
			d.seen()
		} else if len(d.buf) > len(deltaEvent) {
			d.buf = d.buf[len(d.buf)-len(deltaEvent):]
		}
	}
	return d.ResponseWriter.Write(p)
}

func (d *deltaWatcher) Flush() {
	if f, ok := d.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// runCodexOnce runs "codex exec" once with a provider at base.
func runCodexOnce(b *testing.B, codex, base, model, key string) {
	home := b.TempDir()
	cfg := fmt.Sprintf("model = %q\nmodel_provider = \"gw\"\n[model_providers.gw]\nname = \"gw\"\nbase_url = %q\nenv_key = \"GW_KEY\"\nwire_api = \"responses\"\nrequest_max_retries = 0\nstream_max_retries = 0\n", model, base)
	if err := os.WriteFile(filepath.Join(home, "config.toml"), []byte(cfg), 0o600); err != nil {
		b.Fatal(err)
	}
	cmd := exec.Command(codex, "exec", "--skip-git-repo-check", "Say hi")
	cmd.Dir = home
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "CODEX_HOME=" + home, "GW_KEY=" + key}
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("codex exec: %v\n%s", err, out)
	}
}

// codexBinary returns the Codex native binary npm installed, or "".
func codexBinary() string {
	arch := map[string]string{"amd64": "x86_64", "arm64": "aarch64"}[runtime.GOARCH]
	npmArch := map[string]string{"amd64": "x64", "arm64": "arm64"}[runtime.GOARCH]
	for _, libc := range []string{"musl", "gnu"} {
		p := filepath.Join("node_modules", "@openai", "codex-"+runtime.GOOS+"-"+npmArch, "vendor", arch+"-unknown-"+runtime.GOOS+"-"+libc, "bin", "codex")
		if st, err := os.Stat(p); err == nil && st.Size() > 1<<20 {
			abs, err := filepath.Abs(p)
			if err != nil {
				return ""
			}
			return abs
		}
	}
	return ""
}
