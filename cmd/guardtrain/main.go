// Command guardtrain trains the prompt-attack guard's model and measures
// it with cross-validation grouped by collection.
//
// Usage:
//
//	go run ./cmd/guardtrain -data PATH/dev.jsonl -extra guard/train/testdata -cv -out guard/model.json
//
// The data file holds one JSON object per line: {"text", "label"
// ("attack" or "benign"), "kind", "source"}. Only rows whose source
// licence allows shipping weights trained on them (see allowedSources)
// are used for training; every row is used for evaluation. The -extra
// files (data/, documented in data/SOURCES.md) hold only rows licensed
// for training, in the same format, one collection per file; they are
// trained on and, in cross-validation, held out like any collection.
//
// With -cv, every collection is held out in turn: a model is trained on
// the allowed rows of all other collections and scores the held-out
// collection's rows, so no fold trains and tests on the same collection.
// The threshold is then chosen on those out-of-fold scores so that the
// false-positive rate on benign rows is at most -fpr, and per-fold and
// per-kind precision, recall and false-positive rate are printed. The
// Tensor Trust defenders' prompts (benign rows whose source ends in
// "#pre_prompt+post_prompt") are system prompts. By default they are
// scored as user text and count in the false-positive rate, as `gateway
// guard eval` scores every row of a file that does not say which rows are
// system prompts; with -systemrows system they are scored as system
// segments, which the guard never flags (as the gateway treats them), and
// are left out of every false-positive rate and of the threshold choice.
// The final model (trained on all allowed rows) stores that threshold.
// Everything is deterministic for a given -seed: the same flags write the
// same model file byte for byte.
//
// Other flags: -eval evaluates the model embedded in this build on -data
// (as `gateway guard eval` does); -scan scores every source file under
// the given directories as a tool result, the way coding agents send
// files, and prints the share flagged; -dump writes the out-of-fold scores;
// -fpr, -fprmode, -systemrows, -epochs, -l2sparse, -l2dense, -lr,
// -ownweight and -exclude tune or inspect training.
package main

import (
	"bufio"
	"encoding/base64"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/gwlabs/gateway/guard"
	guardeval "github.com/gwlabs/gateway/guard/eval"
	trainer "github.com/gwlabs/gateway/guard/train"
)

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "guardtrain:", err)
		os.Exit(1)
	}
}

type row struct {
	Text   string `json:"text"`
	Label  string `json:"label"`
	Kind   string `json:"kind"`
	Source string `json:"source"`
	// extra marks rows from -extra files, which hold only data whose
	// licence allows training (see data/SOURCES.md).
	extra bool
	// system marks an operator's system prompt that cross-validation
	// scores as a system segment (-systemrows system).
	system bool
}

// usable reports whether a row may be trained on.
func (r row) usable() bool { return r.extra || allowed(r.Source) }

// loadExtra reads the -extra files: each entry is a JSONL file or a
// directory whose *.jsonl files are read in name order.
func loadExtra(list string) ([]row, error) {
	var rows []row
	for _, p := range strings.Split(list, ",") {
		if p = strings.TrimSpace(p); p == "" {
			continue
		}
		files := []string{p}
		if st, err := os.Stat(p); err != nil {
			return nil, fmt.Errorf("extra data: %w", err)
		} else if st.IsDir() {
			files, err = filepath.Glob(filepath.Join(p, "*.jsonl"))
			if err != nil {
				return nil, err
			}
			sort.Strings(files)
		}
		for _, f := range files {
			rs, err := load(f)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", f, err)
			}
			for i := range rs {
				rs[i].extra = true
			}
			rows = append(rows, rs...)
		}
	}
	return rows, nil
}

