// Command testall runs the project's whole test suite and says plainly
// what it did not run.
//
//	go run ./cmd/testall [-require-all] [-race=auto|on|off] [-services=auto|off] [-run REGEXP] [packages]
//
// It runs `go test -json` over the packages (default ./...), prints one
// line per package as `go test` does, the output of every failed test,
// then the list of skipped tests with their reasons (suites that need
// PostgreSQL, Redis, Chromium or Node skip when those are absent), and a
// closing line "N passed, M failed, K skipped".
//
// A test that runs only when asked for (a long soak behind its own flag)
// skips with a reason starting "opt-in:"; such skips are listed apart and
// never fail a run.
//
// The PostgreSQL and Redis suites read GATEWAY_TEST_POSTGRES_URL and
// GATEWAY_TEST_REDIS_URL. With -services=auto (the default) an unset
// variable is filled in when the service answers on its default local
// port (127.0.0.1:5432 as user postgres without a password, database test
// or else postgres; 127.0.0.1:6379), and testall prints what it found and
// used; -services=off leaves the environment as it is.
//
// The race detector needs cgo and a C compiler; with -race=auto (the
// default) it is on when a C compiler is found and off, with a warning,
// when not. With -require-all (CI) any skipped test makes the run fail, so
// a suite that silently stopped running is caught.
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("testall", flag.ContinueOnError)
	fs.SetOutput(stderr)
	requireAll := fs.Bool("require-all", false, "fail when any test was skipped (CI)")
	race := fs.String("race", "auto", "race detector: auto (on when a C compiler is found), on or off")
	runRE := fs.String("run", "", "run only tests matching this regular expression (go test -run)")
	// A package's binary gets 30 minutes: e2e under -race on a loaded
	// two-core machine has come near 20.
	timeout := fs.Duration("timeout", 30*time.Minute, "go test -timeout")
	services := fs.String("services", "auto", "PostgreSQL and Redis for their suites: auto (find them on their default local ports when GATEWAY_TEST_*_URL are unset) or off")
	if err := fs.Parse(args); err != nil {
		if err == flag.ErrHelp {
			return 0
		}
		return 2
	}
	pkgs := fs.Args()
	if len(pkgs) == 0 {
		pkgs = []string{"./..."}
	}

	goArgs := []string{"test", "-json", "-count=1", "-timeout", timeout.String()}
	switch *race {
	case "on":
		goArgs = append(goArgs, "-race")
	case "off":
	case "auto":
		if cc := cCompiler(); cc != "" {
			goArgs = append(goArgs, "-race")
		} else {
			fmt.Fprintln(stderr, "testall: WARNING: no C compiler found, running WITHOUT the race detector (install gcc to enable it)")
		}
	default:
		fmt.Fprintf(stderr, "testall: -race must be auto, on or off, not %q\n", *race)
		return 2
	}
	var env []string
	switch *services {
	case "auto":
		var notes []string
		env, notes = localServices(os.Getenv, postgresAddr, redisAddr)
		for _, n := range notes {
			fmt.Fprintln(stderr, "testall:", n)
		}
	case "off":
	default:
		fmt.Fprintf(stderr, "testall: -services must be auto or off, not %q\n", *services)
		return 2
	}
	if *runRE != "" {
		goArgs = append(goArgs, "-run", *runRE)
	}
	goArgs = append(goArgs, pkgs...)

	cmd := exec.Command("go", goArgs...)
	cmd.Stderr = stderr // build errors
	if len(env) > 0 {
		cmd.Env = append(os.Environ(), env...)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		fmt.Fprintln(stderr, "testall:", err)
		return 2
	}
	fmt.Fprintf(stderr, "testall: go %s\n", strings.Join(goArgs, " "))
	if err := cmd.Start(); err != nil {
		fmt.Fprintln(stderr, "testall:", err)
		return 2
	}
	sum := summarize(out, stdout)
	waitErr := cmd.Wait()

	sum.report(stdout)
	switch {
	case sum.failed > 0 || sum.pkgFailed > 0:
		return 1
	case waitErr != nil:
		// A build failure or a crashed test binary with no test event.
		fmt.Fprintln(stderr, "testall: go test:", waitErr)
		return 1
	case *requireAll && sum.skipped > 0:
		fmt.Fprintf(stdout, "testall: %d test(s) skipped and -require-all is set: every suite must run here\n", sum.skipped)
		return 1
	case sum.passed == 0:
		fmt.Fprintln(stdout, "testall: no test ran")
		return 1
	}
	return 0
}

// cCompiler returns the C compiler go would use for cgo, or "".
func cCompiler() string {
	cc := "gcc"
	if b, err := exec.Command("go", "env", "CC").Output(); err == nil {
		if s := strings.TrimSpace(string(b)); s != "" {
			cc = strings.Fields(s)[0]
		}
	}
	if b, err := exec.Command("go", "env", "CGO_ENABLED").Output(); err == nil && strings.TrimSpace(string(b)) == "0" {
		return ""
	}
	p, err := exec.LookPath(cc)
	if err != nil {
		return ""
	}
	return p
}

// event is one line of `go test -json` (test2json).
type event struct {
	Action  string
	Package string
	Test    string
	Output  string
	Elapsed float64
}

type testKey struct{ pkg, test string }

type summary struct {
	passed, failed, skipped int
	// pkgFailed counts failed packages; pkgAlone those of them with no
	// failed test (a build failure, a crash outside a test), which the
	// total counts as failures of their own.
	pkgFailed, pkgAlone int
	// failedTests are the failed tests' names by package: a test whose
	// subtest failed is not counted again.
	failedTests map[string][]string
	skips       []string // "pkg Test: reason"
	optIn       []string // skips whose reason starts "opt-in:"
	output      map[testKey]*strings.Builder
}

