package billing

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"
)

func TestModelsJSON(t *testing.T) {
	card := defaultCard(t)
	raw, err := json.Marshal(Models(card))
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Object string `json:"object"`
		Data   []struct {
			ID      string            `json:"id"`
			Object  string            `json:"object"`
			Created int64             `json:"created"`
			OwnedBy string            `json:"owned_by"`
			Pricing map[string]string `json:"pricing"`
			Tiers   []struct {
				Above   int64             `json:"above_prompt_tokens"`
				Pricing map[string]string `json:"pricing"`
			} `json:"pricing_tiers"`
			ContextWindow   int64 `json:"context_window"`
			MaxOutputTokens int64 `json:"max_output_tokens"`
		} `json:"data"`
	}
	if err := json.Unmarshal(raw, &got); err != nil {
		t.Fatalf("decode %s: %v", raw, err)
	}
	if got.Object != "list" || len(got.Data) != len(card.Models()) {
		t.Fatalf("object %q with %d entries, want list of %d", got.Object, len(got.Data), len(card.Models()))
	}
	byID := map[string]int{}
	for i, d := range got.Data {
		byID[d.ID] = i
		if d.Object != "model" || !strings.HasPrefix(d.ID, d.OwnedBy+"/") {
			t.Errorf("entry %+v: want object model and an id prefixed with owned_by", d)
		}
	}
	i, ok := byID["openai/gpt-6-sol"]
	if !ok {
		t.Fatal("openai/gpt-6-sol not listed")
	}
	sol := got.Data[i]
	want := map[string]string{"input": "2.00", "cached_input": "0.20", "cache_write_5m": "2.50", "cache_write_1h": "2.50", "output": "10.00", "unit": "usd_per_million_tokens"}
	for k, v := range want {
		if sol.Pricing[k] != v {
			t.Errorf("gpt-6-sol pricing[%s] = %q, want %q", k, sol.Pricing[k], v)
		}
	}
	if wantCreated := time.Date(2026, 9, 22, 0, 0, 0, 0, time.UTC).Unix(); sol.Created != wantCreated {
		t.Errorf("created %d, want %d", sol.Created, wantCreated)
	}
	if len(sol.Tiers) != 1 || sol.Tiers[0].Above != 272_000 || sol.Tiers[0].Pricing["output"] != "15.00" {
		t.Errorf("tiers %+v", sol.Tiers)
	}
	if sol.MaxOutputTokens != 128_000 || sol.ContextWindow != 1_050_000 {
		t.Errorf("limits %d/%d", sol.MaxOutputTokens, sol.ContextWindow)
	}
	// An unpublished cached price shows the rate it is billed at.
	if p := got.Data[byID["together/meta-llama/Llama-3.3-70B-Instruct-Turbo"]].Pricing; p["cached_input"] != "0.88" {
		t.Errorf("together cached_input %q, want the input price 0.88", p["cached_input"])
	}
	for id := range byID {
		if strings.HasPrefix(id, "openrouter/") {
			t.Errorf("openrouter model %s listed", id)
		}
	}
}

func TestWriteTable(t *testing.T) {
	card := defaultCard(t)
	var buf bytes.Buffer
	if err := WriteTable(&buf, card); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimRight(buf.String(), "\n"), "\n")
	if !strings.Contains(lines[0], card.Version) || !strings.Contains(lines[0], card.Effective) {
		t.Errorf("header %q lacks version or effective date", lines[0])
	}
	tiers := 0
	for _, m := range card.Models() {
		tiers += len(m.Tiers)
	}
	if want := 2 + len(card.Models()) + tiers; len(lines) != want {
		t.Errorf("%d lines, want %d", len(lines), want)
	}
	find := func(prefix string) []string {
		for i, l := range lines {
			if strings.HasPrefix(l, prefix) {
				if strings.HasPrefix(prefix, "anthropic/claude-haiku-5-5") && i+1 < len(lines) {
					return append(strings.Fields(l), strings.Fields(lines[i+1])...)
				}
				return strings.Fields(l)
			}
		}
		t.Fatalf("no line starting %q in\n%s", prefix, buf.String())
		return nil
	}
	got := strings.Join(find("anthropic/claude-haiku-5-5 "), " ")
	if want := "anthropic/claude-haiku-5-5 0.10 0.01 0.125 0.20 0.50 128000 1000000 2026-10-24 prompt > 100000 0.50 0.05 0.625 1.00 2.50"; got != want {
		t.Errorf("haiku rows\n got %q\nwant %q", got, want)
	}
	if got := strings.Join(find("together/Qwen/Qwen3.5-9B "), " "); got != "together/Qwen/Qwen3.5-9B 0.10 - - - 0.15 32768 ? 2026-05-08" {
		t.Errorf("qwen row %q", got)
	}
}