func run(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("guardtrain", flag.ContinueOnError)
	data := fs.String("data", "", "labelled JSONL file (required)")
	extra := fs.String("extra", "", "comma-separated JSONL files or directories of further training data, all of it licensed for training (e.g. guard/train/testdata)")
	out := fs.String("out", "", "write the trained model here (e.g. guard/model.json)")
	cv := fs.Bool("cv", false, "run leave-one-collection-out cross-validation and set the threshold from it")
	fpr := fs.Float64("fpr", 0.01, "target false-positive rate on benign rows for the threshold")
	fprMode := fs.String("fprmode", "pooled", "how the threshold's false-positive rate is measured: mean (over benign collections) or pooled (over all benign rows)")
	threshold := fs.Float64("threshold", 0, "threshold to store instead of the CV one (0: from -cv, else 0.5); with -cv, a higher one makes the CV one the grey band's lower end")
	greyFlag := fs.Float64("grey", 0, "without -cv: the grey band's lower end to store (0: none)")
	blockFPR := fs.Float64("blockfpr", 0, "with -cv: the blocking threshold is the lowest whose out-of-fold FPR (as -fprmode) is at most this, and the -fpr one becomes the grey band's lower end (0: -threshold decides)")
	seed := fs.Uint64("seed", 1, "random seed (shuffling and augmentation)")
	epochs := fs.Int("epochs", 5, "training epochs")
	workers := fs.Int("workers", 2, "folds trained in parallel")
	dump := fs.String("dump", "", "with -cv: write out-of-fold scores as JSONL here")
	l2s := fs.Float64("l2sparse", 0, "L2 penalty on hashed weights (0: default)")
	l2d := fs.Float64("l2dense", 0, "L2 penalty on concept weights (0: default)")
	lr := fs.Float64("lr", 0, "learning rate (0: default)")
	exclude := fs.String("exclude", "", "leave this collection out of the final model's training (for inspection)")
	ownWeight := fs.Float64("ownweight", 5, "weight of the hand-written and templated examples (cross-validation: 2 below 3, 4 to 6 a little above it)")
	systemRows := fs.String("systemrows", "user", "how cross-validation scores the benign system-prompt rows: user (as `gateway guard eval` does, counted in the FPR) or system (as the gateway does, left out of the FPR)")
	pickOn := fs.String("pickon", "all", "with -cv: the rows the thresholds are chosen on: all, or trained (the rows some model trains on, leaving the licence-restricted collections out of the choice, so that they stay a held-out test)")
	setThreshold := fs.Float64("setthreshold", 0, "with -model and -out: write the model read from -model with this threshold and no other change, and exit (the weights are not trained again)")
	modelIn := fs.String("model", "", "with -setthreshold: the model file to read (e.g. guard/model.json)")
	evalOnly := fs.Bool("eval", false, "evaluate the model embedded in this build on -data (as `gateway guard eval` does) and exit")
	heldOut := fs.String("heldout", "", "write the rows of -data that no model is trained on (the licence-restricted collections: a held-out split for `gateway guard eval`) to this file, and exit")
	scanDirs := fs.String("scan", "", "comma-separated directories: score every file under them whose name has one of the -scanext endings as a tool result with the model embedded in this build, print the share flagged, and exit")
	scanExt := fs.String("scanext", ".go,.py,.js,.ts,.c,.h,.cc,.java,.rs,.rb,.md", "with -scan: the file name endings scanned")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *scanDirs != "" {
		return scan(strings.Split(*scanDirs, ","), strings.Split(*scanExt, ","), stdout)
	}
	if *pickOn != "all" && *pickOn != "trained" {
		return fmt.Errorf("-pickon %q: want all or trained", *pickOn)
	}
	if *setThreshold != 0 {
		return rethreshold(*modelIn, *out, *setThreshold, stdout)
	}
	if *data == "" {
		return errors.New("-data is required")
	}
	if *evalOnly {
		return guardeval.Command([]string{*data}, stdout)
	}
	rows, err := load(*data)
	if err != nil {
		return err
	}
	if *heldOut != "" {
		return writeHeldOut(*heldOut, rows, stdout)
	}
	more, err := loadExtra(*extra)
	if err != nil {
		return err
	}
	rows = append(rows, more...)
	switch *systemRows {
	case "user":
	case "system":
		for i := range rows {
			rows[i].system = isSystemPrompt(rows[i])
		}
	default:
		return fmt.Errorf("-systemrows %q: want user or system", *systemRows)
	}
	opt := trainer.TrainOptions{Epochs: *epochs, Seed: *seed, L2Sparse: *l2s, L2Dense: *l2d, LearningRate: *lr}

	thr, grey := *threshold, 0.0
	if !*cv && *greyFlag > 0 {
		grey = *greyFlag
	}
	if *cv {
		if *fprMode != "mean" && *fprMode != "pooled" {
			return fmt.Errorf("-fprmode %q: want mean or pooled", *fprMode)
		}
		t, block, err := crossValidate(rows, opt, *ownWeight, *fpr, *blockFPR, *fprMode == "mean", *pickOn == "trained", *workers, *dump, stdout)
		if err != nil {
			return err
		}
		if thr == 0 && block > t {
			thr = block // the grey band is set below
		}
		if thr == 0 {
			thr = t
		} else if t < thr {
			// A blocking threshold above the CV one: the band between
			// them is the grey band a second stage may judge.
			grey = t
		}
	}
	if *out == "" {
		return nil
	}
	if thr == 0 {
		thr = 0.5
	}
	train := trainingSet(rows, map[string]bool{*exclude: *exclude != ""}, *seed, *ownWeight)
	opt.Threshold, opt.Grey = thr, grey
	opt.Meta = fmt.Sprintf("trained by guardtrain on %d examples (allowed-licence rows, hand-written examples and obfuscated variants); seed %d, %d epochs; threshold %.4f", len(train), *seed, *epochs, thr)
	if grey > 0 {
		opt.Meta += fmt.Sprintf(", grey band from %.4f", grey)
	}
	m, err := trainer.Train(train, opt)
	if err != nil {
		return err
	}
	b, err := json.Marshal(m)
	if err != nil {
		return fmt.Errorf("encode model: %w", err)
	}
	if err := os.WriteFile(*out, append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("write model: %w", err)
	}
	fmt.Fprintf(stdout, "wrote %s (%d bytes), threshold %.4f, grey band from %.4f\n", *out, len(b)+1, thr, grey)
	return nil
}

