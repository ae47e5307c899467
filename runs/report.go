package runs

import (
	"context"
	"sort"
	"time"

	gw "github.com/gwlabs/gateway"
)

// Summary is a run as GET /v1/runs lists it. Amounts are exact decimal
// US dollars (8 decimals); spend, held, requests and in_flight include
// the run's descendants.
type Summary struct {
	Object         string    `json:"object"` // "run"
	ID             string    `json:"id"`
	ParentID       *string   `json:"parent_id"`
	Budget         *string   `json:"budget"`       // null: none
	MaxRequests    *int64    `json:"max_requests"` // null: none
	IdleSeconds    *int64    `json:"idle_seconds"` // null: never expires
	Spend          string    `json:"spend"`
	Held           string    `json:"held"`
	Remaining      *string   `json:"remaining"` // null: no budget
	Requests       int64     `json:"requests"`
	InFlight       int64     `json:"in_flight"`
	Errors         int64     `json:"errors"`
	GuardIncidents int64     `json:"guard_incidents"`
	Expired        bool      `json:"expired"`
	FirstSeen      time.Time `json:"first_seen"`
	LastSeen       time.Time `json:"last_seen"`
}

// Tokens are a run's tokens by billing class.
type Tokens struct {
	Input      int64 `json:"input"`
	CacheRead  int64 `json:"cache_read"`
	CacheWrite int64 `json:"cache_write"`
	Output     int64 `json:"output"`
	Reasoning  int64 `json:"reasoning"`
}

func (t *Tokens) add(u gw.Usage) {
	t.Input += u.InputTokens
	t.CacheRead += u.CacheReadTokens
	t.CacheWrite += u.CacheWriteTokens()
	t.Output += u.OutputTokens
	t.Reasoning += u.ReasoningTokens
}

// ModelUse is what a run spent on one model (or MCP tool).
type ModelUse struct {
	Model    string `json:"model"` // vendor/model; server/tool for MCP
	Requests int64  `json:"requests"`
	Errors   int64  `json:"errors"`
	Spend    string `json:"spend"`
	Tokens   Tokens `json:"tokens"`
	spend    gw.Money
}

// Step is one finished step on a run's timeline.
type Step struct {
	RequestID string    `json:"request_id"`
	Endpoint  string    `json:"endpoint"`
	Model     string    `json:"model"`
	Status    int       `json:"status"`
	ErrorCode string    `json:"error_code,omitempty"`
	Tokens    Tokens    `json:"tokens"`
	Charge    string    `json:"charge"`
	LatencyMS int64     `json:"latency_ms"`
	Guard     string    `json:"guard,omitempty"`
	Attempts  int       `json:"attempts"` // models tried beyond one (fallbacks); 0: none
	CreatedAt time.Time `json:"created_at"`
	// Spent is the run's own spend after this step (its steps', not its
	// children's): the chart of spend over the run's life.
	Spent string `json:"spent"`
}

// Report is GET /v1/runs/{id}: the run, its tokens by class and its
// spend by model over its own steps, its children and its timeline.
type Report struct {
	Summary
	Tokens   Tokens     `json:"tokens"`
	Models   []ModelUse `json:"models"`
	Children []Summary  `json:"children"`
	Steps    []Step     `json:"steps"`
	// StepsTruncated says the timeline holds only the first MaxSteps.
	StepsTruncated bool `json:"steps_truncated"`
}

// MaxSteps bounds the timeline of one report.
const MaxSteps = 1000

// Summarize is r as the API shows it at now.
func Summarize(r *gw.Run, now time.Time) Summary {
	s := Summary{Object: "run", ID: r.ID, Spend: r.Spend.USDString(), Held: r.Held.USDString(), Requests: r.Requests,
		InFlight: r.InFlight, Errors: r.Errors, GuardIncidents: r.Incidents, Expired: r.ExpiredAt(now),
		FirstSeen: r.FirstSeen, LastSeen: r.LastSeen}
	if r.ParentID != "" {
		s.ParentID = &r.ParentID
	}
	if r.Budget > 0 {
		b := r.Budget.USDString()
		left, _ := r.Remaining()
		l := left.USDString()
		s.Budget, s.Remaining = &b, &l
	}
	if r.MaxRequests > 0 {
		s.MaxRequests = &r.MaxRequests
	}
	if r.Idle > 0 {
		n := int64(r.Idle / time.Second)
		s.IdleSeconds = &n
	}
	return s
}

// Build reads the account's run id and makes its report;
// gw.ErrNotFound when the account has no run by that id.
func Build(ctx context.Context, rs gw.RunStore, accountID, id string, now time.Time) (*Report, error) {
	r, err := rs.Run(ctx, accountID, id)
	if err != nil {
		return nil, err
	}
	steps, err := rs.RunSteps(ctx, accountID, id, MaxSteps+1)
	if err != nil {
		return nil, err
	}
	kids, err := rs.RunChildren(ctx, accountID, id)
	if err != nil {
		return nil, err
	}
	out := &Report{Summary: Summarize(r, now), Models: []ModelUse{}, Children: []Summary{}, Steps: []Step{}}
	if len(steps) > MaxSteps {
		steps, out.StepsTruncated = steps[:MaxSteps], true
	}
	byModel := map[string]*ModelUse{}
	var spent gw.Money
	for _, s := range steps {
		name := s.Vendor + "/" + s.Model
		m := byModel[name]
		if m == nil {
			m = &ModelUse{Model: name}
			byModel[name] = m
		}
		m.Requests++
		if s.Status >= 400 {
			m.Errors++
		}
		m.spend += s.Charge
		m.Tokens.add(s.Usage)
		out.Tokens.add(s.Usage)
		spent += s.Charge
		st := Step{RequestID: s.RequestID, Endpoint: string(s.Endpoint), Model: name, Status: s.Status, ErrorCode: string(s.ErrorCode),
			Charge: s.Charge.USDString(), LatencyMS: s.Latency.Milliseconds(), Guard: s.Guard, Attempts: s.Attempts,
			CreatedAt: s.CreatedAt, Spent: spent.USDString()}
		st.Tokens.add(s.Usage)
		out.Steps = append(out.Steps, st)
	}
	for _, m := range byModel {
		m.Spend = m.spend.USDString()
		out.Models = append(out.Models, *m)
	}
	sort.Slice(out.Models, func(i, j int) bool {
		if out.Models[i].spend != out.Models[j].spend {
			return out.Models[i].spend > out.Models[j].spend
		}
		return out.Models[i].Model < out.Models[j].Model
	})
	for i := range kids {
		out.Children = append(out.Children, Summarize(&kids[i], now))
	}
	return out, nil
}
