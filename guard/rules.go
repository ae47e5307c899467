package guard

// Rules catch a few phrasings that are attacks whatever the context:
// a non-negated "ignore ... previous ... instructions", a request to
// reveal the system prompt, and named jailbreak personas being switched
// on. They run on the concept-tagged tokens, so they see through the
// same obfuscations as the model. A rule hit lifts the score to
// ruleScore.

const ruleScore = 0.99

// ruleHit is the first rule that matched.
type ruleHit struct {
	name string
	kind Kind // empty: the kind model decides
}

func (sc *scratch) word(i int) string {
	t := sc.tokens[i]
	return string(sc.toks[t.start:t.end]) // the compiler does not copy for comparisons
}

func (sc *scratch) has(i int, c int) bool {
	return i >= 0 && i < len(sc.tokens) && sc.tokens[i].concepts&(1<<uint(c)) != 0
}

// wordIs compares token i without allocating.
func (sc *scratch) wordIs(i int, w string) bool {
	if i < 0 || i >= len(sc.tokens) {
		return false
	}
	t := sc.tokens[i]
	return string(sc.toks[t.start:t.end]) == w
}

func findRules(sc *scratch) {
	n := len(sc.tokens)
	for i := 0; i < n && sc.rule.name == ""; i++ {
		t := sc.tokens[i]
		if t.concepts == 0 || t.neg {
			continue
		}
		switch {
		case t.concepts&(1<<cIgnore) != 0 && !sc.quoted(i):
			// ignore / disregard / forget (all) (the) previous|above instructions|rules
			prior := false
			for j := i + 1; j < n && j <= i+5; j++ {
				if sc.has(j, cPrior) || sc.wordIs(j, "all") {
					prior = true
					continue
				}
				if prior && sc.has(j, cInstr) && !sc.wordIs(j, "context") {
					sc.rule = ruleHit{"ignore previous instructions", ""}
					break
				}
			}
		case t.concepts&(1<<cReveal) != 0:
			// reveal|print|repeat (me) (your|the) system|initial|hidden prompt|instructions
			owner := false
			for j := i + 1; j < n && j <= i+5; j++ {
				if sc.has(j, cYour) || sc.has(j, cSystem) || sc.has(j, cPrior) {
					owner = true
					continue
				}
				if owner && (sc.wordIs(j, "prompt") || sc.wordIs(j, "instructions") || sc.wordIs(j, "pre-prompt") || sc.wordIs(j, "preprompt")) {
					sc.rule = ruleHit{"asks for the system prompt", KindExtraction}
					break
				}
			}
		case sc.wordIs(i, "developer") && sc.wordIs(i+1, "mode"):
			for j := i + 2; j < n && j <= i+5; j++ {
				if sc.has(j, cEnabled) || sc.wordIs(j, "on") {
					sc.rule = ruleHit{"enables developer mode", KindJailbreak}
					break
				}
			}
		case sc.wordIs(i, "anything") && sc.wordIs(i+1, "now") && sc.wordIs(i-1, "do"):
			sc.rule = ruleHit{"do anything now persona", KindJailbreak}
		case sc.wordIs(i, "you") && (sc.wordIs(i+1, "are") || sc.wordIs(i+1, "will")) && sc.wordIs(i+2, "now"):
			for j := i + 3; j < n && j <= i+7; j++ {
				if sc.has(j, cPersona) || sc.wordIs(j, "unrestricted") || sc.wordIs(j, "unfiltered") || sc.wordIs(j, "uncensored") {
					sc.rule = ruleHit{"switches to a jailbreak persona", KindJailbreak}
					break
				}
			}
		}
	}
}

// quoted reports whether token i is being talked about rather than
// said: preceded closely by "says", "like", "such as" or "if the user".
func (sc *scratch) quoted(i int) bool {
	for j := i - 1; j >= 0 && j >= i-4; j-- {
		switch sc.word(j) {
		case "says", "say", "like", "as", "types", "writes", "asks", "tells", "if", "whenever", "attempts", "tries", "try":
			return true
		}
	}
	return false
}