// trainedRows are the rows some model trains on (usable) and their
// scores.
func trainedRows(rows []row, scores []float64) ([]row, []float64) {
	var tr []row
	var ts []float64
	for i, r := range rows {
		if r.usable() {
			tr, ts = append(tr, r), append(ts, scores[i])
		}
	}
	return tr, ts
}

// rethreshold writes the model in in to out with the threshold thr, its
// weights and grey band unchanged (the grey band is dropped when thr is
// not above it).
func rethreshold(in, out string, thr float64, stdout io.Writer) error {
	if in == "" || out == "" {
		return errors.New("-setthreshold needs -model and -out")
	}
	if thr <= 0 || thr >= 1 {
		return fmt.Errorf("-setthreshold %v: want a value in (0, 1)", thr)
	}
	b, err := os.ReadFile(in)
	if err != nil {
		return fmt.Errorf("read model: %w", err)
	}
	var m guard.Model
	if err := json.Unmarshal(b, &m); err != nil {
		return fmt.Errorf("%s: %w", in, err)
	}
	old := m.Threshold
	m.Threshold = thr
	if m.Grey >= thr {
		m.Grey = 0
	}
	m.Meta = strings.TrimSuffix(m.Meta, fmt.Sprintf("; threshold set to %.4f afterwards", old))
	if !strings.Contains(m.Meta, fmt.Sprintf("threshold %.4f", thr)) {
		m.Meta += fmt.Sprintf("; threshold set to %.4f afterwards", thr)
	}
	b, err = json.Marshal(&m)
	if err != nil {
		return fmt.Errorf("encode model: %w", err)
	}
	if err := os.WriteFile(out, append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("write model: %w", err)
	}
	fmt.Fprintf(stdout, "wrote %s, threshold %.4f -> %.4f, grey band from %.4f\n", out, old, thr, m.Grey)
	return nil
}

func load(path string) ([]row, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("open data: %w", err)
	}
	defer f.Close()
	var rows []row
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for n := 1; sc.Scan(); n++ {
		if strings.TrimSpace(sc.Text()) == "" {
			continue
		}
		var r row
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			return nil, fmt.Errorf("line %d: %w", n, err)
		}
		if r.Label != "attack" && r.Label != "benign" {
			return nil, fmt.Errorf("line %d: label %q", n, r.Label)
		}
		rows = append(rows, r)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read data: %w", err)
	}
	return rows, nil
}

