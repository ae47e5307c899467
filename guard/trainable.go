package guard

import (
	"errors"
	"slices"
)

// The declarations below are what guard/train needs to fit a model with
// the same features Check reads: the extractor, the model's table sizes
// and the local model's runs. Nothing in Check uses them.

// Sizes of the model's tables.
const (
	NumBuckets    = numBuckets // hashed buckets (a power of two)
	NumDense      = numDense   // the window model's dense features
	NumLocalDense = localDense // the local model's dense features
	NumKinds      = numCols    // one regression per kind of attack
)

// KindColumn is the column of kind k in a model's tables, and false for a
// kind the model does not score.
func KindColumn(k Kind) (int, bool) {
	switch k {
	case KindExtraction:
		return colExtraction, true
	case KindJailbreak:
		return colJailbreak, true
	case KindInjection:
		return colInjection, true
	}
	return 0, false
}

// TextFeatures are one text's features as Check extracts them.
type TextFeatures struct {
	// Sparse are the window model's hashed buckets, one per occurrence.
	Sparse []uint32
	// Dense are the window model's dense features present.
	Dense []int32
	// Local are the local model's per-token features.
	Local LocalFeatures
}

// LocalFeatures are a text's per-token features for the local model.
type LocalFeatures struct {
	Sparse []uint32 // two hashed buckets a token
	Dense  []int32  // the dense features of token i are Dense[Off[i]:Off[i+1]]
	Off    []int32
}

// Extractor reads texts into their features. It is not safe for
// concurrent use.
type Extractor struct {
	lex *lexicon
	sc  scratch
}

// NewExtractor returns an extractor for this build's features.
func NewExtractor() *Extractor { return &Extractor{lex: newLexicon()} }

// Features extracts text's features; the result does not alias the
// extractor's buffers.
func (x *Extractor) Features(text string) TextFeatures {
	extract(&x.sc, x.lex, text)
	return TextFeatures{
		Sparse: slices.Clone(x.sc.sparse),
		Dense:  slices.Clone(x.sc.hits),
		Local:  newLocalFeatures(&x.sc),
	}
}

// newLocalFeatures copies the per-token features of the text extracted
// in sc.
func newLocalFeatures(sc *scratch) LocalFeatures {
	n := len(sc.tokens)
	v := LocalFeatures{Sparse: slices.Clone(sc.sparse[:2*n]), Off: make([]int32, 1, n+1)}
	q := 0
	for t := 0; t < n; t++ {
		if q < len(sc.ctoks) && int(sc.ctoks[q]) == t {
			v.Dense = conceptFeatures(sc, q, v.Dense)
			q++
		}
		v.Off = append(v.Off, int32(len(v.Dense)))
	}
	return v
}

// LocalRuns calls f with the bounds of each run of a text of n tokens
// that the local model scores.
func LocalRuns(n int, f func(s, e int)) { runs(n, f) }

// LocalRunNorms are the scales of a run's summed hashed weights (over
// tokens tokens) and summed dense weights (nd of them).
func LocalRunNorms(tokens, nd int) (float64, float64) { return runNorms(tokens, nd) }

// LocalRunPenalty is subtracted from the best run's logit of a text of n
// tokens.
func LocalRunPenalty(n int) float64 { return runPenalty(n) }

// DenseNorm is the scale of a window's dense features when nd are
// present.
func DenseNorm(nd int) float64 { return denseNorm(nd) }

// Weights are a trained model's parameters: per kind column, a bias, the
// step of the int8 hashed weights and the dense weights (tables
// interleaved by bucket and by feature, NumKinds entries each); and the
// local model's.
type Weights struct {
	Bias   [NumKinds]float32
	Scale  [NumKinds]float32
	Sparse []int8    // NumBuckets*NumKinds
	Dense  []float32 // NumDense*NumKinds

	LocalBias   float32
	LocalScale  float32
	LocalSparse []int8    // NumBuckets
	LocalDense  []float32 // NumLocalDense
}

// NewModel makes a model of trained weights for this build's features,
// with its threshold, grey band's lower end (0: none) and provenance.
func NewModel(w Weights, threshold, grey float64, meta string) (*Model, error) {
	if len(w.Sparse) != numBuckets*numCols || len(w.Dense) != numDense*numCols ||
		len(w.LocalSparse) != numBuckets || len(w.LocalDense) != localDense {
		return nil, errors.New("new model: wrong table sizes")
	}
	return &Model{
		Threshold: threshold,
		Grey:      grey,
		Meta:      meta,
		signature: lexiconSignature(),
		bias:      w.Bias,
		scale:     w.Scale,
		sparse:    w.Sparse,
		dense:     w.Dense,
		local:     &localModel{bias: w.LocalBias, scale: w.LocalScale, sparse: w.LocalSparse, dense: w.LocalDense},
	}, nil
}
