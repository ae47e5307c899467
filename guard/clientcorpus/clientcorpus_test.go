package clientcorpus

import (
	"context"
	"fmt"
	"strings"
	"testing"

	gw "github.com/gwlabs/gateway"
	"github.com/gwlabs/gateway/guard"
	"github.com/gwlabs/gateway/guard/policy"
)

// highest is the request side's highest score over the corpus, logged
// (go test -v) to show the margin under the threshold.
var highest struct {
	score float64
	name  string
}

// A check judges one recorded request's text; an error is a false
// positive on a real client. The answer-side check joins this list.
type check struct {
	name string
	run  func(r Request, texts []gw.Text) error
}

func checks(t *testing.T) []check {
	t.Helper()
	g, err := guard.New(guard.Config{})
	if err != nil {
		t.Fatal(err)
	}
	pg := policy.New(g, nil, nil, nil)
	t.Cleanup(func() { t.Logf("highest request-side score: %.3f (%s)", highest.score, highest.name) })
	requestSide := func(r Request, texts []gw.Text) error {
		v, _, err := pg.CheckFirst(context.Background(), nil, texts)
		if err != nil {
			return err
		}
		if v.Score > highest.score {
			highest.score, highest.name = v.Score, r.Name()
		}
		if v.Flagged {
			return fmt.Errorf("request guard flagged it: %s %.3f %s", v.Kind, v.Score, v.Reason)
		}
		return nil
	}
	return []check{{"request guard (first stage, shipped model and threshold, default policy)", requestSide}}
}

// TestRealClientsAreNeverBlocked runs every check over every request the
// official clients sent in the conformance suite (scripts/record-client-corpus).
func TestRealClientsAreNeverBlocked(t *testing.T) {
	reqs, err := Load("testdata")
	if err != nil {
		t.Fatal(err)
	}
	clients := map[string]int{}
	for _, r := range reqs {
		clients[r.Client]++
	}
	// every client of the suite is in the corpus
	for _, c := range []string{"claude-code", "codex", "gemini-cli", "openai-agents", "ai-sdk", "openai-node", "anthropic-sdk", "google-genai"} {
		if clients[c] == 0 {
			t.Errorf("no request of %s in testdata: run scripts/record-client-corpus", c)
		}
	}
	// Claude Code with real Claude model ids, natively and mapped, and with
	// other models
	models := map[string]bool{}
	for _, r := range reqs {
		if r.Client == "claude-code" {
			if i := strings.Index(string(r.Body), `"model":"`); i >= 0 {
				m, _, _ := strings.Cut(string(r.Body[i+9:]), `"`)
				models[m] = true
			}
		}
	}
	for _, m := range []string{"anthropic/claude-sonnet-4-5", "anthropic/claude-haiku-4-5", "openrouter/anthropic/claude-sonnet-4.5", "openai/gpt-6-sol"} {
		if !models[m] {
			t.Errorf("no Claude Code request with model %s (have %v)", m, models)
		}
	}
	cs := checks(t)
	for _, r := range reqs {
		texts, err := Texts(r)
		if err != nil {
			t.Errorf("%v", err)
			continue
		}
		if len(texts) == 0 {
			t.Errorf("%s: no text read", r.Name())
		}
		for _, c := range cs {
			if err := c.run(r, texts); err != nil {
				t.Errorf("%s: %s: %v", r.Name(), c.name, err)
			}
		}
	}
}

// TestTheCorpusHoldsTheAgentToolText: the text that was blocked (Claude
// Code's Agent tool on a real Claude model id) is in the corpus, read as
// a tool description.
func TestTheCorpusHoldsTheAgentToolText(t *testing.T) {
	reqs, err := Load("testdata")
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range reqs {
		if r.Client != "claude-code" || !strings.Contains(string(r.Body), "claude-sonnet-4-5") {
			continue
		}
		texts, err := Texts(r)
		if err != nil {
			t.Fatal(err)
		}
		for _, tx := range texts {
			if tx.Source == gw.TextToolSpec && strings.Contains(tx.Text, "share your prompt cache") {
				return
			}
		}
	}
	t.Fatal("no Claude Code request on claude-sonnet-4-5 has a tool description with \"share your prompt cache\"")
}
