package guard

import "testing"

func TestHasCueWords(t *testing.T) {
	for _, s := range []string{"IGNORE this", "xx instructions", "the PROMPT", "pAsSwOrD", "a secret", "jailbreak", "reveal", "disregard", "pretend", "sYstem", "SYSTEM"} {
		if !hasCue(s) {
			t.Errorf("no cue found in %q", s)
		}
	}
	for _, s := range []string{"", "ign", "The quarterly report shows revenue growth", "sys tem"} {
		if hasCue(s) {
			t.Errorf("a cue found in %q", s)
		}
	}
}
