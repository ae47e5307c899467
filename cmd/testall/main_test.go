package main

import (
	"strings"
	"testing"
)

// A test2json stream with one pass, one fail, one skip with a reason, a
// failed package and a package without tests.
const stream = `{"Action":"run","Package":"a","Test":"TestOK"}
{"Action":"output","Package":"a","Test":"TestOK","Output":"=== RUN   TestOK\n"}
{"Action":"pass","Package":"a","Test":"TestOK","Elapsed":0.01}
{"Action":"run","Package":"a","Test":"TestDB"}
{"Action":"output","Package":"a","Test":"TestDB","Output":"=== RUN   TestDB\n"}
{"Action":"output","Package":"a","Test":"TestDB","Output":"    db_test.go:9: GATEWAY_TEST_POSTGRES_URL is not set\n"}
{"Action":"output","Package":"a","Test":"TestDB","Output":"--- SKIP: TestDB (0.00s)\n"}
{"Action":"skip","Package":"a","Test":"TestDB","Elapsed":0}
{"Action":"output","Package":"a","Test":"TestSoak","Output":"    soak_test.go:20: opt-in: run with -soak=60s\n"}
{"Action":"skip","Package":"a","Test":"TestSoak","Elapsed":0}
{"Action":"pass","Package":"a","Elapsed":0.5}
{"Action":"run","Package":"b","Test":"TestBad"}
{"Action":"output","Package":"b","Test":"TestBad","Output":"    b_test.go:3: want 2, got 3\n"}
{"Action":"fail","Package":"b","Test":"TestBad","Elapsed":0}
{"Action":"output","Package":"b","Output":"FAIL\n"}
{"Action":"fail","Package":"b","Elapsed":0.2}
not json: a build line
{"Action":"output","Package":"c","Output":"?   \tc\t[no test files]\n"}
{"Action":"skip","Package":"c","Elapsed":0}
`

func TestSummarize(t *testing.T) {
	var out strings.Builder
	s := summarize(strings.NewReader(stream), &out)
	s.report(&out)
	got := out.String()
	if s.passed != 1 || s.failed != 1 || s.skipped != 1 || s.pkgFailed != 1 {
		t.Fatalf("counts: passed %d failed %d skipped %d pkgFailed %d", s.passed, s.failed, s.skipped, s.pkgFailed)
	}
	for _, want := range []string{
		"ok  \ta\t0.500s\n",
		"--- FAIL: TestBad (b)\n    b_test.go:3: want 2, got 3\n",
		"FAIL\tb\t0.200s\n",
		"not json: a build line\n",
		"?   \tc\t[no test files]\n",
		"SKIP a TestDB: db_test.go:9: GATEWAY_TEST_POSTGRES_URL is not set\n",
		"opt-in tests not asked for (1):\n  a TestSoak: soak_test.go:20: opt-in: run with -soak=60s\n",
		"\n1 passed, 2 failed, 1 skipped\n", // the failed test and its package
	} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q:\n%s", want, got)
		}
	}
}

func TestSkipReasonWithoutMessage(t *testing.T) {
	if got := skipReason("=== RUN   TestX\n--- SKIP: TestX (0.00s)\n"); got != "(no reason given)" {
		t.Fatalf("skipReason = %q", got)
	}
}

func TestBadRaceFlag(t *testing.T) {
	var out, errb strings.Builder
	if code := run([]string{"-race=maybe"}, &out, &errb); code != 2 || !strings.Contains(errb.String(), "-race must be") {
		t.Fatalf("code %d, stderr %q", code, errb.String())
	}
}

func TestOptInReason(t *testing.T) {
	for reason, want := range map[string]bool{
		"soak_test.go:20: opt-in: run with -soak=60s": true,
		"opt-in: run with -soak":                      true,
		"x_test.go:3: needs Redis (not opt-in: CI)":   false,
		"(no reason given)":                           false,
	} {
		if got := optInReason(reason); got != want {
			t.Errorf("optInReason(%q) = %v", reason, got)
		}
	}
}
