// Package eval measures the optimization layer on a real vendor: a fixed,
// committed workload of everyday prompts (workload.json: questions,
// explanations, code, extraction, JSON output, long-form writing asked for
// explicitly), each sent N times with and without the directive, reporting
// output tokens and latency per category and overall, and checking that
// outputs asked in a format still parse (JSON parses; code comes in a
// fenced block). It calls the vendor through its gateway adapter directly,
// not through a running gateway, so nothing is billed to an account; the
// vendor bills the operator's key.
//
// The fake vendors can model a shorter answer when they see the
// directive; only a run on a real vendor measures the real saving.
package eval

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	gw "github.com/gwlabs/gateway"
	"github.com/gwlabs/gateway/optimize"
)

//go:embed workload.json
var workloadJSON []byte

// Prompt is one prompt of the workload.
type Prompt struct {
	ID       string `json:"id"`
	Category string `json:"category"`
	Prompt   string `json:"prompt"`
	// Format is what the output must be: "json" (parses as JSON), "code"
	// (holds a fenced code block) or "" (no check).
	Format string `json:"format,omitempty"`
	// JSON asks the vendor for JSON output (response_format).
	JSON bool `json:"json,omitempty"`
}

// Workload returns the committed workload.
func Workload() ([]Prompt, error) {
	var ps []Prompt
	if err := json.Unmarshal(workloadJSON, &ps); err != nil {
		return nil, fmt.Errorf("workload: %w", err)
	}
	return ps, nil
}

// Config is one evaluation.
type Config struct {
	// Vendor and Model name the model (Model without the prefix).
	Vendor, Model string
	// Provider is the vendor's adapter; it must implement gw.Codec.
	Provider gw.Provider
	// N is the number of runs of each prompt with and without the
	// directive (default 1).
	N int
	// MaxTokens caps each answer (default 2048).
	MaxTokens int
	// Now is the clock (default time.Now).
	Now func() time.Time
}

// Side is one half of a comparison: the answers with or without the
// directive.
type Side struct {
	OutputTokens  int64   `json:"output_tokens"`
	MeanLatencyMS float64 `json:"mean_latency_ms"`
	FormatOK      int     `json:"format_ok"`
	FormatChecked int     `json:"format_checked"`
	Errors        int     `json:"errors"`

	latency time.Duration
	runs    int
}

// Row compares one category (or the whole workload) with and without the
// directive. OutputTokenChange is with/without - 1 (negative: fewer
// tokens with the directive).
type Row struct {
	Category          string  `json:"category,omitempty"`
	Prompts           int     `json:"prompts"`
	Runs              int     `json:"runs"`
	Without           Side    `json:"without"`
	With              Side    `json:"with"`
	OutputTokenChange float64 `json:"output_token_change"`
	LatencyChange     float64 `json:"latency_change"`
}

// Report is an evaluation's result, the shape of --json.
type Report struct {
	Model            string `json:"model"`
	DirectiveVersion int    `json:"directive_version"`
	N                int    `json:"n"`
	Categories       []Row  `json:"categories"`
	Overall          Row    `json:"overall"`
}

