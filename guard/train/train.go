// Package train fits the guard's model (cmd/guardtrain) on labelled
// examples, with the features the guard package extracts.
package train

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sort"

	"github.com/gwlabs/gateway/guard"
)

// Example is one labelled training text.
type Example struct {
	Text   string
	Attack bool
	Kind   guard.Kind // for attacks: extraction, jailbreak or injection
	Weight float64    // relative weight in the loss; 0 means 1
}

func (e Example) weight() float64 {
	if e.Weight <= 0 {
		return 1
	}
	return e.Weight
}

// TrainOptions tunes Train. Zero fields take the documented defaults.
type TrainOptions struct {
	Epochs       int     // passes over the data; default 5
	Seed         uint64  // shuffling seed; default 1
	LearningRate float64 // AdaGrad step; default 0.2
	L2Sparse     float64 // L2 penalty on hashed n-gram weights; default 1e-2
	L2Dense      float64 // L2 penalty on concept features; default 2e-2
	Threshold    float64 // stored as the model's default threshold; default 0.5
	Grey         float64 // stored as the lower end of the grey band; 0: none
	Meta         string  // provenance text stored in the model
}

func (o *TrainOptions) defaults() {
	if o.Epochs == 0 {
		o.Epochs = 5
	}
	if o.Seed == 0 {
		o.Seed = 1
	}
	if o.LearningRate == 0 {
		o.LearningRate = 0.2
	}
	if o.L2Sparse == 0 {
		o.L2Sparse = 1e-2
	}
	if o.L2Dense == 0 {
		o.L2Dense = 2e-2
	}
	if o.Threshold == 0 {
		o.Threshold = 0.5
	}
}

// vec is one example's features: merged hashed buckets with their
// normalised counts, and the dense features present.
type vec struct {
	idx   []uint32
	val   []float32
	dense []int32
	dval  float64 // value of each dense feature (denseNorm)
}

// featurize computes training vectors with the same extractor Check uses,
// one extraction per example for both models: the window model's vectors
// and the local model's per-token features.
func featurize(ex []Example) ([]vec, []guard.LocalFeatures) {
	x := guard.NewExtractor()
	out := make([]vec, len(ex))
	lv := make([]guard.LocalFeatures, len(ex))
	counts := map[uint32]int{}
	for i, e := range ex {
		f := x.Features(e.Text)
		lv[i] = f.Local
		clear(counts)
		for _, b := range f.Sparse {
			counts[b]++
		}
		v := vec{idx: make([]uint32, 0, len(counts)), val: make([]float32, 0, len(counts))}
		for b := range counts {
			v.idx = append(v.idx, b)
		}
		slices.Sort(v.idx)
		norm := 1 / math.Sqrt(math.Max(1, float64(len(f.Sparse))))
		for _, b := range v.idx {
			v.val = append(v.val, float32(float64(counts[b])*norm))
		}
		v.dense = f.Dense
		v.dval = guard.DenseNorm(len(v.dense))
		out[i] = v
	}
	return out, lv
}

// linear is one logistic output trained with AdaGrad.
type linear struct {
	ws, gs []float64 // hashed weights and squared-gradient sums
	wd, gd []float64 // dense
	b, gb  float64
}

func newLinear() *linear {
	return &linear{
		ws: make([]float64, guard.NumBuckets), gs: make([]float64, guard.NumBuckets),
		wd: make([]float64, guard.NumDense), gd: make([]float64, guard.NumDense),
	}
}

func (l *linear) z(v *vec) float64 {
	z := l.b
	for k, i := range v.idx {
		z += l.ws[i] * float64(v.val[k])
	}
	for _, d := range v.dense {
		z += l.wd[d] * v.dval
	}
	return z
}

func (l *linear) step(v *vec, g float64, o *TrainOptions) {
	const eps = 1e-8
	for k, i := range v.idx {
		gi := g*float64(v.val[k]) + o.L2Sparse*l.ws[i]
		l.gs[i] += gi * gi
		l.ws[i] -= o.LearningRate * gi / math.Sqrt(l.gs[i]+eps)
	}
	for _, d := range v.dense {
		gi := g*v.dval + o.L2Dense*l.wd[d]
		l.gd[d] += gi * gi
		l.wd[d] -= o.LearningRate * gi / math.Sqrt(l.gd[d]+eps)
	}
	l.gb += g * g
	l.b -= o.LearningRate * g / math.Sqrt(l.gb+eps)
}

