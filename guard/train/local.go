package train

import (
	"math"
	"math/rand/v2"

	"github.com/gwlabs/gateway/guard"
)

// trainLocal fits the local model on the examples' per-token features by
// multiple-instance learning: each step finds the run of an example that
// scores highest and takes a logistic-loss step on that run alone. The
// classes weigh wAtt and wBen, as in Train.
func trainLocal(w *guard.Weights, ex []Example, vs []guard.LocalFeatures, opt *TrainOptions, wAtt, wBen float64) {
	ws, gs := make([]float64, guard.NumBuckets), make([]float64, guard.NumBuckets)
	wd, gd := make([]float64, guard.NumLocalDense), make([]float64, guard.NumLocalDense)
	var b, gb float64
	const eps = 1e-8
	rng := rand.New(rand.NewPCG(opt.Seed, 0x10ca1))
	order := make([]int, len(ex))
	for i := range order {
		order[i] = i
	}
	var cs, ds []float64
	var ns []int
	for ep := 0; ep < opt.Epochs; ep++ {
		rng.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
		for _, i := range order {
			v := &vs[i]
			n := len(v.Off) - 1
			if n == 0 {
				continue
			}
			cs, ds, ns = cs[:0], ds[:0], ns[:0]
			cs, ds, ns = append(cs, 0), append(ds, 0), append(ns, 0)
			for t := 0; t < n; t++ {
				d := 0.0
				for _, k := range v.Dense[v.Off[t]:v.Off[t+1]] {
					d += wd[k]
				}
				cs = append(cs, cs[t]+ws[v.Sparse[2*t]]+ws[v.Sparse[2*t+1]])
				ds = append(ds, ds[t]+d)
				ns = append(ns, ns[t]+int(v.Off[t+1]-v.Off[t]))
			}
			bs, be, bz := 0, 0, math.Inf(-1)
			guard.LocalRuns(n, func(s, e int) {
				sn, dn := guard.LocalRunNorms(e-s, ns[e]-ns[s])
				if z := b + (cs[e]-cs[s])*sn + (ds[e]-ds[s])*dn; z > bz {
					bs, be, bz = s, e, z
				}
			})
			y, cw := 0.0, wBen
			if ex[i].Attack {
				y, cw = 1, wAtt
			}
			bz -= guard.LocalRunPenalty(n)
			g := (sigmoid(bz) - y) * cw * ex[i].weight()
			sn, dn := guard.LocalRunNorms(be-bs, ns[be]-ns[bs])
			for _, k := range v.Sparse[2*bs : 2*be] {
				gi := g*sn + opt.L2Sparse*ws[k]
				gs[k] += gi * gi
				ws[k] -= opt.LearningRate * gi / math.Sqrt(gs[k]+eps)
			}
			for _, k := range v.Dense[v.Off[bs]:v.Off[be]] {
				gi := g*dn + opt.L2Dense*wd[k]
				gd[k] += gi * gi
				wd[k] -= opt.LearningRate * gi / math.Sqrt(gd[k]+eps)
			}
			gb += g * g
			b -= opt.LearningRate * g / math.Sqrt(gb+eps)
		}
	}
	w.LocalBias, w.LocalScale = float32(b), quantScale(ws)
	w.LocalSparse = make([]int8, guard.NumBuckets)
	for i, x := range ws {
		w.LocalSparse[i] = quantize(x, w.LocalScale)
	}
	w.LocalDense = make([]float32, guard.NumLocalDense)
	for i, x := range wd {
		w.LocalDense[i] = float32(x)
	}
}
