package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gwlabs/gateway/guard"
	trainer "github.com/gwlabs/gateway/guard/train"
)

// TestIndirectInjectionsPlantOrdersOnlyInAttacks checks that every attack
// carries one of the planted payloads inside a document, that no benign
// twin does, and that the twins share the attacks' guises (so that the
// guise alone cannot be what the model learns).
func TestIndirectInjectionsPlantOrdersOnlyInAttacks(t *testing.T) {
	ex := indirectInjections(3)
	orders := make([]string, 0, len(payloads)+len(toolOrders))
	for _, p := range append(append([]string(nil), payloads...), toolOrders...) {
		// The part before any placeholder, without its first letter
		// (lowerFirst may have changed it).
		head, _, _ := strings.Cut(p, "{")
		orders = append(orders, head[1:min(len(head), 24)])
	}
	carries := func(text string) bool {
		for _, o := range orders {
			if strings.Contains(text, o) {
				return true
			}
		}
		return false
	}
	var attacks, benign, benignMarked int
	for _, e := range ex {
		switch {
		case e.Attack:
			attacks++
			if e.Kind != guard.KindInjection {
				t.Fatalf("attack of kind %q, want injection: %q", e.Kind, e.Text)
			}
			if !carries(e.Text) {
				t.Fatalf("attack without a planted order: %q", e.Text)
			}
		default:
			benign++
			if carries(e.Text) {
				t.Fatalf("benign twin carries a planted order: %q", e.Text)
			}
			if strings.Contains(e.Text, "[system]") || strings.Contains(e.Text, "Assistant:") || strings.Contains(e.Text, "<!--") {
				benignMarked++
			}
		}
	}
	if attacks == 0 || attacks != benign {
		t.Fatalf("%d attacks and %d benign twins, want equal and non-zero", attacks, benign)
	}
	if benignMarked < benign/20 {
		t.Errorf("only %d of %d benign twins wear an attack's guise", benignMarked, benign)
	}
}

// TestRolePlaysPairAttacksWithTwins checks the role-play generator's
// balance, that its attacks and twins share the set-ups, and that what
// tells them apart is the removal of limits: every attack carries a
// marker of it and no twin does.
func TestRolePlaysPairAttacksWithTwins(t *testing.T) {
	removal := []string{
		"without filters", "ethical protocols", "safety layer disabled", "policy suspended", "restrictions lifted",
		"filter is off", "no guidelines", "ignore refusals", "no ethical limits", "content guidelines", "never refuses",
		"exempt from all policies", "real methods for crimes", "do not censor", "not bound by any restrictions",
		"does not and will say anything", "ignores every policy", "unfiltered",
	}
	marked := func(s string) bool {
		s = strings.ToLower(s)
		for _, m := range removal {
			if strings.Contains(s, m) {
				return true
			}
		}
		return false
	}
	ex := rolePlays(3)
	var attacks, benign, attacksWithSetup, twinsWithSetup int
	setup := func(s string) bool {
		return strings.Contains(s, "fictional roleplay") || strings.Contains(s, "interactive story") || strings.Contains(s, "fictional chat")
	}
	for _, e := range ex {
		if e.Attack {
			attacks++
			if e.Kind != guard.KindJailbreak {
				t.Fatalf("attack of kind %q, want jailbreak: %q", e.Kind, e.Text)
			}
			if !marked(e.Text) {
				t.Errorf("attack without a removal of limits: %q", e.Text)
			}
			if setup(e.Text) {
				attacksWithSetup++
			}
			continue
		}
		benign++
		if marked(e.Text) {
			t.Errorf("benign twin removes limits: %q", e.Text)
		}
		if setup(e.Text) {
			twinsWithSetup++
		}
	}
	if attacks == 0 || attacks != benign {
		t.Fatalf("%d attacks and %d benign twins, want equal and non-zero", attacks, benign)
	}
	if attacksWithSetup == 0 || twinsWithSetup < attacksWithSetup/2 {
		t.Errorf("%d attacks and %d twins use a role-play set-up, want both and the twins at least half as often", attacksWithSetup, twinsWithSetup)
	}
}

func TestGeneratorsAreDeterministic(t *testing.T) {
	for name, gen := range map[string]func(uint64) []trainer.Example{"indirect": indirectInjections, "roleplay": rolePlays, "everyday": foreignHardNegatives} {
		a, b, c := gen(5), gen(5), gen(6)
		if len(a) != len(b) {
			t.Fatalf("%s: %d then %d examples for the same seed", name, len(a), len(b))
		}
		same := true
		for i := range a {
			if a[i] != b[i] {
				t.Fatalf("%s: example %d differs for the same seed", name, i)
			}
			if i < len(c) && a[i] != c[i] {
				same = false
			}
		}
		if same {
			t.Errorf("%s: seeds 5 and 6 give the same examples", name)
		}
	}
}

// No everyday sentence carries one of the phrasebooks' attacks: they are
// trained on as benign text.
func TestEverydayForeignHoldsNoAttack(t *testing.T) {
	for _, pb := range phrasebooks() {
		for _, attack := range append(append(pb.override, pb.extract...), pb.persona...) {
			for _, lang := range everydayForeign() {
				for _, text := range lang {
					if strings.Contains(text, attack) {
						t.Errorf("everyday text %q holds the attack %q", text, attack)
					}
				}
			}
		}
	}
}

// The generated examples carry none of the names and phrases that mark
// an evaluation-only collection (Tensor Trust's guardian personas and
// secret words, HackAPrompt's target phrase): with them, held-out
// figures for those collections measured what had been trained on.
func TestGeneratedExamplesKeepEvaluationOnlyMarksOut(t *testing.T) {
	marks := []string{"sentient door", "simsala", "ekps", "expert key protection", "wavelength", "bazinga", "i have been pwned"}
	for _, seed := range []uint64{1, 2} {
		for _, e := range trainingSet(nil, nil, seed, 1) {
			text := strings.ToLower(e.Text)
			for _, m := range marks {
				if strings.Contains(text, m) {
					t.Errorf("seed %d: generated example holds %q: %.80q", seed, m, e.Text)
				}
			}
		}
	}
}

// TestDevTrafficStaysApartFromTheBenignSets: no text the training
// generators write is a row of the benign evaluation sets, so the sets' false-positive rates are measured on
// text the model never saw.
func TestDevTrafficStaysApartFromTheBenignSets(t *testing.T) {
	files, err := filepath.Glob("../../guard/testdata/benign/*.jsonl")
	if err != nil || len(files) == 0 {
		t.Fatalf("benign sets: %v %v", files, err)
	}
	rows := map[string]bool{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(string(b), "\n") {
			var r struct{ Text string }
			if json.Unmarshal([]byte(line), &r) == nil && r.Text != "" {
				rows[strings.ToLower(strings.TrimSpace(r.Text))] = true
			}
		}
	}
	n := 0
	for seed := uint64(1); seed <= 3; seed++ {
		own := append(handWritten(), templated(seed)...)
		for _, g := range []func(uint64) []trainer.Example{documentTemplates, techDocs, multilingual, foreignHardNegatives, operatorPrompts, indirectInjections, rolePlays, devTraffic} {
			own = append(own, g(seed)...)
		}
		for _, e := range own {
			n++
			if rows[strings.ToLower(strings.TrimSpace(e.Text))] {
				t.Errorf("a generated example is a row of the benign sets: %q", e.Text)
			}
		}
	}
	if n < 3000 {
		t.Errorf("only %d generated examples", n)
	}
}
