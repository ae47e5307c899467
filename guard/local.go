package guard

import (
	"encoding/base64"
	"errors"
	"fmt"
	"math"
	"math/bits"
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