// summarize reads test2json events, printing package lines and failed
// tests' output as they complete.
func summarize(r io.Reader, w io.Writer) *summary {
	s := &summary{output: map[testKey]*strings.Builder{}, failedTests: map[string][]string{}}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
	for sc.Scan() {
		var e event
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			fmt.Fprintln(w, sc.Text()) // not an event: pass it on
			continue
		}
		k := testKey{e.Package, e.Test}
		switch e.Action {
		case "output":
			b := s.output[k]
			if b == nil {
				b = &strings.Builder{}
				s.output[k] = b
			}
			if b.Len() < 1<<20 {
				b.WriteString(e.Output)
			}
		case "pass", "fail", "skip":
			s.finish(w, k, e)
		}
	}
	return s
}

func (s *summary) finish(w io.Writer, k testKey, e event) {
	out := ""
	if b := s.output[k]; b != nil {
		out = b.String()
	}
	delete(s.output, k)
	if k.test == "" { // a package's end
		switch e.Action {
		case "pass":
			fmt.Fprintf(w, "ok  \t%s\t%.3fs\n", k.pkg, e.Elapsed)
		case "skip":
			fmt.Fprintf(w, "?   \t%s\t[no test files]\n", k.pkg)
		case "fail":
			s.pkgFailed++
			if len(s.failedTests[k.pkg]) == 0 {
				s.pkgAlone++
			}
			fmt.Fprint(w, packageOutput(out))
			// Tests that never ended (a timeout's panic names them and
			// go test gives their output no end event): their output,
			// so a timeout says where it was.
			var open []testKey
			for t := range s.output {
				if t.pkg == k.pkg && t.test != "" {
					open = append(open, t)
				}
			}
			slices.SortFunc(open, func(a, b testKey) int { return strings.Compare(a.test, b.test) })
			for _, t := range open {
				fmt.Fprintf(w, "--- unfinished: %s (%s)\n%s", t.test, t.pkg, lastLines(s.output[t].String(), 20))
				delete(s.output, t)
			}
			fmt.Fprintf(w, "FAIL\t%s\t%.3fs\n", k.pkg, e.Elapsed)
		}
		return
	}
	switch e.Action {
	case "pass":
		s.passed++
	case "fail":
		sub := slices.ContainsFunc(s.failedTests[k.pkg], func(t string) bool { return strings.HasPrefix(t, k.test+"/") })
		s.failedTests[k.pkg] = append(s.failedTests[k.pkg], k.test)
		if !sub {
			// A parent fails with its subtest: one failure.
			s.failed++
		}
		fmt.Fprintf(w, "--- FAIL: %s (%s)\n%s", k.test, k.pkg, out)
	case "skip":
		reason := skipReason(out)
		line := fmt.Sprintf("%s %s: %s", k.pkg, k.test, reason)
		if optInReason(reason) {
			s.optIn = append(s.optIn, line)
			return
		}
		s.skipped++
		s.skips = append(s.skips, line)
	}
}

// lastLines is the last n lines of out.
func lastLines(out string, n int) string {
	lines := strings.SplitAfter(out, "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "")
}

// packageOutput is a failed package's own output without go test's
// closing "FAIL" lines, which testall prints once itself.
func packageOutput(out string) string {
	var b strings.Builder
	for _, l := range strings.SplitAfter(out, "\n") {
		if t := strings.TrimRight(l, "\n"); t == "FAIL" || strings.HasPrefix(t, "FAIL\t") {
			continue
		}
		b.WriteString(l)
	}
	return b.String()
}

// fileLine matches the "name_test.go:12: " that t.Skip puts first.
var fileLine = regexp.MustCompile(`^[\w.-]+\.go:\d+: `)

// optInReason reports whether a skip reason marks a test that runs only
// when asked for. The reason starts after the "file.go:N: " prefix.
func optInReason(reason string) bool {
	return strings.HasPrefix(fileLine.ReplaceAllString(reason, ""), "opt-in:")
}

// skipReason picks the t.Skip message out of a skipped test's output.
func skipReason(out string) string {
	var lines []string
	for _, l := range strings.Split(out, "\n") {
		l = strings.TrimSpace(l)
		if l == "" || strings.HasPrefix(l, "=== ") || strings.HasPrefix(l, "--- SKIP") {
			continue
		}
		lines = append(lines, l)
	}
	if len(lines) == 0 {
		return "(no reason given)"
	}
	return strings.Join(lines, " ")
}

func (s *summary) report(w io.Writer) {
	if len(s.optIn) > 0 {
		sort.Strings(s.optIn)
		fmt.Fprintf(w, "\nopt-in tests not asked for (%d):\n", len(s.optIn))
		for _, l := range s.optIn {
			fmt.Fprintf(w, "  %s\n", l)
		}
	}
	if len(s.skips) > 0 {
		sort.Strings(s.skips)
		fmt.Fprintf(w, "\nSKIPPED (%d): these tests did not run here\n", len(s.skips))
		for _, l := range s.skips {
			fmt.Fprintf(w, "  SKIP %s\n", l)
		}
		fmt.Fprintln(w)
	}
	// A package that failed to build or crashed outside a test counts as
	// a failure too.
	fmt.Fprintf(w, "%d passed, %d failed, %d skipped\n", s.passed, s.failed+s.pkgAlone, s.skipped)
}