// allowedSources are the source prefixes whose licence allows shipping
// weights trained on them (MIT, Apache-2.0, CC0, CC-BY(-SA)). Everything
// else (non-commercial, GPL, no licence, licence not checked) is used
// for evaluation only.
func allowedSources() []string {
	return []string{
		"yunwei37/satml-llmail-injection:",                                         // MIT (verbatim copy of an MIT data file)
		"Parapet-Tech/parapet:schema/eval/opensource_deepset_",                     // deepset/prompt-injections, Apache-2.0
		"Parapet-Tech/parapet:schema/eval/opensource_gandalf_attacks.yaml",         // Lakera gandalf_ignore_instructions, MIT
		"Parapet-Tech/parapet:schema/eval/opensource_mosscap_attacks.yaml",         // Lakera mosscap_prompt_injection, MIT
		"Parapet-Tech/parapet:schema/eval/l1_holdout.yaml#ultrachat",               // MIT
		"Parapet-Tech/parapet:schema/eval/l1_holdout.yaml#awesome-chatgpt-prompts", // CC0
		"Giskard-AI/prompt-injections:",                                            // MIT
		"microsoft/BIPIA:",                                                         // MIT (embedded CC-BY-SA text)
		"yizhongw/self-instruct:",                                                  // Apache-2.0
		"tatsu-lab/stanford_alpaca:",                                               // Apache-2.0
	}
}

func allowed(source string) bool {
	for _, p := range allowedSources() {
		if strings.HasPrefix(source, p) {
			return true
		}
	}
	return false
}

// collection names the upstream collection a row came from: the
// repository, except for the Parapet files, which gather several
// independent datasets (named by subset or file).
func collection(source string) string {
	repo, path, _ := strings.Cut(source, ":")
	if repo != "Parapet-Tech/parapet" {
		return repo
	}
	if _, sub, ok := strings.Cut(path, "#"); ok {
		return "parapet/" + sub
	}
	base := path[strings.LastIndex(path, "/")+1:]
	base = strings.TrimPrefix(strings.TrimSuffix(base, ".yaml"), "opensource_")
	base = strings.TrimSuffix(strings.TrimSuffix(base, "_attacks"), "_benign")
	return "parapet/" + base
}

// collWeightRef is the collection size up to which rows get full weight,
// and the most any collection weighs in all.
const collWeightRef = 100

// collWeightScale multiplies a collection's weight. The Go sources stand
// for every programming language that coding agents send as tool results
// (files read, diffs, build output): code is full of words that attacks
// use ("ignore", "instructions", "run", "import", "system", "key"), and
// one collection of 100 rows did not outweigh them. As 300 rows it took
// the share of files flagged from 1.6% to 0.4% on C headers, 1.4% to 0.4%
// on JavaScript and 1.2% to 0.6% on Python, languages it does not
// contain, with no change to recall beyond the seed noise (see the guard
// package's EXPERIMENTS.md).
var collWeightScale = map[string]float64{"golang/go": 3}

func example(r row) trainer.Example {
	return trainer.Example{Text: r.Text, Attack: r.Label == "attack", Kind: guard.Kind(r.Kind)}
}

// trainingSet is the allowed rows outside the held-out collections, the
// hand-written examples, and obfuscated variants of both.
func trainingSet(rows []row, heldOut map[string]bool, seed uint64, ownWeight float64) []trainer.Example {
	var ex []trainer.Example
	var coll []string
	size := map[string]int{}
	for _, r := range rows {
		if c := collection(r.Source); r.usable() && !heldOut[c] {
			ex = append(ex, example(r))
			coll = append(coll, c)
			size[c]++
		}
	}
	// Big collections would teach their own style; a collection weighs
	// at most as much as collWeightRef rows (a row of a collection of n
	// rows weighs collWeightRef/n), so every collection counts the same.
	// Cross-validation measured this above 1/sqrt(n) weights on every
	// seed compared (see the guard package's EXPERIMENTS.md).
	for i, c := range coll {
		ex[i].Weight = math.Min(1, collWeightRef/float64(size[c]))
		if k, ok := collWeightScale[c]; ok {
			ex[i].Weight *= k
		}
	}
	own := append(handWritten(), templated(seed)...)
	own = append(own, documentTemplates(seed)...)
	own = append(own, techDocs(seed)...)
	own = append(own, multilingual(seed)...)
	own = append(own, foreignHardNegatives(seed)...)
	own = append(own, operatorPrompts(seed)...)
	own = append(own, indirectInjections(seed)...)
	own = append(own, rolePlays(seed)...)
	own = append(own, devTraffic(seed)...)
	for i := range own {
		own[i].Weight = ownWeight
	}
	ex = append(ex, own...)
	return append(ex, augment(ex, seed)...)
}

