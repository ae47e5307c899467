package guard

import (
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"testing"
)

func TestZZDebug(t *testing.T) {
	b, err := os.ReadFile("/tmp/m.json")
	if err != nil {
		t.Skip()
	}
	var m Model
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	txt, _ := os.ReadFile("/tmp/txt")
	sc := &scratch{}
	extract(sc, newLexicon(), string(txt))
	l := m.logits(sc)
	var acc float64
	for _, b := range sc.sparse {
		acc += float64(m.sparse[int(b)*numCols]) * float64(m.scale[0])
	}
	fmt.Printf("logits %v bias %v sparse %.3f (n=%d) dn=%.3f rule=%q\n", l, m.bias, acc, len(sc.sparse), denseNorm(len(sc.hits)), sc.rule.name)
	type dw struct{ n string; w float32 }
	var ds []dw
	for _, d := range sc.hits {
		ds = append(ds, dw{denseName(int(d)), m.dense[int(d)*numCols]})
	}
	sort.Slice(ds, func(i, j int) bool { return ds[i].w > ds[j].w })
	for i, d := range ds {
		if i < 15 || i > len(ds)-5 {
			fmt.Printf("  %-40s %.3f\n", d.n, d.w)
		}
	}
}
