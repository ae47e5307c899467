package guard

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
)

// Example is one labelled training text.
type Example struct {
	Text   string
	Attack bool
	Kind   Kind    // for attacks: extraction, jailbreak or injection
	Weight float64 // relative weight in the loss; 0 means 1
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
	L2Dense      float64 // L2 penalty on concept features; default 1e-2
	Threshold    float64 // stored as the model's default threshold; default 0.5
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
		o.L2Dense = 1e-2
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
func featurize(ex []Example) ([]vec, []localVec) {
	lex := newLexicon()
	sc := &scratch{}
	out := make([]vec, len(ex))
	lv := make([]localVec, len(ex))
	counts := map[uint32]int{}
	for i, e := range ex {
		extract(sc, lex, e.Text)
		lv[i] = newLocalVec(sc)
		clear(counts)
		for _, b := range sc.sparse {
			counts[b]++
		}
		v := vec{idx: make([]uint32, 0, len(counts)), val: make([]float32, 0, len(counts))}
		for b := range counts {
			v.idx = append(v.idx, b)
		}
		slices.Sort(v.idx)
		norm := 1 / math.Sqrt(math.Max(1, float64(len(sc.sparse))))
		for _, b := range v.idx {
			v.val = append(v.val, float32(float64(counts[b])*norm))
		}
		v.dense = slices.Clone(sc.hits)
		v.dval = denseNorm(len(v.dense))
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
		ws: make([]float64, numBuckets), gs: make([]float64, numBuckets),
		wd: make([]float64, numDense), gd: make([]float64, numDense),
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

// Train fits a model on ex: a class-balanced logistic regression for
// attack against benign, and a class-balanced softmax over the kinds of
// the attack examples. It is deterministic for given options.
func Train(ex []Example, opt TrainOptions) (*Model, error) {
	opt.defaults()
	var nAtt, nBen float64
	var nKind [numCols]float64
	for _, e := range ex {
		if !e.Attack {
			nBen += e.weight()
			continue
		}
		nAtt += e.weight()
		c, err := kindCol(e.Kind)
		if err != nil {
			return nil, err
		}
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

	attack := newLinear()
	total := nAtt + nBen
	wAtt, wBen := total/(2*nAtt), total/(2*nBen)
	var kinds [numCols]*linear
	for c := colExtraction; c < numCols; c++ {
		kinds[c] = newLinear()
	}
	for ep := 0; ep < opt.Epochs; ep++ {
		rng.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
		for _, i := range order {
			v := &vs[i]
			y, w := 0.0, wBen
			if ex[i].Attack {
				y, w = 1, wAtt
			}
			w *= ex[i].weight()
			attack.step(v, (sigmoid(attack.z(v))-y)*w, &opt)
			if !ex[i].Attack {
				continue
			}
			kc, _ := kindCol(ex[i].Kind)
			var z [numCols]float64
			mx := math.Inf(-1)
			for c := colExtraction; c < numCols; c++ {
				z[c] = kinds[c].z(v)
				mx = math.Max(mx, z[c])
			}
			sum := 0.0
			for c := colExtraction; c < numCols; c++ {
				z[c] = math.Exp(z[c] - mx)
				sum += z[c]
			}
			kw := ex[i].weight() * nAtt / (3 * math.Max(1, nKind[kc]))
			for c := colExtraction; c < numCols; c++ {
				t := 0.0
				if c == kc {
					t = 1
				}
				kinds[c].step(v, (z[c]/sum-t)*kw, &opt)
			}
		}
	}

	m := &Model{
		Threshold: opt.Threshold,
		Meta:      opt.Meta,
		signature: lexiconSignature(),
		sparse:    make([]int8, numBuckets*numCols),
		dense:     make([]float32, numDense*numCols),
	}
	cols := [numCols]*linear{attack, kinds[1], kinds[2], kinds[3]}
	for c, l := range cols {
		m.bias[c] = float32(l.b)
		m.scale[c] = quantScale(l.ws)
		for i, w := range l.ws {
			m.sparse[i*numCols+c] = quantize(w, m.scale[c])
		}
		for d, w := range l.wd {
			m.dense[d*numCols+c] = float32(w)
		}
	}
	m.index()
	m.local = trainLocal(ex, lvs, &opt, wAtt, wBen)
	return m, nil
}

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

func kindCol(k Kind) (int, error) {
	switch k {
	case KindExtraction:
		return colExtraction, nil
	case KindJailbreak:
		return colJailbreak, nil
	case KindInjection:
		return colInjection, nil
	}
	return 0, fmt.Errorf("train: unknown kind %q", k)
}