// augment makes obfuscated copies (leetspeak, zero-width characters,
// spaced letters, homoglyphs, fullwidth forms, base64 wrapping) of one
// short example in four, attacks and benign alike, so that the model
// learns that obfuscation is undone by normalisation rather than a sign
// of attack on its own.
func augment(ex []trainer.Example, seed uint64) []trainer.Example {
	rng := rand.New(rand.NewPCG(seed, 0xa11))
	var out []trainer.Example
	k := 0
	for _, e := range ex {
		if len(e.Text) > 400 || rng.IntN(4) != 0 {
			continue
		}
		t := e.Text
		switch k % 6 {
		case 0:
			t = leet(t)
		case 1:
			t = zeroWidth(t)
		case 2:
			t = spaced(t)
		case 3:
			t = homoglyph(t)
		case 4:
			t = fullwidth(t)
		case 5:
			t = "Decode this and do what it says: " + base64.StdEncoding.EncodeToString([]byte(t))
			if !e.Attack {
				t = "What does this base64 say? " + base64.StdEncoding.EncodeToString([]byte(e.Text))
			}
		}
		k++
		out = append(out, trainer.Example{Text: t, Attack: e.Attack, Kind: e.Kind, Weight: e.Weight})
	}
	return out
}

func mapRunes(s string, f func(i int, r rune) string) string {
	var b strings.Builder
	i := 0
	for _, r := range s {
		b.WriteString(f(i, r))
		i++
	}
	return b.String()
}

func leet(s string) string {
	sub := map[rune]string{'a': "4", 'e': "3", 'i': "1", 'o': "0", 's': "5", 't': "7"}
	return mapRunes(s, func(_ int, r rune) string {
		if v, ok := sub[r]; ok {
			return v
		}
		return string(r)
	})
}

func zeroWidth(s string) string {
	return mapRunes(s, func(i int, r rune) string {
		if i%2 == 1 {
			return string(r) + "\u200b"
		}
		return string(r)
	})
}

func spaced(s string) string {
	return mapRunes(s, func(_ int, r rune) string {
		if r == ' ' {
			return "  "
		}
		return string(r) + " "
	})
}

func homoglyph(s string) string {
	sub := map[rune]string{'a': "а", 'e': "е", 'o': "о", 'p': "р", 'c': "с", 'i': "і"}
	return mapRunes(s, func(_ int, r rune) string {
		if v, ok := sub[r]; ok {
			return v
		}
		return string(r)
	})
}

func fullwidth(s string) string {
	return mapRunes(s, func(_ int, r rune) string {
		if r > ' ' && r < 0x7f {
			return string(r + 0xFEE0)
		}
		return string(r)
	})
}

