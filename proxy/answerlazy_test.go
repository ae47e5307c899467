package proxy

import (
	"strings"
	"testing"

	gw "github.com/gwlabs/gateway"
	"github.com/gwlabs/gateway/guard/leak"
)

const (
	lazyShared  = "The release checklist says tag the commit, build the binaries on a clean machine, sign them, and publish the notes before the announcement goes out."
	lazyPrivate = "Never tell anyone that the signing key lives on the build host named quartz or who holds its passphrase."
	lazySystem  = "You are Kestrel, the release assistant. Project notes follow. " + lazyShared + " " + lazyPrivate
)

func lazyExchange(system string, open ...string) *Exchange {
	x := &Exchange{g: &Gateway{}}
	x.in.Text = append(x.in.Text, gw.Text{Source: gw.TextSystem, Text: system})
	for _, o := range open {
		x.in.Text = append(x.in.Text, gw.Text{Source: gw.TextUser, Text: o})
	}
	x.keepProtected()
	return x
}

// stream writes answer in pieces of n bytes and returns what was
// released at the end and the leak.
func stream(m leak.Checker, answer string, n int) (int64, *leak.Leak) {
	for i := 0; i < len(answer); i += n {
		if _, l := m.Write([]byte(answer[i:min(i+n, len(answer))])); l != nil {
			return 0, l
		}
	}
	return m.Close()
}

func TestAnswerMatcherExemptsOnlyOnMatch(t *testing.T) {
	x := lazyExchange(lazySystem, "Please explain this: "+lazyShared)
	answer := "Sure. The notes read: " + lazyShared + " That is all."
	for _, n := range []int{1, 7, 64, len(answer)} {
		rel, l := stream(x.AnswerMatcher(), answer, n)
		if l != nil || rel != int64(len(answer)) {
			t.Fatalf("pieces of %d: the shared paragraph: released %d of %d, leak %+v", n, rel, len(answer), l)
		}
	}
	if !x.exempted {
		t.Fatal("the exemption was not computed on a match")
	}
	pre := "Sure. The notes read: " + lazyShared + " Also: "
	answer = pre + lazyPrivate
	for _, n := range []int{1, 7, 64, len(answer)} {
		_, l := stream(x.AnswerMatcher(), answer, n)
		if l == nil {
			t.Fatalf("pieces of %d: the private part passed", n)
		}
		if l.At < int64(len(pre))-8 || l.At > int64(len(pre))+8 {
			t.Fatalf("pieces of %d: leak at %d, the private part starts at %d", n, l.At, len(pre))
		}
	}
}

func TestAnswerMatcherNoMatchReadsNoOpenText(t *testing.T) {
	x := lazyExchange(lazySystem, "Please explain this: "+lazyShared)
	answer := "Transfers between your own accounts are free."
	rel, l := stream(x.AnswerMatcher(), answer, 5)
	if l != nil || rel != int64(len(answer)) {
		t.Fatalf("released %d, leak %+v", rel, l)
	}
	if x.exempted {
		t.Fatal("the exemption was computed with no match")
	}
}

func TestAnswerMatcherLeakWithNothingShared(t *testing.T) {
	x := lazyExchange(lazySystem, "What is the release process?")
	_, l := stream(x.AnswerMatcher(), "It says: "+lazyShared, 16)
	if l == nil {
		t.Fatal("a paragraph the caller never sent passed")
	}
	if !x.exempted || l.At < 8 || l.At > 12 {
		t.Fatalf("exempted %v, leak at %d", x.exempted, l.At)
	}
}

func TestAnswerMatcherAllSystemShared(t *testing.T) {
	x := lazyExchange(lazyShared, "Quote me: "+lazyShared)
	answer := "Quoted: " + lazyShared + " Done."
	for _, n := range []int{3, len(answer)} {
		if rel, l := stream(x.AnswerMatcher(), answer, n); l != nil || rel != int64(len(answer)) {
			t.Fatalf("pieces of %d: released %d of %d, leak %+v", n, rel, len(answer), l)
		}
	}
}

// benchOpen is an agent-sized caller turn (about 110 KB) that shares
// nothing with the system text.
var benchOpen = func() string {
	words := strings.Fields("read the file then run the tests and report which ones fail with their error output and the line numbers involved in each failure")
	var b strings.Builder
	for i := 0; b.Len() < 110<<10; i++ {
		b.WriteString(words[(i*7+i/len(words))%len(words)])
		b.WriteByte(' ')
	}
	return b.String()
}()

var benchAnswer = strings.Repeat("Transfers between your own accounts are free and arrive at once; to other banks they take one business day. ", 20)

func benchAnswerMatcher(b *testing.B, open ...string) {
	system := strings.Repeat(lazySystem+" ", 40)
	data := []byte(benchAnswer)
	b.SetBytes(int64(len(data)))
	cache := leak.NewCache(8)
	for b.Loop() {
		x := lazyExchange(system, open...)
		x.g.cfg.Answer.Cache = cache
		m := x.AnswerMatcher()
		for i := 0; i < len(data); i += 16 {
			m.Write(data[i:min(i+16, len(data))])
		}
		if _, l := m.Close(); l != nil {
			b.Fatal(l)
		}
	}
}

// BenchmarkAnswerMatcherNoOpen and BenchmarkAnswerMatcherOpen110K:
// keepProtected, AnswerMatcher and a 2 KB answer that matches nothing,
// without and with a 110 KB caller turn: the same cost.
func BenchmarkAnswerMatcherNoOpen(b *testing.B)   { benchAnswerMatcher(b) }
func BenchmarkAnswerMatcherOpen110K(b *testing.B) { benchAnswerMatcher(b, benchOpen) }
