package route

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"

	gw "github.com/gwlabs/gateway"
)

// RoutePrefix starts the name of every operator route ("gw/sonnet"): a
// model id of its own, apart from the vendor prefixes.
const RoutePrefix = "gw/"

// MaxFallbacks bounds the models a request may name after its model
// (its "models" list), so that no caller makes one request into many.
const MaxFallbacks = 8

// Route is an operator-named list of prefixed models. Ordered (no
// weights), they are tried in order; weighted, the first one tried is
// drawn by weight and the others follow in the listed order.
type Route struct {
	Name    string
	Members []Target
	Weights []int // nil: ordered
	// MaxAttempts caps the vendor calls of one request to the route,
	// retries and fallbacks together (0: the gateway's cap).
	MaxAttempts int
}

// Table holds the operator's routes. A nil *Table has none.
type Table struct {
	routes map[string]*Route
	names  []string
	rand   func(n int) int
}

// NewTable checks routes and returns their table: a name must start with
// RoutePrefix, members must parse (and not name routes), weights, when
// given, must be one positive integer per member.
func NewTable(routes []Route) (*Table, error) {
	t := &Table{routes: map[string]*Route{}, rand: rand.IntN}
	for _, r := range routes {
		if !strings.HasPrefix(r.Name, RoutePrefix) || len(r.Name) == len(RoutePrefix) {
			return nil, fmt.Errorf("route %q: names start with %q", r.Name, RoutePrefix)
		}
		if _, dup := t.routes[strings.ToLower(r.Name)]; dup {
			return nil, fmt.Errorf("route %q is defined twice", r.Name)
		}
		if len(r.Members) == 0 {
			return nil, fmt.Errorf("route %q has no models", r.Name)
		}
		if len(r.Members) > MaxFallbacks+1 {
			return nil, fmt.Errorf("route %q has %d models; at most %d", r.Name, len(r.Members), MaxFallbacks+1)
		}
		if r.MaxAttempts < 0 {
			return nil, fmt.Errorf("route %q: max_attempts must be a positive integer", r.Name)
		}
		if r.Weights != nil {
			if len(r.Weights) != len(r.Members) {
				return nil, fmt.Errorf("route %q: %d weights for %d models", r.Name, len(r.Weights), len(r.Members))
			}
			for _, w := range r.Weights {
				if w <= 0 {
					return nil, fmt.Errorf("route %q: weights must be positive integers", r.Name)
				}
			}
		}
		r := r
		t.routes[strings.ToLower(r.Name)] = &r
		t.names = append(t.names, r.Name)
	}
	slices.Sort(t.names)
	return t, nil
}

// ParseMembers parses a route's prefixed model ids.
func ParseMembers(name string, models []string) ([]Target, error) {
	var out []Target
	for _, m := range models {
		t, err := Parse(m)
		if err != nil {
			return nil, fmt.Errorf("route %q: %s", name, gw.AsError(err).Message)
		}
		out = append(out, t)
	}
	return out, nil
}

// Names returns the routes' names, sorted.
func (t *Table) Names() []string {
	if t == nil {
		return nil
	}
	return t.names
}

// Get returns the route named name (case-insensitive).
func (t *Table) Get(name string) (*Route, bool) {
	if t == nil {
		return nil, false
	}
	r, ok := t.routes[strings.ToLower(name)]
	return r, ok
}

// Order returns the route's members in the order to try them.
func (t *Table) Order(r *Route) []Target {
	out := slices.Clone(r.Members)
	if r.Weights == nil {
		return out
	}
	total := 0
	for _, w := range r.Weights {
		total += w
	}
	n, first := t.rand(total), 0
	for i, w := range r.Weights {
		if n < w {
			first = i
			break
		}
		n -= w
	}
	if first > 0 {
		f := out[first]
		copy(out[1:first+1], out[:first])
		out[0] = f
	}
	return out
}

// Resolve turns a request's model and its fallback list (the caller's
// "models") into the models to try, in order, without repeats: a route
// name expands to its members. It returns invalid_request errors as
// Parse does, and for a list longer than MaxFallbacks.
func (t *Table) Resolve(model string, fallbacks []string) ([]Target, error) {
	if len(fallbacks) > MaxFallbacks {
		return nil, gw.Errorf(gw.CodeInvalidRequest, "models lists %d fallbacks; at most %d", len(fallbacks), MaxFallbacks)
	}
	var out []Target
	add := func(m string) error {
		if r, ok := t.Get(strings.TrimSpace(m)); ok {
			for _, x := range t.Order(r) {
				if !slices.Contains(out, x) {
					out = append(out, x)
				}
			}
			return nil
		}
		if strings.HasPrefix(strings.TrimSpace(m), RoutePrefix) {
			return gw.Errorf(gw.CodeInvalidRequest, "model %q: no such route; GET /v1/models lists the routes", m)
		}
		x, err := Parse(m)
		if err != nil {
			return err
		}
		if !slices.Contains(out, x) {
			out = append(out, x)
		}
		return nil
	}
	if err := add(model); err != nil {
		return nil, err
	}
	for _, m := range fallbacks {
		if err := add(m); err != nil {
			return nil, err
		}
	}
	return out, nil
}