// crossValidate holds out each collection in turn, scores its rows with a
// model trained on the others, prints per-fold and per-kind figures at the
// threshold chosen for targetFPR, and returns that threshold.
// It returns the threshold for targetFPR and, when blockFPR > 0, the one
// for blockFPR (0 otherwise).
func crossValidate(rows []row, opt trainer.TrainOptions, ownWeight, targetFPR, blockFPR float64, mean, trainedOnly bool, workers int, dump string, w io.Writer) (float64, float64, error) {
	byColl := map[string][]int{}
	for i, r := range rows {
		c := collection(r.Source)
		byColl[c] = append(byColl[c], i)
	}
	colls := make([]string, 0, len(byColl))
	for c := range byColl {
		colls = append(colls, c)
	}
	sort.Strings(colls)

	scores := make([]float64, len(rows))
	errs := make([]error, len(colls))
	var wg sync.WaitGroup
	sem := make(chan struct{}, max(1, workers))
	for ci, c := range colls {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			train := trainingSet(rows, map[string]bool{c: true}, opt.Seed, ownWeight)
			m, err := trainer.Train(train, opt)
			if err != nil {
				errs[ci] = fmt.Errorf("fold %s: %w", c, err)
				return
			}
			g, err := guard.NewWithModel(m, guard.Config{})
			if err != nil {
				errs[ci] = fmt.Errorf("fold %s: %w", c, err)
				return
			}
			for _, i := range byColl[c] {
				scores[i] = g.Check([]guard.Segment{{Source: rowSource(rows[i]), Text: rows[i].Text}}).Score
			}
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return 0, 0, err
	}

	if dump != "" {
		if err := dumpScores(dump, rows, scores); err != nil {
			return 0, 0, err
		}
	}
	// The rows the thresholds are chosen on: all, or (trainedOnly) the
	// rows some model trains on, so that the licence-restricted
	// collections play no part in the choice.
	prows, pscores := rows, scores
	if trainedOnly {
		prows, pscores = trainedRows(rows, scores)
		fmt.Fprintf(w, "thresholds chosen on the %d rows some model trains on (of %d)\n", len(prows), len(rows))
	}
	thr := pickThreshold(prows, pscores, targetFPR, fprOf(mean))
	block := 0.0
	if blockFPR > 0 {
		block = pickThreshold(prows, pscores, blockFPR, fprOf(mean))
		k := count(rows, scores, block, func(r row) bool { return !systemPrompt(r) })
		fmt.Fprintf(w, "blocking threshold %.4f (target FPR %.4f: pooled %.4f, mean over benign collections %.4f; recall %s, extraction %s, jailbreak %s, injection %s)\n",
			block, blockFPR, pooledFPR(rows, scores, block), meanFPR(rows, scores, block), ratio(k.caught, k.attacks), k.kindRecall("extraction"), k.kindRecall("jailbreak"), k.kindRecall("injection"))
	}
	fmt.Fprintf(w, "leave-one-collection-out CV, %d folds, threshold %.4f (target FPR %.3f, %s; mean over benign collections %.4f, pooled over rows %.4f)\n\n",
		len(colls), thr, targetFPR, map[bool]string{true: "mean over collections", false: "pooled"}[mean], meanFPR(rows, scores, thr), pooledFPR(rows, scores, thr))
	fmt.Fprintf(w, "%-42s %-8s %7s %7s %7s %7s\n", "held-out collection", "trained?", "attacks", "recall", "benign", "fpr")
	for _, c := range colls {
		k := count(rows, scores, thr, func(r row) bool { return collection(r.Source) == c && !systemPrompt(r) })
		tr := "eval"
		if rows[byColl[c][0]].usable() {
			tr = "train"
		}
		fmt.Fprintf(w, "%-42s %-8s %7d %7s %7d %7s\n", c, tr, k.attacks, ratio(k.caught, k.attacks), k.benign, ratio(k.falsePos, k.benign))
	}
	fmt.Fprintln(w)
	nsys := 0
	for _, r := range rows {
		if systemPrompt(r) {
			nsys++
		}
	}
	title := "all rows (every row scored as user text)"
	if nsys > 0 {
		title = fmt.Sprintf("all rows (user text; the %d benign system prompts are scored as system segments and left out of the FPR)", nsys)
	}
	report(w, title, rows, scores, thr, func(r row) bool { return !systemPrompt(r) })
	if slices.ContainsFunc(rows, func(r row) bool { return r.extra }) {
		report(w, "development-set rows only (user text)", rows, scores, thr, func(r row) bool { return !r.extra && !systemPrompt(r) })
		var dev []row
		var ds []float64
		for i, r := range rows {
			if !r.extra {
				dev, ds = append(dev, r), append(ds, scores[i])
			}
		}
		td := pickThreshold(dev, ds, targetFPR, pooledFPR)
		report(w, fmt.Sprintf("development-set rows only, threshold for FPR %.3f on its own benign rows", targetFPR), dev, ds, td, func(r row) bool { return !systemPrompt(r) })
	}
	report(w, "rows never trained on in any fold (licence-restricted collections)", rows, scores, thr, func(r row) bool {
		return !r.usable() && !systemPrompt(r)
	})
	fmt.Fprintln(w, "operating points (user-text rows): threshold for a target FPR (pooled over rows, or the mean over benign collections), and recall per kind there")
	fmt.Fprintf(w, "  %-6s %-7s %9s %7s %7s %7s %11s %10s %10s\n", "fpr<=", "mode", "threshold", "pooled", "mean", "recall", "extraction", "jailbreak", "injection")
	for _, f := range []float64{0.003, 0.005, 0.01, 0.02, 0.05, 0.10} {
		for _, mode := range []string{"pooled", "mean"} {
			t := pickThreshold(prows, pscores, f, fprOf(mode == "mean"))
			k := count(rows, scores, t, func(row) bool { return true })
			fmt.Fprintf(w, "  %-6.3f %-7s %9.4f %7.4f %7.4f %7s %11s %10s %10s\n", f, mode, t, pooledFPR(rows, scores, t), meanFPR(rows, scores, t),
				ratio(k.caught, k.attacks), k.kindRecall("extraction"), k.kindRecall("jailbreak"), k.kindRecall("injection"))
		}
	}
	fmt.Fprintln(w)
	return thr, block, nil
}

