package ratecard

import (
	"errors"
	"fmt"
	"maps"
	"math/big"
	"slices"
	"strings"
)

// Billable units beyond tokens, as a model's units table names them (the
// same names the gateway's refusals and its operator allow list use).
const (
	UnitPriorityTier  = "service_tier_priority"
	UnitFlexTier      = "service_tier_flex"
	UnitBatchTier     = "service_tier_batch"
	UnitFastMode      = "fast_mode"
	UnitWebSearch     = "web_search"
	UnitWebFetch      = "web_fetch"
	UnitCodeExecution = "code_execution"
	UnitMCP           = "mcp"
	UnitFileSearch    = "file_search"
	UnitImageGen      = "image_generation"
	UnitComputerUse   = "computer_use"
	UnitGrounding     = "grounding"
)

// UnitNames lists every unit a units table may price.
func UnitNames() []string {
	return []string{UnitPriorityTier, UnitFlexTier, UnitBatchTier, UnitFastMode, UnitWebSearch, UnitWebFetch,
		UnitCodeExecution, UnitMCP, UnitFileSearch, UnitImageGen, UnitComputerUse, UnitGrounding}
}

// MaxUnitPrice bounds a per-call or per-hour price, in USD.
const MaxUnitPrice = 1000

// Unit is the price of one billable unit beyond tokens on one model.
// Exactly one of Multiplier, PerCall and PerHour is set:
//   - Multiplier scales every token rate that applies (base, long-context
//     tier or off-peak) for a request the vendor served in that mode
//     (a service tier, Anthropic's fast mode);
//   - PerCall is USD per call the vendor reports (a web search, a
//     grounding query, a code-interpreter container), or per request
//     that used the unit at all when PerRequest is set;
//   - PerHour is USD per container-hour, each container billed at least
//     MinSeconds.
type Unit struct {
	Multiplier, PerCall, PerHour *big.Rat
	PerRequest                   bool
	MinSeconds                   int64
	// Source is where the price was read, Date (YYYY-MM-DD) its date,
	// Note anything derived or assumed.
	Source, Date, Note string
}

// Kind names how u is priced: "multiplier", "per call", "per request"
// or "per container-hour".
func (u Unit) Kind() string {
	switch {
	case u.Multiplier != nil:
		return "multiplier"
	case u.PerHour != nil:
		return "per container-hour"
	case u.PerRequest:
		return "per request"
	}
	return "per call"
}

// Unit returns the price of a billable unit on m; ok is false when the
// card cannot price it for this model.
func (m *Model) Unit(name string) (Unit, bool) {
	u, ok := m.Units[name]
	return u, ok
}

// fileUnit is the JSON form of a Unit.
type fileUnit struct {
	Multiplier *string `json:"multiplier,omitempty"`
	PerCall    *string `json:"per_call,omitempty"`
	PerRequest bool    `json:"per_request,omitempty"`
	PerHour    *string `json:"per_container_hour,omitempty"`
	MinSeconds int64   `json:"min_seconds,omitempty"`
	Source     string  `json:"source"`
	Date       string  `json:"date"`
	Note       string  `json:"note,omitempty"`
}

// units validates and converts a units table.
func units(f map[string]fileUnit) (map[string]Unit, error) {
	if len(f) == 0 {
		return nil, nil
	}
	out := make(map[string]Unit, len(f))
	for _, name := range slices.Sorted(maps.Keys(f)) {
		fu := f[name]
		u, err := fu.unit(name)
		if err != nil {
			return nil, fmt.Errorf("unit %s: %w", name, err)
		}
		out[name] = u
	}
	return out, nil
}

func (fu fileUnit) unit(name string) (Unit, error) {
	if !slices.Contains(UnitNames(), name) {
		return Unit{}, fmt.Errorf("unknown unit (known: %s)", strings.Join(UnitNames(), ", "))
	}
	u := Unit{PerRequest: fu.PerRequest, MinSeconds: fu.MinSeconds, Source: fu.Source, Date: fu.Date, Note: fu.Note}
	set := 0
	parse := func(s *string, dst **big.Rat, max int64) error {
		if s == nil {
			return nil
		}
		set++
		x, err := ParsePrice(*s)
		if err != nil {
			return err
		}
		if x.Cmp(big.NewRat(max, 1)) > 0 {
			return fmt.Errorf("%q above %d", *s, max)
		}
		*dst = x
		return nil
	}
	if err := parse(fu.Multiplier, &u.Multiplier, 100); err != nil {
		return Unit{}, fmt.Errorf("multiplier: %w", err)
	}
	if err := parse(fu.PerCall, &u.PerCall, MaxUnitPrice); err != nil {
		return Unit{}, fmt.Errorf("per_call: %w", err)
	}
	if err := parse(fu.PerHour, &u.PerHour, MaxUnitPrice); err != nil {
		return Unit{}, fmt.Errorf("per_container_hour: %w", err)
	}
	if set != 1 {
		return Unit{}, errors.New("want exactly one of multiplier, per_call and per_container_hour")
	}
	isMode := strings.HasPrefix(name, "service_tier_") || name == UnitFastMode
	if isMode != (u.Multiplier != nil) {
		return Unit{}, errors.New("service tiers and fast mode take a multiplier, the other units a per_call or per_container_hour price")
	}
	if u.Multiplier != nil && u.Multiplier.Sign() == 0 {
		return Unit{}, errors.New("multiplier must be positive")
	}
	if u.PerRequest && u.PerCall == nil {
		return Unit{}, errors.New("per_request goes with per_call")
	}
	if u.MinSeconds < 0 || u.MinSeconds > 86400 || (u.MinSeconds > 0 && u.PerHour == nil) {
		return Unit{}, errors.New("min_seconds is 0 to 86400 and goes with per_container_hour")
	}
	if strings.TrimSpace(u.Source) == "" {
		return Unit{}, errors.New("missing source")
	}
	if err := checkDate(u.Date); err != nil {
		return Unit{}, fmt.Errorf("date: %w", err)
	}
	return u, nil
}

func toFileUnits(us map[string]Unit) map[string]fileUnit {
	if len(us) == 0 {
		return nil
	}
	f := func(x *big.Rat) *string {
		if x == nil {
			return nil
		}
		s := FormatPrice(x)
		return &s
	}
	out := make(map[string]fileUnit, len(us))
	for name, u := range us {
		out[name] = fileUnit{Multiplier: f(u.Multiplier), PerCall: f(u.PerCall), PerRequest: u.PerRequest, PerHour: f(u.PerHour),
			MinSeconds: u.MinSeconds, Source: u.Source, Date: u.Date, Note: u.Note}
	}
	return out
}
