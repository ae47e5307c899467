package guard

import (
	"strings"
)

// Many-shot extraction: one message holds a long made-up dialogue in
// which the "assistant" answers, turn after turn, by giving out its
// instructions ("Assistant: Sure, my system prompt says ..."), and ends
// with a user turn asking the same of the real model. Each turn alone
// reads as an ordinary question and answer; what makes it an attack is
// the transcript as a whole: a pattern of disclosures the model is led
// to continue. manyShot reads the transcript as one: the labelled turns
// of the text, how many of the assistant's disclose its instructions,
// and whether a user's turn comes last.

// Bounds of a many-shot transcript: at least manyShotTurns assistant
// turns, most of them (and at least manyShotTurns) disclosing
// instructions, the last labelled turn the user's.
const manyShotTurns = 3

// turnLabels are the speaker labels a transcript line starts with
// ("User:", "**Assistant:**", "Q:"), true for the assistant's side.
var turnLabels = map[string]bool{
	"user": false, "human": false, "person": false, "customer": false, "q": false, "question": false, "me": false,
	"you": false, "client": false, "prompt": false,
	"assistant": true, "ai": true, "bot": true, "chatbot": true, "model": true, "a": true, "answer": true,
	"agent": true, "gpt": true, "chatgpt": true, "claude": true, "gemini": true, "llm": true, "response": true,
}

// disclosures are what an assistant's turn says when it gives out its
// instructions (lowercased).
var disclosures = []string{
	"my instructions", "my system prompt", "my system message", "my prompt", "my initial prompt",
	"my hidden prompt", "my original prompt", "my guidelines", "my directives", "my rules are",
	"my configuration", "my system instructions", "my secret instructions", "my hidden instructions",
	"i was instructed", "i have been instructed", "i've been instructed", "i was told to", "i was told:",
	"i was programmed to", "i was given these instructions", "instructions i was given",
	"the instructions i received", "system prompt is", "system prompt says", "system prompt reads",
	"my developer told me", "my operator told me", "here is my prompt", "here are my instructions",
	"my pre-prompt", "my preprompt",
}

// manyShot reports whether text is a made-up transcript of at least
// manyShotTurns assistant turns, most of which disclose instructions,
// ending with the user's turn.
func manyShot(text string) bool {
	if strings.Count(text, "\n") < 2*manyShotTurns-1 {
		return false
	}
	turns, disclosing := 0, 0
	last := false // the last label's side: true for the assistant
	var turn strings.Builder
	endTurn := func() {
		if last && turn.Len() > 0 && discloses(turn.String()) {
			disclosing++
		}
		turn.Reset()
	}
	for line := range strings.Lines(text) {
		side, rest, ok := turnLabel(line)
		if !ok {
			if last && turn.Len() < 4096 {
				turn.WriteString(line)
			}
			continue
		}
		endTurn()
		last = side
		if side {
			turns++
			turn.WriteString(rest)
		}
	}
	endTurn()
	return !last && turns >= manyShotTurns && disclosing >= manyShotTurns && 2*disclosing > turns
}

// disclosureStems are in every one of disclosures.
var disclosureStems = []string{"instruct", "prompt", "guideline", "directive", "rules", "configuration", "told", "programmed", "system message"}

// discloses reports whether an assistant's turn gives out its
// instructions.
func discloses(turn string) bool {
	// Every disclosure holds one of these stems in lower case: a turn
	// without any is not lowercased and searched.
	stem := false
	for _, w := range disclosureStems {
		if strings.Contains(turn, w) {
			stem = true
			break
		}
	}
	if !stem {
		return false
	}
	s := strings.ToLower(turn)
	for _, d := range disclosures {
		if strings.Contains(s, d) {
			return true
		}
	}
	return false
}

// forgedManyShot reports whether the scored segments segs[idx] are a
// many-shot transcript in the request's own turns: at least
// manyShotTurns assistant turns (which a caller can forge), most of them
// giving out their instructions, and a user's turn last; at is that
// turn.
func forgedManyShot(segs []Segment, idx []int) (at int, ok bool) {
	if len(idx) < 2*manyShotTurns+1 || segs[idx[len(idx)-1]].Source != SourceUser {
		return 0, false
	}
	turns := 0
	for _, i := range idx {
		if segs[i].Source == SourceAssistant {
			turns++
		}
	}
	if turns < manyShotTurns {
		return 0, false
	}
	disclosing, left := 0, turns
	for _, i := range idx {
		if segs[i].Source != SourceAssistant {
			continue
		}
		if t := segs[i].Text; len(t) <= 4096 && discloses(t) {
			disclosing++
		}
		left--
		if 2*(disclosing+left) <= turns {
			return 0, false // most of them can no longer disclose
		}
	}
	return idx[len(idx)-1], disclosing >= manyShotTurns && 2*disclosing > turns
}

// turnLabel reads a transcript line's speaker label ("User:", "**AI**:",
// "### Assistant:", "[Human]:"): its side (true for the assistant) and
// the line after it.
func turnLabel(line string) (assistant bool, rest string, ok bool) {
	s := strings.TrimLeft(line, " \t>#*-[")
	i := strings.IndexByte(s, ':')
	if i <= 0 || i > 24 {
		return false, "", false
	}
	label := strings.TrimRight(s[:i], " *]_")
	var low [24]byte // lowercased without allocating
	for j := 0; j < len(label); j++ {
		c := label[j]
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		low[j] = c
	}
	side, ok := turnLabels[string(low[:len(label)])]
	if !ok {
		return false, "", false
	}
	return side, strings.TrimLeft(s[i+1:], " *"), true
}
