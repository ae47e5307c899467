package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gwlabs/gateway/ratecard"
)

// gateway ratecard check FILE validates a price list and lists every
// difference from the embedded card.
func TestRatecardCheck(t *testing.T) {
	card, err := ratecard.Default()
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := card.WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	same := filepath.Join(dir, "same.json")
	if err := os.WriteFile(same, buf.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := Run(context.Background(), []string{"ratecard", "check", same}, &out, &out); err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(out.String(), "no differences\n") {
		t.Errorf("the embedded card against itself:\n%s", out.String())
	}

	// One price raised by 10%.
	changed := strings.Replace(buf.String(), `"id": "gpt-6-sol",`+"\n"+`      "input": "2.00"`, `"id": "gpt-6-sol",`+"\n"+`      "input": "2.20"`, 1)
	if changed == buf.String() {
		t.Fatal("fixture: gpt-6-sol input not found in the written card")
	}
	path := filepath.Join(dir, "new.json")
	if err := os.WriteFile(path, []byte(changed), 0o600); err != nil {
		t.Fatal(err)
	}
	out.Reset()
	if err := Run(context.Background(), []string{"ratecard", "check", path}, &out, &out); err != nil {
		t.Fatal(err)
	}
	if got := out.String(); !strings.Contains(got, "changed  openai/gpt-6-sol input: 2.00 -> 2.20 (10.0%)\n") || strings.Count(got, "\n") != 2 {
		t.Errorf("report:\n%s", got)
	}

	bad := filepath.Join(dir, "bad.json")
	if err := os.WriteFile(bad, []byte(strings.Replace(changed, `"input": "2.20"`, `"input": "-2"`, 1)), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := Run(context.Background(), []string{"ratecard", "check", bad}, &out, &out); err == nil || !strings.Contains(err.Error(), "negative price") {
		t.Errorf("a negative price: err %v", err)
	}
}

// Issue 29 item 4: ratecard check --units lists every billable unit per
// model with its source, and the units beyond tokens refused.
func TestRatecardCheckUnits(t *testing.T) {
	card, err := ratecard.Default()
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := Run(context.Background(), []string{"ratecard", "check", "--units", "../../ratecard/rates.json"}, &out, &out); err != nil {
		t.Fatal(err)
	}
	got := out.String()
	for _, m := range card.Models() {
		if !strings.Contains(got, m.Vendor+"/"+m.ID) || !strings.Contains(got, m.Source) {
			t.Errorf("%s/%s or its source missing", m.Vendor, m.ID)
		}
	}
	for _, want := range []string{"openai/gpt-6-sol", "cache_write_5m", "output (reasoning included)", "off-peak", "long-context tier",
		"service_tier_priority", "fast_mode", "web_search", "code_execution", "grounding"} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q", want)
		}
	}
	if n := strings.Count(got, "\n"); n < 5*len(card.Models()) {
		t.Errorf("%d lines for %d models: want at least five units each", n, len(card.Models()))
	}
}
