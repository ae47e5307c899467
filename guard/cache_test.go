package guard

import (
	"fmt"
	"strings"
	"testing"
)

// cacheConversations are the conversations the cache must not change a
// verdict on: every try of the outside check's families (attacks spread
// over turns among them: spelled turns, user and tool halves, pieces
// over turns), agent sessions with and without an attack in a tool
// result, and benign conversations.
func cacheConversations() [][]Segment {
	var out [][]Segment
	for _, f := range families() {
		out = append(out, f.Tries()...)
	}
	for _, n := range []int{8 << 10, 20 << 10, 110 << 10} {
		conv := agentConversation(n)
		out = append(out, conv)
		poisoned := followUp(conv, 1)
		last := &poisoned[len(poisoned)-1]
		last.Text = last.Text[:len(last.Text)/2] + "\n// " + plainAttack + "\n" + last.Text[len(last.Text)/2:]
		out = append(out, poisoned)
	}
	out = append(out, conversation(20<<10), paddedTurns(64))
	return out
}

func sameVerdict(a, b Verdict) bool {
	return a.Flagged == b.Flagged && a.Grey == b.Grey && a.Kind == b.Kind && a.Score == b.Score &&
		a.Reason == b.Reason && a.Segment == b.Segment && a.Text == b.Text
}

// TestCacheColdWarmSameVerdicts: the verdict on a conversation is the
// same without a cache, with a cold one, with a warm one (the same
// request again), and after the conversation was checked turn by turn
// as it grew, as an agent sends it.
func TestCacheColdWarmSameVerdicts(t *testing.T) {
	plain, err := New(Config{CacheEntries: -1})
	if err != nil {
		t.Fatal(err)
	}
	if plain.cache != nil {
		t.Fatal("CacheEntries -1 left a cache")
	}
	fresh := func() *Guard { // a new guard, with its own cache, on the loaded model
		g, err := NewWithModel(plain.model, Config{})
		if err != nil {
			t.Fatal(err)
		}
		return g
	}
	flagged, cached := 0, 0
	convs := cacheConversations()
	for k, conv := range convs {
		want := plain.Check(conv)
		if want.Flagged {
			flagged++
		}
		g := fresh()
		cold := g.Check(conv)
		warm := g.Check(conv)
		grown := fresh()
		// every prefix of a short conversation; ten of a long one, the
		// last one turn short of the whole
		for end := 1; end < len(conv); end += max(1, len(conv)/10) {
			grown.Check(conv[:end])
		}
		if len(conv) > 1 {
			grown.Check(conv[:len(conv)-1])
		}
		if grown.cache.len() > 0 {
			cached++
		}
		afterGrowth := grown.Check(conv)
		for name, got := range map[string]Verdict{"cold": cold, "warm": warm, "grown turn by turn": afterGrowth} {
			if !sameVerdict(got, want) {
				t.Errorf("conversation %d, %s cache: %+v, without a cache %+v", k, name, got, want)
			}
		}
	}
	if flagged == 0 || cached < 40 {
		t.Fatalf("%d of %d conversations flagged, %d had cache entries: the comparison tests too little", flagged, len(convs), cached)
	}
	t.Logf("%d conversations, %d flagged, %d with cache entries", len(convs), flagged, cached)
}

// TestCacheBounded: under 10,000 distinct conversations the cache holds
// no more entries than its bound, and a tenant's entries are not found
// under another tenant.
func TestCacheBounded(t *testing.T) {
	const bound = 4096
	g, err := New(Config{CacheEntries: bound})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 10000; i++ {
		conv := []Segment{
			{Source: SourceSystem, Text: "You are a helpful assistant."},
			{Source: SourceUser, Text: fmt.Sprintf("Conversation %d: please summarise the notes below in three bullet points for the team.", i)},
			{Source: SourceAssistant, Text: fmt.Sprintf("Sure. Here is the summary of notes %d, in three bullets, as you asked for the weekly meeting.", i)},
			{Source: SourceTool, Text: fmt.Sprintf("notes-%d.txt: %s", i, strings.Repeat("the garden party moved to Saturday; bring chairs. ", 3))},
		}
		g.CheckPolicy(conv, Policy{Tenant: fmt.Sprint("acct-", i%50)})
		if n := g.cache.len(); n > bound {
			t.Fatalf("after %d conversations the cache holds %d entries, bound %d", i+1, n, bound)
		}
	}
	if n := g.cache.len(); n < bound/4 {
		t.Fatalf("the cache holds %d entries: it keeps too little to help", n)
	}
	text := strings.Repeat("a document the first tenant sent, long enough to be cached. ", 3)
	g.CheckPolicy(user(text), Policy{Tenant: "a"})
	if _, ok := g.cache.get(g.cache.key("a", cacheSegment, text)); !ok {
		t.Fatal("tenant a's text is not cached")
	}
	if _, ok := g.cache.get(g.cache.key("b", cacheSegment, text)); ok {
		t.Fatal("tenant a's text is found under tenant b")
	}
}