// Run sends the workload and returns the report. A failed call counts in
// Errors and is left out of the token and latency figures.
func Run(ctx context.Context, cfg Config) (*Report, error) {
	codec, ok := cfg.Provider.(gw.Codec)
	if !ok {
		return nil, fmt.Errorf("eval: %s cannot encode requests", cfg.Vendor)
	}
	if cfg.N <= 0 {
		cfg.N = 1
	}
	if cfg.MaxTokens <= 0 {
		cfg.MaxTokens = 2048
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	ps, err := Workload()
	if err != nil {
		return nil, err
	}
	rep := &Report{Model: cfg.Vendor + "/" + cfg.Model, DirectiveVersion: optimize.Version, N: cfg.N}
	rows := map[string]*Row{}
	var order []string
	for i, p := range ps {
		row, ok := rows[p.Category]
		if !ok {
			row = &Row{Category: p.Category}
			rows[p.Category] = row
			order = append(order, p.Category)
		}
		row.Prompts++
		for run := range cfg.N {
			row.Runs++
			// Alternate which goes first, so that neither side always
			// pays for a cold connection.
			sides := []bool{false, true}
			if (i+run)%2 == 1 {
				sides = []bool{true, false}
			}
			for _, with := range sides {
				side := &row.Without
				if with {
					side = &row.With
				}
				if err := ctx.Err(); err != nil {
					return nil, err
				}
				text, out, lat, err := ask(ctx, cfg, codec, p, with)
				if err != nil {
					side.Errors++
					continue
				}
				side.OutputTokens += out
				side.latency += lat
				side.runs++
				if p.Format != "" {
					side.FormatChecked++
					if formatOK(p.Format, text) {
						side.FormatOK++
					}
				}
			}
		}
	}
	for _, c := range order {
		r := rows[c]
		r.finish()
		rep.Categories = append(rep.Categories, *r)
		rep.Overall.add(r)
	}
	rep.Overall.finish()
	return rep, nil
}

func (r *Row) add(o *Row) {
	r.Prompts += o.Prompts
	r.Runs += o.Runs
	for _, s := range []struct{ dst, src *Side }{{&r.Without, &o.Without}, {&r.With, &o.With}} {
		s.dst.OutputTokens += s.src.OutputTokens
		s.dst.FormatOK += s.src.FormatOK
		s.dst.FormatChecked += s.src.FormatChecked
		s.dst.Errors += s.src.Errors
		s.dst.latency += s.src.latency
		s.dst.runs += s.src.runs
	}
}

func (r *Row) finish() {
	for _, s := range []*Side{&r.Without, &r.With} {
		if s.runs > 0 {
			s.MeanLatencyMS = float64(s.latency.Microseconds()) / 1000 / float64(s.runs)
		}
	}
	if r.Without.OutputTokens > 0 {
		r.OutputTokenChange = float64(r.With.OutputTokens)/float64(r.Without.OutputTokens) - 1
	}
	if r.Without.MeanLatencyMS > 0 {
		r.LatencyChange = r.With.MeanLatencyMS/r.Without.MeanLatencyMS - 1
	}
}

// ask sends one prompt and returns the answer's text, output tokens and
// latency.
func ask(ctx context.Context, cfg Config, codec gw.Codec, p Prompt, with bool) (string, int64, time.Duration, error) {
	maxTokens := cfg.MaxTokens
	req := &gw.Request{
		Model:     cfg.Model,
		Messages:  []gw.Message{{Role: gw.RoleUser, Content: []gw.Part{{Type: gw.PartText, Text: p.Prompt}}}},
		MaxTokens: &maxTokens,
	}
	if p.JSON {
		req.ResponseFormat = &gw.ResponseFormat{Type: "json_object"}
	}
	body, err := codec.EncodeRequest(req)
	if err != nil {
		return "", 0, 0, err
	}
	if with {
		if body, err = optimize.Apply(cfg.Provider.Shape(), body); err != nil {
			return "", 0, 0, err
		}
	}
	start := cfg.Now()
	up, err := cfg.Provider.Send(ctx, &gw.Call{RequestID: "eval_" + p.ID, Model: cfg.Model, Body: body})
	if err != nil {
		return "", 0, 0, err
	}
	raw, err := io.ReadAll(up.Body)
	_ = up.Body.Close()
	lat := cfg.Now().Sub(start)
	if err != nil {
		return "", 0, 0, err
	}
	resp, err := codec.DecodeResponse(raw)
	if err != nil {
		return "", 0, 0, err
	}
	var b strings.Builder
	for _, part := range resp.Content {
		if part.Type == gw.PartText {
			b.WriteString(part.Text)
		}
	}
	return b.String(), resp.Usage.OutputTokens, lat, nil
}

// formatOK checks an answer asked in a format.
func formatOK(format, text string) bool {
	t := strings.TrimSpace(text)
	switch format {
	case "json":
		// A fenced JSON answer still parses once unfenced.
		if strings.HasPrefix(t, "```") {
			t = strings.TrimPrefix(t, "```json")
			t = strings.TrimPrefix(t, "```")
			t = strings.TrimSuffix(strings.TrimSpace(t), "```")
		}
		return json.Valid([]byte(strings.TrimSpace(t)))
	case "code":
		i := strings.Index(t, "```")
		return i >= 0 && strings.Contains(t[i+3:], "```")
	}
	return true
}
