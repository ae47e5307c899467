// Command gwbench is the gateway's load harness: it runs the real gateway
// binary and a bare reverse proxy (the floor) side by side against a fast
// mock vendor on loopback, and writes a Markdown table of their figures
// and ratios.
//
//	go run ./cmd/gwbench              # short run, well under two minutes
//	go run ./cmd/gwbench -full        # the whole matrix
//	go run ./cmd/gwbench -pg postgres://... -redis redis://...   # adds the scale-out store
//
// The mock vendor (OpenAI, Anthropic and Gemini wire formats, JSON and
// SSE, with a configurable latency, chunk count and spacing) and the load
// generator run in this process; the floor (httputil.ReverseProxy, this
// binary re-run) and the gateway (go build ./cmd/gateway, started with a
// temporary SQLite file, an account and key provisioned through its admin
// command, every behaviour on) run as processes of their own, so that
// their CPU time and resident memory can be read from /proc. With taskset
// and two CPUs, the targets run on CPU 1 and this process on CPU 0.
//
// Each scenario runs on both targets, the two alternating, for -repeats
// rounds: an open-loop constant rate (latency from each request's
// scheduled time, so queueing shows), N concurrent streams (time to first
// byte), and a search for the highest rate served with p99 under 50 ms.
// Absolute figures move with the machine's load; compare the ratios of
// one run, and note the load average the table starts with.
//
// Everything is bounded: loopback only, at most 4096 requests in flight,
// 10 s per request, and the processes are stopped at the end.
package main

