// Package eval implements `gateway guard eval`: the guard's precision,
// recall and false-positive rate on a labelled file.
package eval

import (
	"bufio"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"

	"github.com/gwlabs/gateway/guard"
)

// Figures are the precision, recall and false-positive rate of one
// evaluation slice. A ratio with a zero denominator is reported as 0.
type Figures struct {
	Rows      int     `json:"rows"`
	Precision float64 `json:"precision"`
	Recall    float64 `json:"recall"`
	FPR       float64 `json:"fpr"`
}

// Report is what `gateway guard eval --json` prints.
//
// Overall figures count every attack row as positive. Per kind (the
// row's "kind" for attack rows): recall is the fraction of that kind's
// attacks flagged; FPR is over all benign rows, so it is the same for
// every kind; precision is that kind's flagged attacks over those plus
// all flagged benign rows, i.e. the precision the guard would have on
// traffic made of that kind of attack and the benign rows. KindAgreement
// is, among flagged attacks of a kind, the fraction whose verdict named
// that kind.
type Report struct {
	Threshold     float64            `json:"threshold"`
	Attacks       int                `json:"attacks"`
	Benign        int                `json:"benign"`
	Precision     float64            `json:"precision"`
	Recall        float64            `json:"recall"`
	FPR           float64            `json:"fpr"`
	PerKind       map[string]Figures `json:"per_kind"`
	KindAgreement map[string]float64 `json:"kind_agreement"`
	// PerLang is set when rows name their language ("lang"): recall
	// over that language's attacks, FPR over its benign rows.
	PerLang map[string]Figures `json:"per_lang,omitempty"`
}

type evalRow struct {
	Text  string `json:"text"`
	Label string `json:"label"`
	Kind  string `json:"kind"`
	// Role says how the row reaches the guard: "user" (the default),
	// "tool" (a tool result or document), "assistant" or "system" (never
	// scored, as the gateway treats system prompts).
	Role string `json:"role,omitempty"`
	// Lang is the row's language (optional), for per-language figures.
	Lang string `json:"lang,omitempty"`
}

// source is the row's role as a segment source; readEvalRows has
// checked it.
func (r evalRow) source() guard.Source {
	switch r.Role {
	case "tool":
		return guard.SourceTool
	case "assistant":
		return guard.SourceAssistant
	case "system":
		return guard.SourceSystem
	}
	return guard.SourceUser
}

// Command implements `gateway guard eval [--json] [--threshold X]
// FILE.jsonl`. Each line of FILE is {"text", "label": "attack"|"benign",
// "kind", "role"}; each text is checked as one segment of its role
// ("user" when absent; "tool" for tool results and documents). It prints the
// threshold and precision, recall and false-positive rate overall and per
// kind (see Report for the definitions), as a table or, with --json,
// as one JSON object.
func Command(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("guard eval", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	asJSON := fs.Bool("json", false, "print one JSON object")
	threshold := fs.Float64("threshold", 0, "decision threshold in (0, 1); 0: the model's default")
	var files []string
	rest := args
	for {
		if err := fs.Parse(rest); err != nil {
			return fmt.Errorf("guard eval: %w (usage: guard eval [--json] [--threshold X] FILE.jsonl)", err)
		}
		if fs.NArg() == 0 {
			break
		}
		files = append(files, fs.Arg(0))
		rest = fs.Args()[1:]
	}
	if len(files) != 1 {
		return errors.New("guard eval: want exactly one FILE.jsonl (usage: guard eval [--json] [--threshold X] FILE.jsonl)")
	}
	rows, err := readEvalRows(files[0])
	if err != nil {
		return err
	}
	g, err := guard.New(guard.Config{Threshold: *threshold})
	if err != nil {
		return fmt.Errorf("guard eval: %w", err)
	}
	rep := evaluate(g, rows)
	if *asJSON {
		enc := json.NewEncoder(stdout)
		if err := enc.Encode(rep); err != nil {
			return fmt.Errorf("guard eval: write: %w", err)
		}
		return nil
	}
	return writeEvalTable(stdout, rep)
}

func readEvalRows(path string) ([]evalRow, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("guard eval: %w", err)
	}
	defer f.Close()
	var rows []evalRow
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 64<<20)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if n == 1 {
			line = strings.TrimPrefix(line, "\uFEFF") // a byte-order mark some editors write
		}
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		var r evalRow
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			return nil, fmt.Errorf("guard eval: %s line %d: %w", path, n, err)
		}
		// Labels and kinds are compared without regard to case or
		// surrounding spaces ("Attack", " injection").
		r.Label = strings.ToLower(strings.TrimSpace(r.Label))
		r.Kind = strings.ToLower(strings.TrimSpace(r.Kind))
		if r.Label != "attack" && r.Label != "benign" {
			return nil, fmt.Errorf("guard eval: %s line %d: label %q is not attack or benign", path, n, r.Label)
		}
		r.Role = strings.ToLower(strings.TrimSpace(r.Role))
		switch r.Role {
		case "", "user", "tool", "assistant", "system":
		default:
			return nil, fmt.Errorf("guard eval: %s line %d: role %q is not user, tool, assistant or system", path, n, r.Role)
		}
		rows = append(rows, r)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("guard eval: read %s: %w", path, err)
	}
	if len(rows) == 0 {
		return nil, fmt.Errorf("guard eval: %s has no rows", path)
	}
	return rows, nil
}

