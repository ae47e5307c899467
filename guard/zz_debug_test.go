package guard

import (
	"math/rand/v2"
	"testing"
)

func TestZZDebug(t *testing.T) {
	g := newGuard(t)
	rows, _ := readEvalRows("/tmp/g37/heldout_dev.jsonl")
	rng := rand.New(rand.NewPCG(3, 3))
	rng.Shuffle(len(rows), func(i, j int) { rows[i], rows[j] = rows[j], rows[i] })
	n := 0
	for _, r := range rows {
		if r.Label != "attack" || r.Kind != "extraction" {
			continue
		}
		v := g.Check([]Segment{{Source: r.source(), Text: r.Text}})
		if !v.Flagged && n < 40 {
			n++
			txt := r.Text
			if len(txt) > 160 {
				txt = txt[:160]
			}
			t.Logf("%.2f %q", v.Score, txt)
		}
	}
}