import (
	"cmp"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Config is one harness run.
type Config struct {
	Gateway   string // prebuilt gateway binary; empty: go build
	Compare   string // another gateway binary run beside it on SQLite (e.g. the last release), empty: none
	Postgres  string // also run the gateway on this PostgreSQL URL
	Redis     string // with this Redis for its limits
	Instances int    // with Postgres: also run this many gateway instances on it side by side (0, 1: none)
	Pprof     string // GATEWAY_PPROF_ADDR of the profiled gateway
	// PprofTarget names the gateway Pprof applies to: "gateway" (SQLite,
	// the default) or "gateway-pg".
	PprofTarget string
	Repeats     int             // rounds, targets alternating
	Duration    time.Duration   // per constant-rate run
	Rates       []float64       // constant rates, requests/s
	Latencies   []time.Duration // mock latencies for the rate runs
	Vendors     []string        // openai, anthropic, google, responses (OpenAI's Responses API, relayed: the R row beside C), gemini (the G endpoint on google/, relayed: the G row beside C)
	Streams     int             // concurrent streams
	Chunks      int             // events per stream
	Spacing     time.Duration   // between stream events
	MaxRate     bool            // search the highest rate with p99 < P99Limit
	Step        time.Duration   // per max-rate probe
	MaxStart    float64         // first rate probed
	Ceiling     float64         // highest rate probed
	P99Limit    time.Duration
	Searches    int // max-rate searches per target and round; the median is reported
	Warmup      time.Duration
	// MaxOther is the most CPU (in cores) the machine's other processes
	// may take during a run (on the target's CPUs when pinned) before
	// the run is redone, at most Redo times; a run still above it is
	// kept and marked.
	MaxOther float64
	Redo     int
	// ProfileDir, with Pprof, receives the gateway's CPU, mutex and block
	// profiles of its first run at the highest rate.
	ProfileDir string

	// AgentSizes are the sizes (KB) of the agent-shaped bodies (empty: no
	// agent rows): constant-rate rows at each size, shape and AgentRates
	// rate; the streams (AgentStreams at once) and max-rate rows at the
	// first size.
	AgentSizes   []int
	AgentShapes  []string  // C, M, R
	AgentRates   []float64 // turns/s
	AgentStreams int
	// AgentOnly leaves the small-body rows out.
	AgentOnly bool
	// NoGuard adds the gateway with its guard off as a target of its own
	// (gateway-noguard): the guard's share of each figure.
	NoGuard bool
	// NoAnswer adds the gateway with the guard's answer side off
	// (gateway-noanswer): the answer-side check's share of each figure.
	NoAnswer bool
	// ProfileAgent, with Pprof and ProfileDir, profiles the gateway's
	// first agent run at the highest agent rate instead of the small
	// body's.
	ProfileAgent bool
}

// Short is the default configuration, well under two minutes.
func Short() Config {
	return Config{
		Repeats: 2, Duration: 2 * time.Second, Rates: []float64{200, 1000},
		Latencies: []time.Duration{0}, Vendors: []string{"openai"},
		Streams: 50, Chunks: 20, Spacing: 2 * time.Millisecond,
		MaxRate: true, Step: time.Second, MaxStart: 250, Ceiling: 8000, P99Limit: 50 * time.Millisecond,
		Searches: 3, Warmup: 500 * time.Millisecond, MaxOther: 0.25, Redo: 2,
	}
}

// Full is the whole matrix (-full).
func Full() Config {
	c := Short()
	c.Duration = 5 * time.Second
	c.Rates = []float64{200, 1000, 2000}
	c.Latencies = []time.Duration{0, 20 * time.Millisecond}
	c.Vendors = []string{"openai", "anthropic", "google", "responses"}
	c.Streams, c.Chunks, c.Spacing = 200, 50, 5*time.Millisecond
	c.Step = 3 * time.Second
	c.Ceiling = 16000
	return c
}

func main() {
	if spec := os.Getenv(floorEnv); spec != "" {
		if err := serveFloor(spec); err != nil {
			fmt.Fprintln(os.Stderr, "floor:", err)
			os.Exit(1)
		}
		return
	}
	full := flag.Bool("full", false, "run the whole matrix (rates 200/1000/2000, mock 0 and 20 ms, three vendors, 200 streams x 50 chunks)")
	gateway := flag.String("gateway", "", "prebuilt gateway binary (default: go build ./cmd/gateway)")
	compare := flag.String("compare", "", "another gateway binary (e.g. built from the previous commit) run beside the gateway on SQLite, as target gateway-compare (and with -pg on PostgreSQL too, as gateway-pg-compare): before/after in one run")
	pg := flag.String("pg", "", "also run the gateway on this PostgreSQL URL")
	redis := flag.String("redis", "", "Redis URL for the PostgreSQL gateway's limits")
	instances := flag.Int("instances", 0, "with -pg: also run this many gateway instances on the one PostgreSQL (+ Redis), each pinned to its own CPU, the load shared among them")
	searches := flag.Int("searches", 0, "max-rate searches per target and round, median reported (default 3)")
	maxOther := flag.Float64("max-other", -1, "redo a run when other processes took more than this many cores of the target's CPUs (default 0.25)")
	redo := flag.Int("redo", -1, "how many times a disturbed run is redone before it is kept and marked (default 2)")
	pprofAddr := flag.String("pprof", "", "GATEWAY_PPROF_ADDR for the SQLite gateway (profile it while the harness runs)")
	pprofTarget := flag.String("pprof-target", "gateway", "which gateway -pprof applies to: gateway (SQLite) or gateway-pg")
	repeats := flag.Int("repeats", 0, "rounds (default 2)")
	dur := flag.Duration("duration", 0, "per constant-rate run (default 2s, 5s with -full)")
	rates := flag.String("rates", "", "comma-separated constant rates, requests/s")
	streams := flag.Int("streams", 0, "concurrent streams of the streams rows (default 50, 200 with -full)")
	chunks := flag.Int("chunks", 0, "events per stream of the streams rows (default 20, 50 with -full)")
	spacing := flag.Duration("spacing", 0, "time between a stream's events (default 2ms, 5ms with -full)")
	vendors := flag.String("vendors", "", "comma-separated vendor rows: openai, anthropic, google, responses (default openai; with -full all four); responses also adds its streams row")
	noMax := flag.Bool("no-maxrate", false, "skip the max-rate search")
	out := flag.String("out", "", "write the Markdown table here too")
	profDir := flag.String("profile", "", "with -pprof: save the gateway's CPU, mutex and block profiles of its first run at the highest rate in this directory")
	agent := flag.String("agent", "", "comma-separated agent body sizes in KB (e.g. 20,110,250): adds the agent-shaped rows (streamed turns of a coding agent's conversation); the streams and max-rate agent rows use the first size")
	agentShapes := flag.String("agent-shapes", "C,M", "agent rows' ingress shapes: C (chat completions), M (messages), R (responses)")
	agentRates := flag.String("agent-rates", "100,300", "agent rows' constant rates, turns/s")
	agentStreams := flag.Int("agent-streams", 1000, "concurrent agent streams of the agent streams row (0: none)")
	agentOnly := flag.Bool("agent-only", false, "with -agent: leave the small-body rows out")
	noGuard := flag.Bool("noguard", false, "also run the gateway with its guard off (target gateway-noguard)")
	noAnswer := flag.Bool("noanswer", false, "also run the gateway with the guard's answer-side check off (target gateway-noanswer)")
	profAgent := flag.Bool("profile-agent", false, "with -pprof and -profile: profile the first agent run at the highest agent rate instead")
	fallback := flag.Int("fallback", 0, "instead: the fallback run, the primary answering 503 to this percentage of requests (e.g. 30), at the first -rates rate (default 1000) for -duration (default 5s)")
	flag.Parse()
	if *fallback > 0 {
		runFallback(*gateway, *rates, *dur, *repeats, *fallback)
		return
	}

	cfg := Short()
	if *full {
		cfg = Full()
	}
	cfg.Gateway, cfg.Postgres, cfg.Redis, cfg.Pprof, cfg.ProfileDir = *gateway, *pg, *redis, *pprofAddr, *profDir
	cfg.Instances, cfg.Compare, cfg.PprofTarget = *instances, *compare, *pprofTarget
	if cfg.PprofTarget != "gateway" && cfg.PprofTarget != "gateway-pg" || cfg.PprofTarget == "gateway-pg" && cfg.Postgres == "" {
		fmt.Fprintln(os.Stderr, "-pprof-target: gateway, or gateway-pg with -pg")
		os.Exit(2)
	}
	if cfg.Instances > 1 && cfg.Postgres == "" {
		fmt.Fprintln(os.Stderr, "-instances needs -pg (instances share one PostgreSQL store)")
		os.Exit(2)
	}
	if *searches > 0 {
		cfg.Searches = *searches
	}
	if *maxOther >= 0 {
		cfg.MaxOther = *maxOther
	}
	if *redo >= 0 {
		cfg.Redo = *redo
	}
	if *repeats > 0 {
		cfg.Repeats = *repeats
	}
	if *chunks > 0 {
		cfg.Chunks = *chunks
	}
	if *spacing > 0 {
		cfg.Spacing = *spacing
	}
	if *dur > 0 {
		cfg.Duration = *dur
	}
	if *rates != "" {
		cfg.Rates = nil
		for _, s := range strings.Split(*rates, ",") {
			r, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
			if err != nil || r <= 0 {
				fmt.Fprintf(os.Stderr, "-rates: bad rate %q\n", s)
				os.Exit(2)
			}
			cfg.Rates = append(cfg.Rates, r)
		}
	}
	if *streams > 0 {
		cfg.Streams = *streams
	}
	if *vendors != "" {
		cfg.Vendors = nil
		for _, v := range strings.Split(*vendors, ",") {
			switch v = strings.TrimSpace(v); v {
			case "openai", "anthropic", "google", "responses", "gemini", "embeddings":
				cfg.Vendors = append(cfg.Vendors, v)
			default:
				fmt.Fprintf(os.Stderr, "-vendors: unknown vendor %q\n", v)
				os.Exit(2)
			}
		}
	}
	cfg.MaxRate = cfg.MaxRate && !*noMax
	cfg.AgentOnly, cfg.NoGuard, cfg.ProfileAgent = *agentOnly, *noGuard, *profAgent
	cfg.NoAnswer = *noAnswer
	if *agent != "" {
		for _, s := range strings.Split(*agent, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(s))
			if err != nil || n <= 0 || n > 4096 {
				fmt.Fprintf(os.Stderr, "-agent: bad size %q (KB, 1 to 4096)\n", s)
				os.Exit(2)
			}
			cfg.AgentSizes = append(cfg.AgentSizes, n)
		}
		for _, s := range strings.Split(*agentShapes, ",") {
			switch s = strings.TrimSpace(s); s {
			case "C", "M", "R":
				cfg.AgentShapes = append(cfg.AgentShapes, s)
			default:
				fmt.Fprintf(os.Stderr, "-agent-shapes: unknown shape %q\n", s)
				os.Exit(2)
			}
		}
		for _, s := range strings.Split(*agentRates, ",") {
			r, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
			if err != nil || r <= 0 {
				fmt.Fprintf(os.Stderr, "-agent-rates: bad rate %q\n", s)
				os.Exit(2)
			}
			cfg.AgentRates = append(cfg.AgentRates, r)
		}
		cfg.AgentStreams = *agentStreams
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	rep, err := Run(ctx, cfg, os.Stderr)
	if err != nil {
		fmt.Fprintln(os.Stderr, "gwbench:", err)
		os.Exit(1)
	}
	md := rep.Markdown()
	fmt.Print(md)
	if *out != "" {
		if err := os.WriteFile(*out, []byte(md), 0o644); err != nil {
			fmt.Fprintln(os.Stderr, "gwbench:", err)
			os.Exit(1)
		}
	}
}

// scenario is one row group of the table.
type scenario struct {
	Name    string
	Kind    string // "rate", "streams", "maxrate"
	Vendor  string
	Rate    float64
	Latency time.Duration
	Stream  bool
	// Shape and Size (KB) make it an agent row: agent-shaped turns on
	// the ingress of that shape ("" : the small body of Vendor).
	Shape string
	Size  int
}

// Report is a run's results: Results[scenario][target][repeat].
type Report struct {
	Config    Config
	Targets   []string
	Scenarios []scenario
	Results   [][][]Result
	MaxRates  [][][]float64
	Pinned    bool
	// Services says which targets' runs measured the store's servers.
	Services  []bool
	LoadStart string
	LoadEnd   string
	Started   time.Time
	Took      time.Duration
	// Searches holds every max-rate search's result:
	// [scenario][target][repeat][search].
	Searches [][][][]float64
}

// Run runs the matrix; progress goes to log.
func Run(ctx context.Context, cfg Config, log io.Writer) (*Report, error) {
	dir, err := os.MkdirTemp("", "gwbench-")
	if err != nil {
		return nil, err
	}
	if os.Getenv("GWBENCH_KEEP") == "" {
		defer os.RemoveAll(dir)
	} else {
		fmt.Fprintln(log, "keeping", dir)
	}
	bin := cfg.Gateway
	if bin == "" {
		fmt.Fprintln(log, "building ./cmd/gateway ...")
		if bin, err = buildGateway(ctx, dir); err != nil {
			return nil, err
		}
	}
	mock := NewMock(MockConfig{Chunks: 1})
	ms := httptest.NewServer(mock)
	defer ms.Close()

	pin := pinning(1)
	pinned := pin != nil && pinSelf(0)
	if !pinned {
		pin = nil
	}
	cpuOf := func(p []string) int {
		if p == nil {
			return -1
		}
		n, _ := strconv.Atoi(p[len(p)-1])
		return n
	}
	var targetCPUs []int
	if pinned {
		targetCPUs = []int{cpuOf(pin)}
	}
	m := &meter{ours: []ourProc{{pid: os.Getpid(), cpu: cpuOf(pinning(0))}}}
	if !pinned {
		m.ours[0].cpu = -1
	}

	floor, err := startFloor(ctx, dir, pin, ms.URL)
	if err != nil {
		return nil, err
	}
	defer floor.stop()
	m.ours = append(m.ours, ourProc{floor.pid, cpuOf(pin)})
	pprofOf := func(name string) string {
		if name == cmp.Or(cfg.PprofTarget, "gateway") {
			return cfg.Pprof
		}
		return ""
	}
	targets := []Target{{Name: "floor", URLs: []string{floor.url}, Pids: []int{floor.pid}, CPUs: targetCPUs, Request: nativeRequest}}
	keys := map[string]string{}
	// gateway starts one gateway process (stopped when Run returns) and
	// adds it as the target named o.Name, with its key.
	var stops []func()
	defer func() {
		for _, stop := range slices.Backward(stops) {
			stop()
		}
	}()
	gateway := func(o gatewayOpts, svc *services) error {
		g, key, err := startGateway(ctx, dir, pin, o, ms.URL)
		if err != nil {
			return err
		}
		stops = append(stops, g.stop)
		m.ours = append(m.ours, ourProc{g.pid, cpuOf(pin)})
		targets = append(targets, Target{Name: o.Name, URLs: []string{g.url}, Pids: []int{g.pid}, CPUs: targetCPUs, Request: gatewayRequest(key, "openai"), Services: svc})
		keys[o.Name] = key
		return nil
	}
	if err := gateway(gatewayOpts{Binary: bin, Database: dir + "/gateway.db", Pprof: pprofOf("gateway"), Name: "gateway"}, nil); err != nil {
		return nil, err
	}
	if cfg.Compare != "" {
		if err := gateway(gatewayOpts{Binary: cfg.Compare, Database: dir + "/compare.db", Name: "gateway-compare"}, nil); err != nil {
			return nil, err
		}
	}
	if cfg.NoGuard {
		if err := gateway(gatewayOpts{Binary: bin, Database: dir + "/noguard.db", Name: "gateway-noguard", Env: []string{"GATEWAY_GUARD=off"}}, nil); err != nil {
			return nil, err
		}
	}
	if cfg.NoAnswer {
		if err := gateway(gatewayOpts{Binary: bin, Database: dir + "/noanswer.db", Name: "gateway-noanswer", Env: []string{"GATEWAY_GUARD_ANSWER=off"}}, nil); err != nil {
			return nil, err
		}
	}
	var svc *services
	if cfg.Postgres != "" {
		svc = newServices(cfg.Redis)
		if err := gateway(gatewayOpts{Binary: bin, Database: cfg.Postgres, Redis: cfg.Redis, Pprof: pprofOf("gateway-pg"), Name: "gateway-pg"}, svc); err != nil {
			return nil, err
		}
		if cfg.Compare != "" {
			// The other binary on the same PostgreSQL and Redis: before
			// and after on the scale-out path too.
			if err := gateway(gatewayOpts{Binary: cfg.Compare, Database: cfg.Postgres, Redis: cfg.Redis, Name: "gateway-pg-compare"}, svc); err != nil {
				return nil, err
			}
		}
	}
	if cfg.Instances > 1 {
		// Each instance on a CPU of its own (as many as there are), all
		// on the one PostgreSQL and Redis, sharing one key.
		name := fmt.Sprintf("gateway-pg x%d", cfg.Instances)
		t := Target{Name: name, Services: svc}
		var shared string
		for i := range cfg.Instances {
			ipin := pinning((1 + i) % runtime.NumCPU())
			if !pinned {
				ipin = nil
			}
			g, k, err := startGateway(ctx, dir, ipin, gatewayOpts{Binary: bin, Database: cfg.Postgres, Redis: cfg.Redis, Key: shared,
				Env: []string{"GATEWAY_INSTANCES=" + strconv.Itoa(cfg.Instances)}, Name: fmt.Sprintf("gateway-pg-%d", i+1)}, ms.URL)
			if err != nil {
				return nil, err
			}
			defer g.stop()
			shared = k
			m.ours = append(m.ours, ourProc{g.pid, cpuOf(ipin)})
			t.URLs, t.Pids = append(t.URLs, g.url), append(t.Pids, g.pid)
			if ipin != nil && !slices.Contains(t.CPUs, cpuOf(ipin)) {
				t.CPUs = append(t.CPUs, cpuOf(ipin))
			}
		}
		t.Request = gatewayRequest(shared, "openai")
		targets = append(targets, t)
		keys[name] = shared
	}
	// trial runs f, again (at most cfg.Redo times) while the machine's
	// other processes took more than cfg.MaxOther cores of the target's
	// CPUs; a run still disturbed is kept and marked Busy.
	trial := func(t Target, what string) func(func() Result) Result {
		return func(f func() Result) Result {
			for n := 0; ; n++ {
				stop := m.start(t.CPUs)
				var s0 serviceSnap
				if t.Services != nil {
					s0 = t.Services.snap()
				}
				r := f()
				r.Other, r.Redone = stop(), n
				if t.Services != nil {
					r.ServerCPU, r.RedisCmds = t.Services.snap().since(s0)
				}
				if r.Other <= cfg.MaxOther || n >= cfg.Redo || ctx.Err() != nil {
					r.Busy = r.Other > cfg.MaxOther
					return r
				}
				fmt.Fprintf(log, "         %-40s %-10s other processes took %.2f cores: run again\n", what, t.Name, r.Other)
			}
		}
	}

	var scs []scenario
	if cfg.AgentOnly && len(cfg.AgentSizes) > 0 {
		cfg.Latencies, cfg.Vendors, cfg.Streams = nil, nil, 0
	}
	for _, lat := range cfg.Latencies {
		for _, r := range cfg.Rates {
			scs = append(scs, scenario{Name: fmt.Sprintf("%g req/s, mock %v, openai JSON", r, lat), Kind: "rate", Vendor: "openai", Rate: r, Latency: lat})
		}
	}
	for _, v := range cfg.Vendors {
		if v == "openai" && len(cfg.Vendors) == 1 {
			continue
		}
		for _, s := range []bool{false, true} {
			if v == "embeddings" {
				if !s {
					scs = append(scs, scenario{Name: fmt.Sprintf("%g req/s, mock 0s, embeddings batch of %d", cfg.Rates[0], embedBatch), Kind: "rate", Vendor: v, Rate: cfg.Rates[0]})
				}
				continue
			}
			if v == "openai" && !s && len(cfg.Latencies) > 0 && cfg.Latencies[0] == 0 {
				continue // the first rate row already is openai JSON with mock 0
			}
			kind := "JSON"
			if s {
				kind = "SSE"
			}
			scs = append(scs, scenario{Name: fmt.Sprintf("%g req/s, mock 0s, %s %s", cfg.Rates[0], v, kind), Kind: "rate", Vendor: v, Rate: cfg.Rates[0], Stream: s})
		}
	}
	if cfg.Streams > 0 {
		scs = append(scs, scenario{Name: fmt.Sprintf("%d streams x %d chunks, %v apart", cfg.Streams, cfg.Chunks, cfg.Spacing), Kind: "streams", Vendor: "openai", Stream: true})
		if slices.Contains(cfg.Vendors, "responses") {
			scs = append(scs, scenario{Name: fmt.Sprintf("%d responses streams x %d chunks, %v apart", cfg.Streams, cfg.Chunks, cfg.Spacing), Kind: "streams", Vendor: "responses", Stream: true})
		}
		if slices.Contains(cfg.Vendors, "gemini") {
			scs = append(scs, scenario{Name: fmt.Sprintf("%d gemini streams x %d chunks, %v apart", cfg.Streams, cfg.Chunks, cfg.Spacing), Kind: "streams", Vendor: "gemini", Stream: true})
		}
	}
	if cfg.MaxRate && !(cfg.AgentOnly && len(cfg.AgentSizes) > 0) {
		scs = append(scs, scenario{Name: fmt.Sprintf("max rate, p99 < %v", cfg.P99Limit), Kind: "maxrate", Vendor: "openai"})
	}
	for _, kb := range cfg.AgentSizes {
		for _, sh := range cfg.AgentShapes {
			for _, r := range cfg.AgentRates {
				scs = append(scs, scenario{Name: fmt.Sprintf("agent %s %d KB, %g turns/s, streamed", sh, kb, r), Kind: "rate", Shape: sh, Size: kb, Rate: r, Stream: true})
			}
		}
	}
	if len(cfg.AgentSizes) > 0 {
		kb := cfg.AgentSizes[0]
		for _, sh := range cfg.AgentShapes {
			if cfg.AgentStreams > 0 {
				scs = append(scs, scenario{Name: fmt.Sprintf("agent %s %d KB, %d streams at once x %d chunks, %v apart", sh, kb, cfg.AgentStreams, cfg.Chunks, agentSpacing(cfg)), Kind: "streams", Shape: sh, Size: kb, Stream: true})
			}
			if cfg.MaxRate {
				scs = append(scs, scenario{Name: fmt.Sprintf("agent %s %d KB max rate, p99 < %v", sh, kb, agentP99(cfg)), Kind: "maxrate", Shape: sh, Size: kb, Stream: true})
			}
		}
	}

	rep := &Report{Config: cfg, Scenarios: scs, Pinned: pinned, LoadStart: loadAvg(), Started: time.Now()}
	for _, t := range targets {
		rep.Targets = append(rep.Targets, t.Name)
		rep.Services = append(rep.Services, t.Services != nil)
	}
	rep.Results = make([][][]Result, len(scs))
	rep.MaxRates = make([][][]float64, len(scs))
	rep.Searches = make([][][][]float64, len(scs))
	for i := range scs {
		rep.Results[i] = make([][]Result, len(targets))
		rep.MaxRates[i] = make([][]float64, len(targets))
		rep.Searches[i] = make([][][]float64, len(targets))
		for j := range targets {
			rep.Results[i][j] = make([]Result, cfg.Repeats)
			rep.MaxRates[i][j] = make([]float64, cfg.Repeats)
			rep.Searches[i][j] = make([][]float64, cfg.Repeats)
		}
	}
	client := newClient(1024)
	defer client.CloseIdleConnections()

	for _, t := range targets {
		mock.Set(MockConfig{Chunks: 1})
		fmt.Fprintf(log, "warm-up %s\n", t.Name)
		Rate(ctx, client, t, 200*float64(len(t.URLs)), cfg.Warmup, drainRate)
	}
	for rnd := range cfg.Repeats {
		for i, sc := range scs {
			order := make([]int, len(targets))
			for j := range order {
				order[j] = j
				if rnd%2 == 1 {
					order[j] = len(targets) - 1 - j
				}
			}
			for _, j := range order {
				if ctx.Err() != nil {
					return nil, ctx.Err()
				}
				t := targets[j]
				switch {
				case sc.Shape != "":
					// Conversations of their own for every run: no cache
					// has seen their history.
					t.Request = agentRequests(sc.Shape, sc.Size, keys[t.Name], fmt.Sprintf("r%d-s%d", rnd, i))
					t.TTFB = true
				case j == 0:
					t.Request = func(stream bool) (string, http.Header, []byte) { return vendorRequest(sc.Vendor, stream) }
				default:
					t.Request = gatewayRequest(keys[t.Name], sc.Vendor)
				}
				var r Result
				switch sc.Kind {
				case "rate":
					mock.Set(MockConfig{Latency: sc.Latency, Chunks: 20})
					if sc.Stream {
						t.Request = streamOnly(t.Request)
					}
					var saved func()
					small := !cfg.ProfileAgent && sc.Shape == "" && !sc.Stream && sc.Rate == slices.Max(cfg.Rates) && sc.Latency == cfg.Latencies[0]
					agentRun := cfg.ProfileAgent && sc.Shape != "" && sc.Size == cfg.AgentSizes[0] && sc.Shape == cfg.AgentShapes[0] && sc.Rate == slices.Max(cfg.AgentRates)
					if cfg.Pprof != "" && cfg.ProfileDir != "" && t.Name == cmp.Or(cfg.PprofTarget, "gateway") && rnd == 0 && (small || agentRun) {
						saved = profile(ctx, cfg.Pprof, cfg.ProfileDir, cfg.Duration, log)
					}
					r = trial(t, sc.Name)(func() Result { return Rate(ctx, client, t, sc.Rate, cfg.Duration, drainRate) })
					if saved != nil {
						saved()
					}
				case "streams":
					n, spacing := cfg.Streams, cfg.Spacing
					if sc.Shape != "" {
						n, spacing = cfg.AgentStreams, agentSpacing(cfg)
					}
					mock.Set(MockConfig{Chunks: cfg.Chunks, Spacing: spacing})
					r = trial(t, sc.Name)(func() Result { return Streams(ctx, client, t, n) })
				case "maxrate":
					mock.Set(MockConfig{Chunks: 20})
					start, limit := cfg.MaxStart, cfg.P99Limit
					if sc.Shape != "" {
						start, limit = agentMaxStart, agentP99(cfg)
					}
					// Several searches, the median reported with its run.
					type search struct {
						best float64
						r    Result
					}
					var ss []search
					for range max(cfg.Searches, 1) {
						best, sr := MaxRate(ctx, client, t, start, cfg.Ceiling, cfg.Step, 4, limit, trial(t, sc.Name))
						ss = append(ss, search{best, sr})
						rep.Searches[i][j][rnd] = append(rep.Searches[i][j][rnd], best)
					}
					slices.SortStableFunc(ss, func(a, b search) int { return cmp.Compare(a.best, b.best) })
					med := ss[(len(ss)-1)/2]
					rep.MaxRates[i][j][rnd], r = med.best, med.r
					for _, x := range ss {
						r.Busy = r.Busy || x.r.Busy
					}
				}
				rep.Results[i][j][rnd] = r
				fmt.Fprintf(log, "round %d  %-40s %-10s ok %d err %d p50 %v p99 %v cpu/req %v rss %d MB other %.2f cores%s %s\n",
					rnd+1, sc.Name, t.Name, r.OK, r.Errors, r.P50.Round(10*time.Microsecond), r.P99.Round(10*time.Microsecond),
					r.CPUPerReq().Round(time.Microsecond), r.RSSPeak>>20, r.Other, busyMark(r), r.FirstErr)
				client.CloseIdleConnections()
			}
		}
	}
	rep.LoadEnd = loadAvg()
	rep.Took = time.Since(rep.Started)
	return rep, nil
}

// profile fetches a CPU profile of most of the next run from the pprof
// address in the background; the returned function waits for it and then
// saves the mutex and block profiles too.
func profile(ctx context.Context, addr, dir string, d time.Duration, log io.Writer) func() {
	get := func(path, file string) {
		resp, err := http.Get("http://" + addr + path)
		if err != nil {
			fmt.Fprintln(log, "profile:", err)
			return
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err == nil {
			err = os.WriteFile(filepath.Join(dir, file), b, 0o644)
		}
		if err != nil {
			fmt.Fprintln(log, "profile:", err)
		}
	}
	secs := max(int(d.Seconds())-1, 1)
	done := make(chan struct{})
	go func() {
		defer close(done)
		get(fmt.Sprintf("/debug/pprof/profile?seconds=%d", secs), "cpu.pprof")
	}()
	return func() {
		<-done
		get("/debug/pprof/mutex", "mutex.pprof")
		get("/debug/pprof/block", "block.pprof")
		fmt.Fprintf(log, "profiles saved in %s\n", dir)
	}
}

// agentMaxStart is the first rate of an agent max-rate search.
const agentMaxStart = 50

// agentP99 is the p99 an agent max-rate probe must stay under: the small
// body's limit, or 100 ms at least (a 110 KB turn takes milliseconds on
// the floor too).
func agentP99(cfg Config) time.Duration { return max(cfg.P99Limit, 100*time.Millisecond) }

// agentSpacing is the time between an agent stream's events: enough for
// the agent streams to be open at the same time.
func agentSpacing(cfg Config) time.Duration { return max(cfg.Spacing, 20*time.Millisecond) }

// drainRate is how long a constant-rate run waits for its last answers.
const drainRate = 5 * time.Second

const prompt = "Say hello in one short sentence."

// nativeRequest is the vendor-native request the floor relays (OpenAI;
// see vendorRequest).
func nativeRequest(stream bool) (string, http.Header, []byte) { return vendorRequest("openai", stream) }

// embedBatch and embedDims are the embeddings row's request: a batch of
// embedBatch inputs, vectors of embedDims values.
const (
	embedBatch = 64
	embedDims  = 256
)

// embedBody is the embeddings row's body for model.
func embedBody(model string) []byte {
	in := make([]string, embedBatch)
	for i := range in {
		in[i] = fmt.Sprintf("Passage %d of the corpus: %s", i, prompt)
	}
	b, _ := json.Marshal(map[string]any{"model": model, "input": in, "dimensions": embedDims, "encoding_format": "float"})
	return b
}

// vendorRequest is the request a client would send the vendor itself.
func vendorRequest(vendor string, stream bool) (string, http.Header, []byte) {
	h := http.Header{"Content-Type": {"application/json"}, "Authorization": {"Bearer mock"}}
	switch vendor {
	case "embeddings":
		return "/v1/embeddings", h, embedBody("text-embedding-3-small")
	case "responses":
		return "/v1/responses", h, fmt.Appendf(nil, `{"model":"gpt-6-sol","stream":%t,"input":%q}`, stream, prompt)
	case "anthropic":
		return "/v1/messages", h, fmt.Appendf(nil, `{"model":"claude-sonnet-5-5","max_tokens":256,"stream":%t,"messages":[{"role":"user","content":%q}]}`, stream, prompt)
	case "google", "gemini":
		if stream {
			return "/v1beta/models/gemini-3-flash:streamGenerateContent?alt=sse", h, fmt.Appendf(nil, `{"contents":[{"role":"user","parts":[{"text":%q}]}]}`, prompt)
		}
		return "/v1beta/models/gemini-3-flash:generateContent", h, fmt.Appendf(nil, `{"contents":[{"role":"user","parts":[{"text":%q}]}]}`, prompt)
	}
	extra := ""
	if stream {
		extra = `,"stream_options":{"include_usage":true}`
	}
	return "/v1/chat/completions", h, fmt.Appendf(nil, `{"model":"gpt-6-sol","stream":%t%s,"messages":[{"role":"user","content":%q}]}`, stream, extra, prompt)
}

// gatewayRequest returns the gateway's request for vendor: the Anthropic
// shape for anthropic (relayed), the Responses shape for responses
// (relayed to OpenAI's Responses API), the Gemini shape for gemini
// (relayed to Gemini), the OpenAI Chat Completions shape otherwise
// (relayed for openai, mapped for google).
func gatewayRequest(key, vendor string) func(bool) (string, http.Header, []byte) {
	return func(stream bool) (string, http.Header, []byte) {
		h := http.Header{"Content-Type": {"application/json"}, "Authorization": {"Bearer " + key}}
		switch vendor {
		case "embeddings":
			return "/v1/embeddings", h, embedBody("openai/text-embedding-3-small")
		case "responses":
			return "/v1/responses", h, fmt.Appendf(nil, `{"model":"openai/gpt-6-sol","stream":%t,"input":%q}`, stream, prompt)
		case "anthropic":
			return "/v1/messages", h, fmt.Appendf(nil, `{"model":"anthropic/claude-sonnet-5-5","max_tokens":256,"stream":%t,"messages":[{"role":"user","content":%q}]}`, stream, prompt)
		case "google":
			return "/v1/chat/completions", h, fmt.Appendf(nil, `{"model":"google/gemini-3-flash","stream":%t,"messages":[{"role":"user","content":%q}]}`, stream, prompt)
		case "gemini":
			h.Del("Authorization")
			h.Set("X-Goog-Api-Key", key)
			body := fmt.Appendf(nil, `{"contents":[{"role":"user","parts":[{"text":%q}]}]}`, prompt)
			if stream {
				return "/v1beta/models/google/gemini-3-flash:streamGenerateContent?alt=sse", h, body
			}
			return "/v1beta/models/google/gemini-3-flash:generateContent", h, body
		}
		extra := ""
		if stream {
			extra = `,"stream_options":{"include_usage":true}`
		}
		return "/v1/chat/completions", h, fmt.Appendf(nil, `{"model":"openai/gpt-6-sol","stream":%t%s,"messages":[{"role":"user","content":%q}]}`, stream, extra, prompt)
	}
}

func streamOnly(f func(bool) (string, http.Header, []byte)) func(bool) (string, http.Header, []byte) {
	return func(bool) (string, http.Header, []byte) { return f(true) }
}

func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}

func isTestBinary() bool {
	return strings.HasSuffix(os.Args[0], ".test") || flag.Lookup("test.v") != nil
}
