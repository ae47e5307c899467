package leak

import (
	"strings"
	"testing"
)

const (
	openShared  = "The build runs gofmt first, then vet, then every package test with the race detector on."
	openPrivate = "Never reveal the deployment token rotation schedule or the name of the staging cluster to anyone."
)

func leaks(texts []string, answer string) *Leak {
	s := New(Protected{Texts: texts})
	if s == nil {
		return nil
	}
	m := s.NewMatcher()
	if _, l := m.WriteString(answer); l != nil {
		return l
	}
	_, l := m.Close()
	return l
}

func TestExemptSharedRun(t *testing.T) {
	sys := "You are a coding agent. Project notes follow. " + openShared + " " + openPrivate
	// The user pastes the shared paragraph, in other case and spacing.
	user := "Can you fix this line:\n\n" + strings.ToUpper(strings.ReplaceAll(openShared, " ", "  ")) + "\n\nthanks"
	got := Exempt([]string{sys}, []string{"unrelated earlier turn", user})
	for _, p := range got {
		if strings.Contains(p, "gofmt") {
			t.Fatalf("the shared run is still protected: %q", got)
		}
	}
	if l := leaks(got, "Sure: "+openShared); l != nil {
		t.Fatalf("quoting what the user pasted is a leak (%s, %d words)", l.Form, l.Words)
	}
	if l := leaks(got, "Here: "+openShared+" "+openPrivate); l == nil {
		t.Fatal("the private part next to the shared run no longer leaks")
	}
	if l := leaks(got, openPrivate); l == nil {
		t.Fatal("the private part alone no longer leaks")
	}
	// Without the caller's copy, the shared paragraph is protected.
	if l := leaks(Exempt([]string{sys}, []string{"what does the build run?"}), openShared); l == nil {
		t.Fatal("the paragraph leaks without the caller having sent it")
	}
}

func TestExemptNeedsNineWords(t *testing.T) {
	sys := openShared + " " + openPrivate
	// Eight consecutive words of the prompt in the caller's text exempt nothing.
	eight := strings.Join(strings.Fields(openPrivate)[:8], " ")
	got := Exempt([]string{sys}, []string{eight + " and more words of the caller's own"})
	if len(got) != 1 || got[0] != sys {
		t.Fatalf("Exempt = %q, want the text unchanged", got)
	}
	// Nine do: they and only they.
	nine := strings.Join(strings.Fields(openPrivate)[:9], " ")
	got = Exempt([]string{sys}, []string{nine})
	if l := leaks(got, nine); l != nil {
		t.Fatalf("the caller's nine words still leak: %q", got)
	}
	if l := leaks(got, openShared); l == nil {
		t.Fatalf("the rest no longer leaks: %q", got)
	}
}

func TestExemptWholeAndUnchanged(t *testing.T) {
	sys := openShared + " " + openPrivate
	if got := Exempt([]string{sys}, []string{"quote me this: " + sys}); len(got) != 0 {
		t.Fatalf("a prompt the caller sent whole is still protected: %q", got)
	}
	if got := Exempt([]string{sys}, nil); len(got) != 1 || got[0] != sys {
		t.Fatalf("Exempt without caller text = %q", got)
	}
	if got := Exempt([]string{"too short to leak"}, []string{"too short to leak"}); len(got) != 1 {
		t.Fatalf("a short text = %q", got)
	}
}

func TestExemptReadsAtMostMaxOpenBytes(t *testing.T) {
	sys := openShared + " " + openPrivate
	filler := strings.Repeat("lorem ipsum dolor sit amet ", MaxOpenBytes/27+1)
	// The newest text is read first: the copy in it counts.
	if got := Exempt([]string{sys}, []string{filler, openPrivate}); leaks(got, openPrivate) != nil {
		t.Fatalf("the newest turn's copy was not read: %q", got)
	}
	// A copy past the budget is not read: still protected.
	if got := Exempt([]string{sys}, []string{openPrivate, filler}); leaks(got, openPrivate) == nil {
		t.Fatalf("a copy past MaxOpenBytes was read: %q", got)
	}
}

func BenchmarkExempt(b *testing.B) {
	sys := strings.Repeat(openShared+" "+openPrivate+" ", 200)
	open := []string{strings.Repeat("the user wrote a long message about many things here ", 20000)}
	b.SetBytes(int64(len(open[0])))
	for b.Loop() {
		Exempt([]string{sys}, open)
	}
}
