package ratecard

import (
	"bytes"
	"strings"
	"testing"
)

func unitCard(units string) string {
	return `{"version":"t","effective":"2026-11-26","models":[{"vendor":"openai","id":"m","input":"1","output":"2","max_output_tokens":10,
		"units":` + units + `,"source":"s","date":"2026-11-26"}]}`
}

// A units table loads exactly, survives a write and a reload, and every
// malformed entry is refused naming it.
func TestUnitsLoad(t *testing.T) {
	c, err := Load(strings.NewReader(unitCard(`{"service_tier_priority":{"multiplier":"1.75","source":"p","date":"2026-11-26"},
		"web_search":{"per_call":"0.01","source":"w","date":"2026-11-26"},
		"code_execution":{"per_container_hour":"0.05","min_seconds":300,"source":"c","date":"2025-09-01"},
		"grounding":{"per_call":"0.035","per_request":true,"source":"g","date":"2025-10-01"}}`)))
	if err != nil {
		t.Fatal(err)
	}
	m, _ := c.Lookup("openai", "m")
	if u, ok := m.Unit(UnitPriorityTier); !ok || u.Multiplier.RatString() != "7/4" || u.Kind() != "multiplier" {
		t.Errorf("priority %+v", u)
	}
	if u, ok := m.Unit(UnitCodeExecution); !ok || u.PerHour.RatString() != "1/20" || u.MinSeconds != 300 || u.Kind() != "per container-hour" {
		t.Errorf("code execution %+v", u)
	}
	if u, _ := m.Unit(UnitGrounding); u.Kind() != "per request" {
		t.Errorf("grounding %+v", u)
	}
	if _, ok := m.Unit(UnitFastMode); ok {
		t.Error("fast mode priced without an entry")
	}
	var buf bytes.Buffer
	if err := c.WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	c2, err := Load(&buf)
	if err != nil {
		t.Fatalf("reload: %v", err)
	}
	m2, _ := c2.Lookup("openai", "m")
	if u, _ := m2.Unit(UnitWebSearch); u.PerCall.RatString() != "1/100" || u.Source != "w" {
		t.Errorf("reloaded web search %+v", u)
	}
	for _, bad := range []struct{ units, want string }{
		{`{"teleport":{"per_call":"1","source":"s","date":"2026-11-26"}}`, "unknown unit"},
		{`{"web_search":{"multiplier":"2","source":"s","date":"2026-11-26"}}`, "take a multiplier"},
		{`{"fast_mode":{"per_call":"2","source":"s","date":"2026-11-26"}}`, "take a multiplier"},
		{`{"web_search":{"per_call":"0.01","per_container_hour":"1","source":"s","date":"2026-11-26"}}`, "exactly one"},
		{`{"web_search":{"per_call":"0.01","date":"2026-11-26"}}`, "missing source"},
		{`{"web_search":{"per_call":"-1","source":"s","date":"2026-11-26"}}`, "negative"},
		{`{"fast_mode":{"multiplier":"0","source":"s","date":"2026-11-26"}}`, "positive"},
		{`{"web_search":{"per_call":"0.01","min_seconds":5,"source":"s","date":"2026-11-26"}}`, "min_seconds"},
		{`{"web_search":{"per_call":"5000","source":"s","date":"2026-11-26"}}`, "above"},
	} {
		if _, err := Load(strings.NewReader(unitCard(bad.units))); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("%s: %v, want %q", bad.units, err, bad.want)
		}
	}
}

// Every unit on the embedded card names its source and date.
func TestEmbeddedUnitsSourced(t *testing.T) {
	c, err := Default()
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, m := range c.Models() {
		for name, u := range m.Units {
			n++
			if u.Source == "" || u.Date == "" {
				t.Errorf("%s %s: no source", m.Name(), name)
			}
		}
	}
	if n == 0 {
		t.Error("no units on the embedded card")
	}
}

// A changed, added or removed unit is a difference between two cards.
func TestUnitsDiff(t *testing.T) {
	a, err := Load(strings.NewReader(unitCard(`{"web_search":{"per_call":"0.01","source":"s","date":"2026-11-26"},"fast_mode":{"multiplier":"2","source":"s","date":"2026-11-26"}}`)))
	if err != nil {
		t.Fatal(err)
	}
	b, err := Load(strings.NewReader(unitCard(`{"web_search":{"per_call":"0.025","source":"s","date":"2026-11-26"},"grounding":{"per_call":"0.035","per_request":true,"source":"s","date":"2026-11-26"}}`)))
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := WriteDiff(&buf, Diff(a, b)); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"unit fast_mode: 2.00 -> (none)", "unit web_search: 0.01 -> 0.025 (150.0%)", "unit grounding: (none) -> 0.035 per request"} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("diff %q lacks %q", buf.String(), want)
		}
	}
	if d := Diff(a, a); len(d) != 0 {
		t.Errorf("a card differs from itself: %v", d)
	}
}
