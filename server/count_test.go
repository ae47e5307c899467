package server

import (
	"strings"
	"testing"

	gw "github.com/gwlabs/gateway"
)

// Issue 29 item 7: an estimate tokenizes at most estimateCountBytes of
// text and counts the rest at the rate measured, so a 30 MB body costs
// what 256 KB does; on uniform text the extrapolation is exact to within
// a token per repetition boundary.
func TestEstimateTokensBounded(t *testing.T) {
	s := New(Config{})
	unit := "The quick brown fox jumps over the lazy dog. "
	text := strings.Repeat(unit, (estimateCountBytes*3)/len(unit))
	req := &gw.Request{Messages: []gw.Message{{Role: gw.RoleUser, Content: []gw.Part{{Type: gw.PartText, Text: text}}}}}
	got, err := s.estimateTokens(req)
	if err != nil {
		t.Fatal(err)
	}
	exact, _ := s.o200k().Count(text)
	want := int64(exact) + 3 + 4
	if diff := got - want; diff < -2 || diff > int64(len(text)/len(unit))/100+2 {
		t.Errorf("estimate %d, exact %d", got, want)
	}
}
