package guard

import (
	"encoding/base64"
	"errors"
	"fmt"
	"math"
	"math/bits"
	"math/rand/v2"
	"slices"
)

// The local model scores short runs of tokens instead of the whole
// window. An instruction planted in a long email or table is a few
// sentences among hundreds of benign words: the window model sees it
// diluted by the document around it, the local model sees the run of
// tokens that holds it. It is a linear model over the same tokens
// (hashed word unigrams and bigrams, concepts and concept pairs), applied
// to every run of localRun tokens (stepping by localStep); a text's local
// score is its highest run's. It is trained as multiple-instance learning:
// an attack text must have at least one run that scores high, a benign
// text none.
const (
	localRun   = 32
	localStep  = 8
	localDense = denseMisc // concept presence and pairs; no obfuscation flags

	localRunPenalty = 0.3 // see runPenalty
)

// localModel holds the local model's weights: hashed weights quantised to
// int8 with one scale, concept weights as floats.
type localModel struct {
	bias   float32
	scale  float32
	sparse []int8    // numBuckets
	dense  []float32 // localDense
}

// conceptFeatures appends the concept features of the q-th token with
// concepts (sc.ctoks[q]): its concepts, then the ordered concept pairs it
// closes with the concept tokens at most pairWindow tokens before it,
// marked when a negation precedes the first. The window model sets them
// all; the local model sums their weights per token.
func conceptFeatures(sc *scratch, q int, dense []int32) []int32 {
	ct := sc.ctoks
	i := ct[q]
	t := &sc.tokens[i]
	for m := t.concepts; m != 0; m &= m - 1 {
		dense = append(dense, int32(bits.TrailingZeros64(m)))
	}
	lo := q
	for lo > 0 && ct[lo-1] >= i-pairWindow {
		lo--
	}
	for _, j := range ct[lo:q] {
		p := &sc.tokens[j]
		neg := int32(0)
		if p.neg {
			neg = 1
		}
		for a := p.concepts; a != 0; a &= a - 1 {
			ca := int32(bits.TrailingZeros64(a))
			for b := t.concepts; b != 0; b &= b - 1 {
				cb := int32(bits.TrailingZeros64(b))
				dense = append(dense, densePairs+(ca*numConcepts+cb)*2+neg)
			}
		}
	}
	return dense
}

// runs calls f with the bounds of each run of a text of n tokens: one run
// for a short text, else runs of localRun tokens every localStep tokens,
// the last one ending at the last token.
func runs(n int, f func(s, e int)) {
	if n <= localRun {
		if n > 0 {
			f(0, n)
		}
		return
	}
	s := 0
	for ; s+localRun < n; s += localStep {
		f(s, s+localRun)
	}
	f(n-localRun, n)
}

// runNorms are the scales of a run's summed hashed weights (two buckets
// a token) and summed concept weights (nd of them), as in the window
// model: L2 normalisation.
func runNorms(tokens, nd int) (float64, float64) {
	return 1 / math.Sqrt(float64(2*tokens)), denseNorm(nd)
}

// localLogit returns the highest run logit of the tokens in sc, whose
// hashed buckets are sc.sparse (two a token, as extract leaves them) and
// whose tokens with concepts are sc.ctoks. It works on prefix sums over
// tokens, so every run costs the same whatever its length.
func (lm *localModel) localLogit(sc *scratch) float64 {
	n := len(sc.tokens)
	if n == 0 {
		return math.Inf(-1)
	}
	if cap(sc.prefix) < n+1 {
		sc.prefix = make([]prefixSum, n+1, 2*n+2)
	}
	pre := sc.prefix[:n+1]
	pre[0] = prefixSum{}
	sp := sc.sparse[:2*n]
	w := lm.sparse[:numBuckets:numBuckets]
	ctoks := sc.ctoks
	q := 0
	dense := sc.ldense[:0]
	acc := prefixSum{}
	for i := 0; i < n; i++ {
		acc.c += int32(w[sp[2*i]&(numBuckets-1)]) + int32(w[sp[2*i+1]&(numBuckets-1)])
		if q < len(ctoks) && int(ctoks[q]) == i {
			dense = conceptFeatures(sc, q, dense[:0])
			q++
			var d float32
			for _, k := range dense {
				d += lm.dense[k]
			}
			acc.d += d
			acc.n += int32(len(dense))
		}
		pre[i+1] = acc
	}
	sc.ldense = dense
	best := math.Inf(-1)
	bias, scale := float64(lm.bias), float64(lm.scale)
	runs(n, func(s, e int) {
		a, b := &pre[s], &pre[e]
		sn, dn := runNorms(e-s, int(b.n-a.n))
		best = max(best, bias+float64(b.c-a.c)*scale*sn+float64(b.d-a.d)*dn)
	})
	return best - runPenalty(n)
}

// runPenalty is subtracted from the best run's logit of a text of n
// tokens: the highest of many run scores is higher than one run's by
// chance alone, and more so the more runs there are, which made long
// benign texts (elaborate system prompts, documents) score like
// attacks. It grows with the log of the number of runs, in training as
// in Check. Cross-validation measured localRunPenalty 0.3 better than 0
// on both seeds compared, for recall over all rows and on the
// development set at its own false-positive rate; larger values traded
// the one against the other.
func runPenalty(n int) float64 {
	return localRunPenalty * math.Log(float64(max(1, numRuns(n))))
}

