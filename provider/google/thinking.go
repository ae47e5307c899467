package google

import "strings"

// family groups Gemini models by how they take reasoning controls.
type family int

const (
	// familyLevel: Gemini 3 and later (and unknown names, which are taken
	// to be current models): thinkingConfig.thinkingLevel; function calls
	// must carry thought signatures.
	familyLevel family = iota
	// familyBudget: Gemini 2.5: thinkingConfig.thinkingBudget.
	familyBudget
	// familyLegacy: Gemini 1.x and 2.0, Gemma: no thinking controls.
	familyLegacy
)

func familyOf(model string) family {
	m := strings.ToLower(strings.TrimPrefix(model, "models/"))
	switch {
	case strings.HasPrefix(m, "gemini-2.5"):
		return familyBudget
	case strings.HasPrefix(m, "gemini-1."), strings.HasPrefix(m, "gemini-2.0"),
		strings.HasPrefix(m, "gemma"), strings.HasPrefix(m, "learnlm"):
		return familyLegacy
	}
	return familyLevel
}

// thinking maps the caller's reasoning control. Gemini 3 takes a level,
// Gemini 2.5 a token budget, never both (sending both is a 400). The
// caller "wants reasoning" unless it disabled it or asked for effort
// "none"; then includeThoughts is set so that thought summaries come back
// as thinking blocks, unless the caller set Anthropic's thinking.display
// to "omitted" (no thinking text wanted).
//
// Levels: minimal, low, medium map to MINIMAL, LOW, MEDIUM; high, xhigh and
// max to HIGH; an explicit budget to LOW (<= 2048), MEDIUM (<= 8192) or
// HIGH; reasoning off to MINIMAL, since Gemini 3 cannot switch thinking
// off. Pro models have no MINIMAL (LOW instead) and Gemini 3.0 Pro no
// MEDIUM (HIGH instead).
//
// Budgets (2.5): an explicit budget as given; effort minimal 512, low 1024,
// medium 8192, high 24576, xhigh and max 32768 on Pro (24576 elsewhere);
// enabled without either: -1 (dynamic); off: 0, or 128 on Pro, which
// cannot switch thinking off. Gemini 2.0 and older have no thinking: the
// control is dropped ("reasoning").
func (e *encoder) thinking() (*thinkingConfig, error) {
	rs := e.r.Reasoning
	if rs == nil {
		return nil, nil
	}
	switch rs.Effort {
	case "", "none", "minimal", "low", "medium", "high", "xhigh", "max":
	default:
		return nil, invalid("reasoning effort: unknown value %q", rs.Effort)
	}
	want := !rs.Disabled && rs.Effort != "none"
	// thinking.display "omitted" (Anthropic) asks for no thinking text:
	// Gemini's equivalent is includeThoughts false.
	show := want && rs.Display != "omitted"
	model := strings.ToLower(e.r.Model)
	pro := strings.Contains(model, "-pro")
	switch e.fam {
	case familyLegacy:
		if want {
			e.drop(droppedReasoning)
		}
		return nil, nil
	case familyBudget:
		var b int
		switch {
		case !want:
			b = 0
			if pro {
				b = 128
			}
		case rs.BudgetTokens > 0:
			b = rs.BudgetTokens
		case rs.Effort == "minimal":
			b = 512
		case rs.Effort == "low":
			b = 1024
		case rs.Effort == "medium":
			b = 8192
		case rs.Effort == "high":
			b = 24576
		case rs.Effort == "xhigh" || rs.Effort == "max":
			b = 24576
			if pro {
				b = 32768
			}
		default:
			b = -1
		}
		return &thinkingConfig{IncludeThoughts: show, ThinkingBudget: &b}, nil
	}
	var level string
	switch {
	case !want:
		level = "MINIMAL"
	case rs.Effort == "minimal":
		level = "MINIMAL"
	case rs.Effort == "low":
		level = "LOW"
	case rs.Effort == "medium":
		level = "MEDIUM"
	case rs.Effort == "high" || rs.Effort == "xhigh" || rs.Effort == "max":
		level = "HIGH"
	case rs.BudgetTokens > 8192:
		level = "HIGH"
	case rs.BudgetTokens > 2048:
		level = "MEDIUM"
	case rs.BudgetTokens > 0:
		level = "LOW"
	}
	if pro && level == "MINIMAL" {
		level = "LOW"
	}
	if strings.Contains(model, "gemini-3-pro") && level == "MEDIUM" {
		level = "HIGH"
	}
	return &thinkingConfig{IncludeThoughts: show, ThinkingLevel: level}, nil
}
