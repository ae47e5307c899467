package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/gwlabs/gateway/fakevendor"
	"github.com/gwlabs/gateway/internal/app"
	"github.com/gwlabs/gateway/optimize"
	"github.com/gwlabs/gateway/optimize/eval"
)

// TestOptimizeEval runs "gateway optimize eval" against the fake vendors
// (whose reply model answers shorter when it sees the directive and
// answers JSON when asked for it) and checks the --json report: every
// category of the workload, both sides counted, the saving visible, the
// JSON answers parsing on both sides, and each request sent twice.
func TestOptimizeEval(t *testing.T) {
	fake, err := fakevendor.Start()
	if err != nil {
		t.Fatal(err)
	}
	defer fake.Close()
	fake.EnableReplyModel(optimize.Text)
	env := fake.Env()
	cfg, err := app.ConfigFromEnv(func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	ps, err := eval.Workload()
	if err != nil {
		t.Fatal(err)
	}
	for _, model := range []string{"openai/gpt-6-sol", "anthropic/claude-sonnet-5-5", "google/gemini-3-flash"} {
		t.Run(model, func(t *testing.T) {
			fake.Reset()
			var out bytes.Buffer
			if err := optimizeEval(context.Background(), cfg, []string{"eval", "--model", model, "--n", "2", "--json"}, &out); err != nil {
				t.Fatal(err)
			}
			var rep eval.Report
			if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
				t.Fatalf("%v: %s", err, out.Bytes())
			}
			if rep.Model != model || rep.DirectiveVersion != 1 || rep.N != 2 || len(rep.Categories) != 6 {
				t.Fatalf("report header: %+v", rep)
			}
			if n := len(fake.Requests()); n != 2*2*len(ps) {
				t.Errorf("%d vendor calls, want %d", n, 4*len(ps))
			}
			o := rep.Overall
			if o.Runs != 2*len(ps) || o.With.Errors+o.Without.Errors != 0 {
				t.Errorf("overall: %+v", o)
			}
			if o.With.OutputTokens <= 0 || o.With.OutputTokens >= o.Without.OutputTokens || o.OutputTokenChange >= 0 {
				t.Errorf("no saving visible: %+v", o)
			}
			for _, r := range rep.Categories {
				if r.Category == "json" || r.Category == "extraction" {
					if r.Without.FormatChecked != r.Runs || r.With.FormatOK != r.With.FormatChecked || r.Without.FormatOK != r.Without.FormatChecked {
						t.Errorf("%s: JSON answers must parse on both sides: %+v", r.Category, r)
					}
				}
			}
			var text bytes.Buffer
			if err := optimizeEval(context.Background(), cfg, []string{"eval", "--model", model}, &text); err != nil || !strings.Contains(text.String(), "overall") {
				t.Errorf("table output: %v\n%s", err, text.String())
			}
		})
	}
	if err := optimizeEval(context.Background(), cfg, []string{"eval"}, &bytes.Buffer{}); err == nil {
		t.Error("eval without --model must fail")
	}
}