// isSystemPrompt reports whether a row is an operator's system prompt:
// the Tensor Trust defenders' pre- and post-prompts, and the benign rows
// of the collections of GPTs' and products' system prompts and of
// instruction-protection passages.
func isSystemPrompt(r row) bool {
	if r.Label != "benign" {
		return false
	}
	for _, p := range []string{"LouisShark/chatgpt_system_prompt:", "asgeirtj/system_prompts_leaks:", "0xeb/TheBigPromptLibrary:Security/GPT-Protections/"} {
		if strings.HasPrefix(r.Source, p) {
			return true
		}
	}
	return strings.Contains(r.Source, "#pre_prompt+post_prompt")
}

// systemPrompt reports whether cross-validation treats a row as a system
// segment, as the gateway would: it is scored as system text (it cannot
// be flagged) and left out of every false-positive rate and of the
// threshold choice. With -systemrows user (the default) no row is: system
// prompts are scored as user text and count as benign rows, as `gateway
// guard eval` scores them, since an evaluation file does not say which
// rows are system prompts.
func systemPrompt(r row) bool { return r.system }

// rowSource is the segment source a row is scored as in cross-validation.
func rowSource(r row) guard.Source {
	if systemPrompt(r) {
		return guard.SourceSystem
	}
	return guard.SourceUser
}

// pickThreshold returns the lowest threshold, rounded up to 1e-4 and
// within [0.05, 0.9999], whose false-positive rate on benign user-text
// rows (system prompts excluded), as fpr measures it, is at most target.
//
// With pooledFPR that is the rate over all benign rows. With meanFPR it
// is the mean of each benign collection's rate, whatever its size: the
// expected rate on a collection not seen before, when each collection is
// one draw of "other data", so one large collection of hard negatives
// cannot set the threshold alone.
func pickThreshold(rows []row, scores []float64, target float64, fpr func([]row, []float64, float64) float64) float64 {
	var cand []float64
	for i, r := range rows {
		if r.Label == "benign" && !systemPrompt(r) {
			cand = append(cand, math.Ceil((scores[i]+1e-9)*1e4)/1e4)
		}
	}
	if len(cand) == 0 {
		return 0.5
	}
	sort.Float64s(cand)
	// Both rates fall as the threshold rises: the lowest candidate that
	// meets the target is found by bisection. The highest candidate
	// always does (no benign row scores at or above it).
	lo := sort.Search(len(cand), func(k int) bool { return fpr(rows, scores, cand[k]) <= target })
	return math.Min(math.Max(cand[lo], 0.05), 0.9999)
}

// fprOf is the false-positive rate the threshold is chosen on: the mean
// over benign collections (mean) or the rate over all benign rows.
func fprOf(mean bool) func([]row, []float64, float64) float64 {
	if mean {
		return meanFPR
	}
	return pooledFPR
}