func evaluate(g *guard.Guard, rows []evalRow) Report {
	var tp, fp, att, ben int
	kRows, kTP, kAgree := map[string]int{}, map[string]int{}, map[string]int{}
	type langCount struct{ att, tp, ben, fp int }
	langs := map[string]*langCount{}
	for _, r := range rows {
		v := g.Check([]guard.Segment{{Source: r.source(), Text: r.Text}})
		var lc *langCount
		if r.Lang != "" {
			if lc = langs[r.Lang]; lc == nil {
				lc = &langCount{}
				langs[r.Lang] = lc
			}
		}
		if r.Label == "benign" {
			ben++
			if v.Flagged {
				fp++
			}
			if lc != nil {
				lc.ben++
				if v.Flagged {
					lc.fp++
				}
			}
			continue
		}
		if lc != nil {
			lc.att++
			if v.Flagged {
				lc.tp++
			}
		}
		att++
		k := r.Kind
		if k == "" {
			k = "unknown"
		}
		kRows[k]++
		if v.Flagged {
			tp++
			kTP[k]++
			if string(v.Kind) == k {
				kAgree[k]++
			}
		}
	}
	rep := Report{
		Threshold:     g.Threshold(),
		Attacks:       att,
		Benign:        ben,
		Precision:     frac(tp, tp+fp),
		Recall:        frac(tp, att),
		FPR:           frac(fp, ben),
		PerKind:       map[string]Figures{},
		KindAgreement: map[string]float64{},
	}
	if len(langs) > 0 {
		rep.PerLang = map[string]Figures{}
		for l, c := range langs {
			rep.PerLang[l] = Figures{Rows: c.att + c.ben, Precision: frac(c.tp, c.tp+c.fp), Recall: frac(c.tp, c.att), FPR: frac(c.fp, c.ben)}
		}
	}
	for k, n := range kRows {
		rep.PerKind[k] = Figures{Rows: n, Precision: frac(kTP[k], kTP[k]+fp), Recall: frac(kTP[k], n), FPR: rep.FPR}
		rep.KindAgreement[k] = frac(kAgree[k], kTP[k])
	}
	return rep
}

func frac(a, b int) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}

func writeEvalTable(w io.Writer, rep Report) error {
	var b strings.Builder
	fmt.Fprintf(&b, "threshold %.4f, %d attack rows, %d benign rows\n", rep.Threshold, rep.Attacks, rep.Benign)
	fmt.Fprintf(&b, "%-12s %6s %9s %7s %7s %6s\n", "kind", "rows", "precision", "recall", "fpr", "kind=")
	fmt.Fprintf(&b, "%-12s %6d %9.3f %7.3f %7.3f %6s\n", "all", rep.Attacks+rep.Benign, rep.Precision, rep.Recall, rep.FPR, "")
	kinds := make([]string, 0, len(rep.PerKind))
	for k := range rep.PerKind {
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	for _, k := range kinds {
		f := rep.PerKind[k]
		fmt.Fprintf(&b, "%-12s %6d %9.3f %7.3f %7.3f %6.3f\n", k, f.Rows, f.Precision, f.Recall, f.FPR, rep.KindAgreement[k])
	}
	if len(rep.PerLang) > 0 {
		langs := make([]string, 0, len(rep.PerLang))
		for l := range rep.PerLang {
			langs = append(langs, l)
		}
		sort.Strings(langs)
		fmt.Fprintf(&b, "%-12s %6s %9s %7s %7s\n", "lang", "rows", "precision", "recall", "fpr")
		for _, l := range langs {
			f := rep.PerLang[l]
			fmt.Fprintf(&b, "%-12s %6d %9.3f %7.3f %7.3f\n", l, f.Rows, f.Precision, f.Recall, f.FPR)
		}
	}
	b.WriteString("per kind: recall over that kind's attacks; fpr over all benign rows; precision = kind's flagged attacks / (those + flagged benign); kind= is the share of flagged attacks whose verdict named the row's kind\n")
	if len(rep.PerLang) > 0 {
		b.WriteString("per lang: recall over that language's attacks; fpr over its benign rows\n")
	}
	if _, err := io.WriteString(w, b.String()); err != nil {
		return fmt.Errorf("guard eval: write: %w", err)
	}
	return nil
}
