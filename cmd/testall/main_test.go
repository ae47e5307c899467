package main

import (
	"encoding/binary"
	"io"
	"net"
	"slices"
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
{"Action":"run","Package":"b","Test":"TestTable"}
{"Action":"run","Package":"b","Test":"TestTable/case"}
{"Action":"output","Package":"b","Test":"TestTable/case","Output":"    b_test.go:9: case broke\n"}
{"Action":"fail","Package":"b","Test":"TestTable/case","Elapsed":0}
{"Action":"fail","Package":"b","Test":"TestTable","Elapsed":0}
{"Action":"output","Package":"b","Output":"FAIL\n"}
{"Action":"output","Package":"b","Output":"FAIL\tb\t0.200s\n"}
{"Action":"fail","Package":"b","Elapsed":0.2}
{"Action":"output","Package":"d","Output":"panic: boom outside a test\n"}
{"Action":"output","Package":"d","Output":"FAIL\td\t0.100s\n"}
{"Action":"fail","Package":"d","Elapsed":0.1}
not json: a build line
{"Action":"output","Package":"c","Output":"?   \tc\t[no test files]\n"}
{"Action":"skip","Package":"c","Elapsed":0}
`

func TestSummarize(t *testing.T) {
	var out strings.Builder
	s := summarize(strings.NewReader(stream), &out)
	s.report(&out)
	got := out.String()
	// Issue 38: a failed test counts once, not again with its package
	// (before: 2 for one failure) nor with its parent; a package that
	// failed outside any test counts on its own.
	if s.passed != 1 || s.failed != 2 || s.skipped != 1 || s.pkgFailed != 2 || s.pkgAlone != 1 {
		t.Fatalf("counts: passed %d failed %d skipped %d pkgFailed %d pkgAlone %d", s.passed, s.failed, s.skipped, s.pkgFailed, s.pkgAlone)
	}
	if n := strings.Count(got, "FAIL\tb\t"); n != 1 {
		t.Errorf("package b's FAIL line printed %d times:\n%s", n, got)
	}
	for _, want := range []string{
		"ok  \ta\t0.500s\n",
		"--- FAIL: TestBad (b)\n    b_test.go:3: want 2, got 3\n",
		"FAIL\tb\t0.200s\n",
		"not json: a build line\n",
		"?   \tc\t[no test files]\n",
		"SKIP a TestDB: db_test.go:9: GATEWAY_TEST_POSTGRES_URL is not set\n",
		"opt-in tests not asked for (1):\n  a TestSoak: soak_test.go:20: opt-in: run with -soak=60s\n",
		"panic: boom outside a test\n",
		"FAIL\td\t0.100s\n",
		// TestBad, TestTable/case (TestTable with it) and package d.
		"\n1 passed, 3 failed, 1 skipped\n",
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

// fakeServer answers each connection on a loopback listener with answer.
func fakeServer(t *testing.T, answer func(c net.Conn)) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				answer(c)
			}()
		}
	}()
	return ln.Addr().String()
}

// closedAddr returns a loopback address nothing listens on.
func closedAddr(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	a := ln.Addr().String()
	ln.Close()
	return a
}

// pgAnswer reads a startup message and answers AuthenticationOk for the
// databases in ok, an ErrorResponse for others.
func pgAnswer(ok ...string) func(net.Conn) {
	return func(c net.Conn) {
		var n [4]byte
		if _, err := io.ReadFull(c, n[:]); err != nil {
			return
		}
		msg := make([]byte, binary.BigEndian.Uint32(n[:])-4)
		if _, err := io.ReadFull(c, msg); err != nil {
			return
		}
		fields := strings.Split(string(msg[4:]), "\x00")
		db := ""
		for i := 0; i+1 < len(fields); i += 2 {
			if fields[i] == "database" {
				db = fields[i+1]
			}
		}
		if slices.Contains(ok, db) {
			c.Write([]byte{'R', 0, 0, 0, 8, 0, 0, 0, 0})
			return
		}
		body := "SFATAL\x00C3D000\x00Mdatabase \"" + db + "\" does not exist\x00\x00"
		b := []byte{'E', 0, 0, 0, 0}
		binary.BigEndian.PutUint32(b[1:], uint32(4+len(body)))
		c.Write(append(b, body...))
	}
}

func redisAnswer(line string) func(net.Conn) {
	return func(c net.Conn) {
		buf := make([]byte, 6)
		if _, err := io.ReadFull(c, buf); err != nil || string(buf) != "PING\r\n" {
			return
		}
		io.WriteString(c, line)
	}
}

func TestLocalServices(t *testing.T) {
	unset := func(string) string { return "" }
	t.Run("both found", func(t *testing.T) {
		pg, rd := fakeServer(t, pgAnswer("postgres")), fakeServer(t, redisAnswer("+PONG\r\n"))
		env, notes := localServices(unset, pg, rd)
		want := []string{
			postgresEnv + "=postgres://postgres@" + pg + "/postgres?sslmode=disable",
			redisEnv + "=redis://" + rd + "/0",
		}
		if !slices.Equal(env, want) {
			t.Fatalf("env %q, want %q", env, want)
		}
		if len(notes) != 2 || !strings.Contains(notes[0], "found on "+pg) || !strings.Contains(notes[1], "found on "+rd) {
			t.Errorf("notes %q", notes)
		}
	})
	t.Run("database test preferred", func(t *testing.T) {
		pg := fakeServer(t, pgAnswer("test", "postgres"))
		env, _ := localServices(unset, pg, closedAddr(t))
		if want := []string{postgresEnv + "=postgres://postgres@" + pg + "/test?sslmode=disable"}; !slices.Equal(env, want) {
			t.Fatalf("env %q, want %q", env, want)
		}
	})
	t.Run("none", func(t *testing.T) {
		env, notes := localServices(unset, closedAddr(t), closedAddr(t))
		if len(env) != 0 || len(notes) != 2 || !strings.Contains(notes[0], "will skip") || !strings.Contains(notes[1], "will skip") {
			t.Fatalf("env %q, notes %q", env, notes)
		}
	})
	t.Run("password and NOAUTH", func(t *testing.T) {
		pg := fakeServer(t, func(c net.Conn) {
			io.ReadFull(c, make([]byte, 4))
			c.Write([]byte{'R', 0, 0, 0, 8, 0, 0, 0, 5}) // MD5 password
		})
		rd := fakeServer(t, redisAnswer("-NOAUTH Authentication required.\r\n"))
		env, notes := localServices(unset, pg, rd)
		if len(env) != 0 || !strings.Contains(notes[0], "needs a password") || !strings.Contains(notes[1], "NOAUTH") {
			t.Fatalf("env %q, notes %q", env, notes)
		}
	})
	t.Run("set variables win", func(t *testing.T) {
		pg, rd := fakeServer(t, pgAnswer("postgres")), fakeServer(t, redisAnswer("+PONG\r\n"))
		env, notes := localServices(func(string) string { return "x://y" }, pg, rd)
		if len(env) != 0 || !strings.Contains(notes[0], "is set, using it") || !strings.Contains(notes[1], "is set, using it") {
			t.Fatalf("env %q, notes %q", env, notes)
		}
	})
}

// TestUnfinishedTestsShown: a package that times out names the tests that
// never ended, with their last output, before its FAIL line.
func TestUnfinishedTestsShown(t *testing.T) {
	const hung = `{"Action":"run","Package":"e","Test":"TestHang"}
{"Action":"output","Package":"e","Test":"TestHang","Output":"    e_test.go:5: waiting for the vendor\n"}
{"Action":"output","Package":"e","Output":"panic: test timed out after 30m0s\n"}
{"Action":"fail","Package":"e","Elapsed":1800}
`
	var out strings.Builder
	s := summarize(strings.NewReader(hung), &out)
	got := out.String()
	want := "--- unfinished: TestHang (e)\n    e_test.go:5: waiting for the vendor\nFAIL\te\t1800.000s\n"
	if !strings.Contains(got, want) || !strings.Contains(got, "panic: test timed out") {
		t.Errorf("output lacks the unfinished test before the FAIL line:\n%s", got)
	}
	if s.pkgFailed != 1 || s.pkgAlone != 1 || len(s.output) != 0 {
		t.Errorf("pkgFailed %d pkgAlone %d, %d outputs left", s.pkgFailed, s.pkgAlone, len(s.output))
	}
}