// Train fits a model on ex: for each kind of attack, a class-balanced
// logistic regression telling that kind's examples from the benign ones
// (attacks of the other kinds take no part in it), and the local model.
// Separate regressions score an attack by what its own kind does, so
// that the cues of injections and jailbreaks do not have to share one
// set of weights (cross-validation measured recall over all rows, and on
// the development set at its own false-positive rate, above one
// regression for "attack" on every seed compared). It is deterministic
// for given options.
func Train(ex []Example, opt TrainOptions) (*guard.Model, error) {
	opt.defaults()
	var nAtt, nBen float64
	var nKind [guard.NumKinds]float64
	col := make([]int, len(ex)) // the example's column; -1 for benign
	for i, e := range ex {
		col[i] = -1
		if !e.Attack {
			nBen += e.weight()
			continue
		}
		nAtt += e.weight()
		c, err := kindCol(e.Kind)
		if err != nil {
			return nil, err
		}
		col[i] = c
		nKind[c] += e.weight()
	}
	if nAtt == 0 || nBen == 0 {
		return nil, errors.New("train: need both attack and benign examples")
	}
	vs, lvs := featurize(ex)
	rng := rand.New(rand.NewPCG(opt.Seed, 0x5eed))
	order := make([]int, len(ex))
	for i := range order {
		order[i] = i
	}

	// Each regression is class-balanced over its kind and the benign
	// examples; one whose kind has no examples is not trained and never
	// wins (its bias is set very low below).
	var kinds [guard.NumKinds]*linear
	var wAttK, wBenK [guard.NumKinds]float64
	for c := range kinds {
		kinds[c] = newLinear()
		if nKind[c] > 0 {
			wAttK[c] = (nKind[c] + nBen) / (2 * nKind[c])
			wBenK[c] = (nKind[c] + nBen) / (2 * nBen)
		}
	}
	for ep := 0; ep < opt.Epochs; ep++ {
		rng.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
		for _, i := range order {
			v := &vs[i]
			w := ex[i].weight()
			if col[i] >= 0 {
				c := col[i]
				kinds[c].step(v, (sigmoid(kinds[c].z(v))-1)*wAttK[c]*w, &opt)
				continue
			}
			for c, k := range kinds {
				if nKind[c] > 0 {
					k.step(v, sigmoid(k.z(v))*wBenK[c]*w, &opt)
				}
			}
		}
	}

	var w guard.Weights
	w.Sparse = make([]int8, guard.NumBuckets*guard.NumKinds)
	w.Dense = make([]float32, guard.NumDense*guard.NumKinds)
	for c, l := range kinds {
		w.Bias[c] = float32(l.b)
		if nKind[c] == 0 {
			w.Bias[c] = untrainedBias
		}
		w.Scale[c] = quantScale(l.ws)
		for i, x := range l.ws {
			w.Sparse[i*guard.NumKinds+c] = quantize(x, w.Scale[c])
		}
		for d, x := range l.wd {
			w.Dense[d*guard.NumKinds+c] = float32(x)
		}
	}
	total := nAtt + nBen
	trainLocal(&w, ex, lvs, &opt, total/(2*nAtt), total/(2*nBen))
	m, err := guard.NewModel(w, opt.Threshold, opt.Grey, opt.Meta)
	if err != nil {
		return nil, err
	}
	return m, nil
}

// untrainedBias is the bias of a kind's regression trained on no
// examples of that kind: low enough that it never scores highest.
const untrainedBias = -50

// quantize is w in int8 steps of scale, clipped to ±127.
func quantize(w float64, scale float32) int8 {
	return int8(max(-127, min(127, math.Round(w/float64(scale)))))
}

// quantScale picks the int8 step: the 99.99th percentile of |w| maps to
// 127, so a few outliers are clipped rather than crushing resolution.
func quantScale(ws []float64) float32 {
	abs := make([]float64, 0, len(ws))
	for _, w := range ws {
		if w != 0 {
			abs = append(abs, math.Abs(w))
		}
	}
	if len(abs) == 0 {
		return 1
	}
	sort.Float64s(abs)
	p := abs[min(len(abs)-1, int(float64(len(abs))*0.9999))]
	if p == 0 {
		return 1
	}
	return float32(p / 127)
}

func kindCol(k guard.Kind) (int, error) {
	if c, ok := guard.KindColumn(k); ok {
		return c, nil
	}
	return 0, fmt.Errorf("train: unknown kind %q", k)
}

func sigmoid(x float64) float64 { return 1 / (1 + math.Exp(-x)) }