// meanFPR is the mean over benign collections of their false-positive
// rate at thr (user-text rows).
func meanFPR(rows []row, scores []float64, thr float64) float64 {
	n, fp := map[string]int{}, map[string]int{}
	for i, r := range rows {
		if r.Label != "benign" || systemPrompt(r) {
			continue
		}
		c := collection(r.Source)
		n[c]++
		if scores[i] >= thr {
			fp[c]++
		}
	}
	if len(n) == 0 {
		return 0
	}
	sum := 0.0
	for c, k := range n {
		sum += float64(fp[c]) / float64(k)
	}
	return sum / float64(len(n))
}

// pooledFPR is the false-positive rate at thr over all benign user-text
// rows.
func pooledFPR(rows []row, scores []float64, thr float64) float64 {
	k := count(rows, scores, thr, func(r row) bool { return !systemPrompt(r) })
	if k.benign == 0 {
		return 0
	}
	return float64(k.falsePos) / float64(k.benign)
}

// confusion is what a threshold does to a set of rows: attacks and those
// flagged, overall and per kind, and benign rows and those flagged.
type confusion struct {
	attacks, caught  int
	kind, kindCaught map[string]int
	benign, falsePos int
}

// count is the confusion at thr over the rows keep accepts.
func count(rows []row, scores []float64, thr float64, keep func(row) bool) confusion {
	k := confusion{kind: map[string]int{}, kindCaught: map[string]int{}}
	for i, r := range rows {
		if !keep(r) {
			continue
		}
		f := scores[i] >= thr
		if r.Label == "attack" {
			k.attacks++
			k.kind[r.Kind]++
			if f {
				k.caught++
				k.kindCaught[r.Kind]++
			}
			continue
		}
		k.benign++
		if f {
			k.falsePos++
		}
	}
	return k
}

// kindRecall is the share of the kind's attacks flagged, as ratio prints it.
func (k confusion) kindRecall(kind string) string { return ratio(k.kindCaught[kind], k.kind[kind]) }

func ratio(a, b int) string {
	if b == 0 {
		return "-"
	}
	return fmt.Sprintf("%.3f", float64(a)/float64(b))
}

// report prints overall and per-kind precision, recall and FPR. Per kind:
// recall over that kind's attacks; FPR over all benign rows (the same for
// every kind); precision = that kind's flagged attacks over those plus all
// flagged benign rows, as if the kind were the only attack present.
func report(w io.Writer, title string, rows []row, scores []float64, thr float64, keep func(row) bool) {
	k := count(rows, scores, thr, keep)
	fpr := ratio(k.falsePos, k.benign)
	fmt.Fprintf(w, "%s: threshold %.4f\n", title, thr)
	fmt.Fprintf(w, "  %-11s %6s %9s %7s %7s\n", "kind", "rows", "precision", "recall", "fpr")
	fmt.Fprintf(w, "  %-11s %6d %9s %7s %7s\n", "all", k.attacks+k.benign, ratio(k.caught, k.caught+k.falsePos), ratio(k.caught, k.attacks), fpr)
	for _, kind := range []string{"extraction", "jailbreak", "injection"} {
		fmt.Fprintf(w, "  %-11s %6d %9s %7s %7s\n", kind, k.kind[kind], ratio(k.kindCaught[kind], k.kindCaught[kind]+k.falsePos), k.kindRecall(kind), fpr)
	}
	fmt.Fprintln(w)
}

func dumpScores(path string, rows []row, scores []float64) error {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	for i, r := range rows {
		if err := enc.Encode(struct {
			row
			Score float64 `json:"score"`
		}{r, scores[i]}); err != nil {
			return err
		}
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		return fmt.Errorf("write scores: %w", err)
	}
	return nil
}

// writeHeldOut writes the rows no model is trained on (usable() false) to
// path, in the data format.
func writeHeldOut(path string, rows []row, stdout io.Writer) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	n := 0
	for _, r := range rows {
		if r.usable() {
			continue
		}
		b, err := json.Marshal(struct {
			Text   string `json:"text"`
			Label  string `json:"label"`
			Kind   string `json:"kind"`
			Source string `json:"source"`
		}{r.Text, r.Label, r.Kind, r.Source})
		if err != nil {
			f.Close()
			return err
		}
		w.Write(append(b, '\n'))
		n++
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	fmt.Fprintf(stdout, "wrote %d held-out rows to %s\n", n, path)
	return f.Close()
}
