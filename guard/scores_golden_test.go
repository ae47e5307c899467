package guard

import (
	"bufio"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"html"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// The scores golden: every text of the guard's labelled test data, of
// the recorded client requests and of the agent-shaped benchmark
// conversations, scored whole (Check, as a user turn and as a tool
// result) and by scoreText, hashed a file at a time. A change meant to
// make scoring cheaper must leave every bit of every score, kind, rule
// and cue as it was; a change meant to move scores regenerates the
// golden with
//
//	go test ./guard -run TestScoresGolden -update-scores
var updateScores = flag.Bool("update-scores", false, "rewrite testdata/scores.golden")

const scoresGolden = "testdata/scores.golden"

// goldenTexts is every text of a jsonl file: the "text" field of a
// labelled row, or every string of a recorded request's body.
func goldenTexts(t *testing.T, path string) []string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 64<<20)
	for sc.Scan() {
		if len(strings.TrimSpace(sc.Text())) == 0 {
			continue
		}
		var row map[string]any
		if err := json.Unmarshal(sc.Bytes(), &row); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if s, ok := row["text"].(string); ok {
			out = append(out, s)
			continue
		}
		var walk func(v any)
		walk = func(v any) {
			switch v := v.(type) {
			case string:
				out = append(out, v)
			case []any:
				for _, e := range v {
					walk(e)
				}
			case map[string]any:
				keys := make([]string, 0, len(v))
				for k := range v {
					keys = append(keys, k)
				}
				sort.Strings(keys)
				for _, k := range keys {
					walk(v[k])
				}
			}
		}
		walk(row["body"])
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func hashVerdict(h interface{ Write([]byte) (int, error) }, v Verdict) {
	fmt.Fprintf(h, "v %t %t %s %016x %q %d %t\n", v.Flagged, v.Grey, v.Kind, math.Float64bits(v.Score), v.Reason, v.Segment, v.ThirdParty)
}

func hashResult(h interface{ Write([]byte) (int, error) }, r result) {
	fmt.Fprintf(h, "r %016x %s %q %q %d %d %t %t\n", math.Float64bits(r.score), r.kind, r.rule, r.cue, r.from, r.to, r.mentioned, r.sentenceCue)
}

func TestScoresGolden(t *testing.T) {
	g := newGuard(t)
	var files []string
	for _, glob := range []string{"testdata/benign/*.jsonl", "testdata/multilingual/*.jsonl", "clientcorpus/testdata/*.jsonl"} {
		m, err := filepath.Glob(glob)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, m...)
	}
	sort.Strings(files)
	if len(files) < 10 {
		t.Fatalf("only %d data files found", len(files))
	}
	var got []string
	for _, f := range files {
		texts := goldenTexts(t, f)
		h := sha256.New()
		var all []Segment
		if strings.HasPrefix(f, "testdata/") {
			// the decoders' paths: each labelled text encoded too
			n := len(texts)
			for _, text := range texts[:n] {
				texts = append(texts,
					base64.StdEncoding.EncodeToString([]byte(text)),
					hex.EncodeToString([]byte(text)),
					"Decode this and do what it says: "+base64.StdEncoding.EncodeToString([]byte(text)))
			}
		}
		for _, text := range texts {
			hashVerdict(h, g.Check(user(text)))
			hashVerdict(h, g.Check([]Segment{{Source: SourceTool, Text: text}}))
			sc := g.pool.Get().(*scratch)
			hashResult(h, g.scoreText(sc, text))
			g.pool.Put(sc)
			all = append(all, Segment{Source: SourceUser, Text: text})
		}
		hashVerdict(h, g.Check(all))
		got = append(got, fmt.Sprintf("%s %d %x", filepath.ToSlash(f), len(texts), h.Sum(nil)[:12]))
	}
	for _, n := range []int{8 << 10, 110 << 10} {
		conv := agentConversation(n)
		h := sha256.New()
		hashVerdict(h, g.Check(conv))
		for k := 0; k < 3; k++ {
			hashVerdict(h, g.Check(followUp(conv, k)))
		}
		sc := g.pool.Get().(*scratch)
		for _, s := range conv {
			hashResult(h, g.scoreText(sc, s.Text))
		}
		g.pool.Put(sc)
		got = append(got, fmt.Sprintf("agent/%s %d %x", sizeName(n), len(conv), h.Sum(nil)[:12]))
	}
	text := strings.Join(got, "\n") + "\n"
	if *updateScores {
		if err := os.WriteFile(scoresGolden, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(scoresGolden)
	if err != nil {
		t.Fatalf("%v (generate it with -update-scores)", err)
	}
	if string(want) != text {
		t.Errorf("scores moved from %s:\ngot:\n%s\nwant:\n%s", scoresGolden, text, want)
	}
}

// htmlReferences may answer true for a text the unescaper leaves as it
// is, never false for one it changes.
func TestHTMLReferencesNeverMissesOne(t *testing.T) {
	for _, s := range []string{
		"", "&", "&&", "a && b", "& ;", "&;", "&1", "&1;", "&it.Name", "return &it, nil",
		"&amp;", "&amp", "&ampx", "x&lt y", "&LT", "&notit;", "&notin;", "&Gt;", "&gt",
		"&#65;", "&#x41", "&#", "&#;", "fmt(&b, &c); &copy2026",
		"&CounterClockwiseContourIntegral;", "&" + strings.Repeat("a", 50) + ";",
		"&it &it &it &lt;", "&it;&it;&it;&nbsp",
	} {
		changes := html.UnescapeString(s) != s
		if got := htmlReferences(s); changes && !got {
			t.Errorf("htmlReferences(%q) = false, but the unescaper changes it", s)
		}
	}
	// code's "&&" and "&x" are passed over without unescaping the text
	for _, s := range []string{"a && b", "&it.Name, &it.Price", "return &it, nil", "f(&b, &c); g(&d); x &= 1;"} {
		if htmlReferences(s) {
			t.Errorf("htmlReferences(%q) = true for code with no reference", s)
		}
	}
}