// numRuns is the number of runs runs(n, f) calls f with.
func numRuns(n int) int {
	if n <= localRun {
		return min(n, 1)
	}
	return 1 + (n-localRun+localStep-1)/localStep
}

// prefixSum is the local model's sums over the tokens before one: hashed
// weights (quantised), concept weights, and the number of concept
// features.
type prefixSum struct {
	c int32
	n int32
	d float32
}

// localVec is one training text's per-token features.
type localVec struct {
	sp    []uint32 // 2 per token
	dense []int32
	doff  []int32 // dense features of token i: dense[doff[i]:doff[i+1]]
}

// newLocalVec copies the per-token features of the text extracted in sc.
func newLocalVec(sc *scratch) localVec {
	n := len(sc.tokens)
	v := localVec{sp: slices.Clone(sc.sparse[:2*n]), doff: make([]int32, 1, n+1)}
	q := 0
	for t := 0; t < n; t++ {
		if q < len(sc.ctoks) && int(sc.ctoks[q]) == t {
			v.dense = conceptFeatures(sc, q, v.dense)
			q++
		}
		v.doff = append(v.doff, int32(len(v.dense)))
	}
	return v
}

// trainLocal fits the local model on the examples' per-token features by
// multiple-instance learning: each step finds the run of an example that
// scores highest and takes a logistic-loss step on that run alone. The
// classes weigh wAtt and wBen, as in Train.
func trainLocal(ex []Example, vs []localVec, opt *TrainOptions, wAtt, wBen float64) *localModel {
	ws, gs := make([]float64, numBuckets), make([]float64, numBuckets)
	wd, gd := make([]float64, localDense), make([]float64, localDense)
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
			n := len(v.doff) - 1
			if n == 0 {
				continue
			}
			cs, ds, ns = cs[:0], ds[:0], ns[:0]
			cs, ds, ns = append(cs, 0), append(ds, 0), append(ns, 0)
			for t := 0; t < n; t++ {
				d := 0.0
				for _, k := range v.dense[v.doff[t]:v.doff[t+1]] {
					d += wd[k]
				}
				cs = append(cs, cs[t]+ws[v.sp[2*t]]+ws[v.sp[2*t+1]])
				ds = append(ds, ds[t]+d)
				ns = append(ns, ns[t]+int(v.doff[t+1]-v.doff[t]))
			}
			bs, be, bz := 0, 0, math.Inf(-1)
			runs(n, func(s, e int) {
				sn, dn := runNorms(e-s, ns[e]-ns[s])
				if z := b + (cs[e]-cs[s])*sn + (ds[e]-ds[s])*dn; z > bz {
					bs, be, bz = s, e, z
				}
			})
			y, w := 0.0, wBen
			if ex[i].Attack {
				y, w = 1, wAtt
			}
			bz -= runPenalty(n)
			g := (sigmoid(bz) - y) * w * ex[i].weight()
			sn, dn := runNorms(be-bs, ns[be]-ns[bs])
			for _, k := range v.sp[2*bs : 2*be] {
				gi := g*sn + opt.L2Sparse*ws[k]
				gs[k] += gi * gi
				ws[k] -= opt.LearningRate * gi / math.Sqrt(gs[k]+eps)
			}
			for _, k := range v.dense[v.doff[bs]:v.doff[be]] {
				gi := g*dn + opt.L2Dense*wd[k]
				gd[k] += gi * gi
				wd[k] -= opt.LearningRate * gi / math.Sqrt(gd[k]+eps)
			}
			gb += g * g
			b -= opt.LearningRate * g / math.Sqrt(gb+eps)
		}
	}
	lm := &localModel{bias: float32(b), scale: quantScale(ws), sparse: make([]int8, numBuckets), dense: make([]float32, localDense)}
	for i, w := range ws {
		lm.sparse[i] = quantize(w, lm.scale)
	}
	for i, w := range wd {
		lm.dense[i] = float32(w)
	}
	return lm
}

// localFile is the local model's part of the model file.
type localFile struct {
	Bias   float32   `json:"bias"`
	Scale  float32   `json:"scale"`
	Sparse string    `json:"sparse"` // base64 of int8 weights
	Dense  []float32 `json:"dense"`
}

func (lm *localModel) file() *localFile {
	return &localFile{Bias: lm.bias, Scale: lm.scale, Sparse: encodeInt8(lm.sparse), Dense: roundWeights(lm.dense)}
}

func (f *localFile) model() (*localModel, error) {
	if f == nil {
		return nil, errors.New("decode model: no local model")
	}
	raw, err := base64.StdEncoding.DecodeString(f.Sparse)
	if err != nil {
		return nil, fmt.Errorf("decode local weights: %w", err)
	}
	if len(raw) != numBuckets || len(f.Dense) != localDense {
		return nil, errors.New("decode model: wrong local table sizes")
	}
	return &localModel{bias: f.Bias, scale: f.Scale, sparse: asInt8(raw), dense: f.Dense}, nil
}
