package eval

import "testing"

func TestFormatOK(t *testing.T) {
	for _, tc := range []struct {
		format, text string
		want         bool
	}{
		{"json", ` {"a":1} `, true},
		{"json", "```json\n{\"a\":[1,2]}\n```", true},
		{"json", "Here you go: {\"a\":1}", false},
		{"code", "Sure:\n```go\nfunc f() {}\n```\n", true},
		{"code", "```go\nfunc f() {}", false},
		{"code", "func f() {}", false},
		{"", "anything", true},
	} {
		if got := formatOK(tc.format, tc.text); got != tc.want {
			t.Errorf("formatOK(%q, %q) = %v", tc.format, tc.text, got)
		}
	}
}

func TestWorkload(t *testing.T) {
	ps, err := Workload()
	if err != nil {
		t.Fatal(err)
	}
	cats := map[string]int{}
	ids := map[string]bool{}
	for _, p := range ps {
		cats[p.Category]++
		if ids[p.ID] || p.Prompt == "" || (p.JSON && p.Format != "json") {
			t.Errorf("bad prompt %+v", p)
		}
		ids[p.ID] = true
	}
	for _, c := range []string{"question", "explanation", "code", "extraction", "json", "long-form"} {
		if cats[c] < 2 {
			t.Errorf("category %s has %d prompts", c, cats[c])
		}
	}
}
