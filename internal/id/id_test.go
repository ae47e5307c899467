package id

import (
	"sort"
	"strings"
	"testing"
	"time"
)

func TestNew(t *testing.T) {
	base := time.UnixMilli(1_800_000_000_000)
	var ids []string
	seen := map[string]bool{}
	for i := range 1000 {
		s := New("req_", base.Add(time.Duration(i)*time.Millisecond))
		if len(s) != 30 || !strings.HasPrefix(s, "req_") {
			t.Fatalf("bad id %q", s)
		}
		if strings.ContainsAny(s[4:], "ILOU") {
			t.Fatalf("non-Crockford char in %q", s)
		}
		if seen[s] {
			t.Fatalf("repeat %q", s)
		}
		seen[s] = true
		ids = append(ids, s)
	}
	if !sort.StringsAreSorted(ids) {
		t.Fatal("ids minted in time order do not sort in time order")
	}
	if got := Random("req_ABC"); got != "ABC" {
		t.Fatalf("Random = %q", got)
	}
}
