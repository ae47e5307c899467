package guard

import (
	"testing"

	"github.com/gwlabs/gateway/internal/attackfamilies"
)

// The families of attacks an outside check found passing the guard,
// each with ten phrasings (internal/attackfamilies),
// each checked on its own (the guard keeps no state between checks, the
// gateway's cool-down aside: each is a fresh key's first try). At most
// one in ten may pass.

func families() []attackfamilies.Family { return attackfamilies.All() }

func TestFamiliesOfTheOutsideCheck(t *testing.T) {
	g := newGuard(t)
	for _, f := range families() {
		tries := f.Tries()
		passed := 0
		for k, segs := range tries {
			if v := g.Check(segs); !v.Flagged {
				passed++
				t.Logf("%s, try %d: passed (score %.3f)", f.Name, k, v.Score)
			}
		}
		t.Logf("%s: %d of %d passed", f.Name, passed, len(tries))
		if len(tries) < 5 || passed*10 > len(tries) {
			t.Errorf("%s: %d of %d passed, want at most 1 in 10", f.Name, passed, len(tries))
		}
	}
}
