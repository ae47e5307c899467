package guard

import (
	_ "embed"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math"
)

//go:embed model.json
var embeddedModel string

// Columns of the weight tables: the attack logit, then one logit per kind.
const (
	colAttack = iota
	colExtraction
	colJailbreak
	colInjection
	numCols
)

// Model is a trained guard model: a logistic regression for "attack or
// not" and a softmax over the three attack kinds, sharing one feature
// space (hashed n-grams plus dense concept features). Hashed weights are
// quantised to int8 with one scale per column.
type Model struct {
	// Threshold is the default decision threshold on the attack score.
	Threshold float64
	// Meta describes how the model was trained (free text, kept in the
	// file for provenance).
	Meta string

	signature string
	bias      [numCols]float32
	scale     [numCols]float32
	sparse    []int8    // numBuckets*numCols, interleaved by bucket
	attack    []int8    // column colAttack of sparse, contiguous for the hot path
	dense     []float32 // numDense*numCols, interleaved by feature
	local     *localModel
}

type modelFile struct {
	Signature string     `json:"signature"`
	Meta      string     `json:"meta,omitempty"`
	Threshold float64    `json:"threshold"`
	Buckets   int        `json:"buckets"`
	Bias      []float32  `json:"bias"`
	Scale     []float32  `json:"scale"`
	Sparse    string     `json:"sparse"` // base64 of int8 weights
	Dense     []float32  `json:"dense"`
	Local     *localFile `json:"local"`
}

// MarshalJSON encodes the model in its file format.
func (m *Model) MarshalJSON() ([]byte, error) {
	return json.Marshal(modelFile{
		Signature: m.signature,
		Meta:      m.Meta,
		Threshold: m.Threshold,
		Buckets:   numBuckets,
		Bias:      m.bias[:],
		Scale:     m.scale[:],
		Sparse:    encodeInt8(m.sparse),
		Dense:     roundWeights(m.dense),
		Local:     m.local.file(),
	})
}

// UnmarshalJSON decodes a model file, refusing one built for other
// features.
func (m *Model) UnmarshalJSON(b []byte) error {
	var f modelFile
	if err := json.Unmarshal(b, &f); err != nil {
		return fmt.Errorf("decode model: %w", err)
	}
	if f.Signature != lexiconSignature() {
		return fmt.Errorf("model features %q do not match this build's %q: retrain the model", f.Signature, lexiconSignature())
	}
	if f.Buckets != numBuckets || len(f.Bias) != numCols || len(f.Scale) != numCols || len(f.Dense) != numDense*numCols {
		return errors.New("decode model: wrong table sizes")
	}
	raw, err := base64.StdEncoding.DecodeString(f.Sparse)
	if err != nil {
		return fmt.Errorf("decode model weights: %w", err)
	}
	if len(raw) != numBuckets*numCols {
		return errors.New("decode model: wrong weight count")
	}
	if f.Threshold <= 0 || f.Threshold >= 1 {
		return fmt.Errorf("decode model: threshold %v outside (0, 1)", f.Threshold)
	}
	m.signature = f.Signature
	m.Meta = f.Meta
	m.Threshold = f.Threshold
	copy(m.bias[:], f.Bias)
	copy(m.scale[:], f.Scale)
	m.sparse = asInt8(raw)
	m.dense = f.Dense
	if m.local, err = f.Local.model(); err != nil {
		return err
	}
	m.index()
	return nil
}

// encodeInt8 is the file form of quantised weights: base64 of their bytes.
func encodeInt8(w []int8) string {
	raw := make([]byte, len(w))
	for i, v := range w {
		raw[i] = byte(v)
	}
	return base64.StdEncoding.EncodeToString(raw)
}

// asInt8 reads decoded weight bytes back as int8.
func asInt8(raw []byte) []int8 {
	w := make([]int8, len(raw))
	for i, v := range raw {
		w[i] = int8(v)
	}
	return w
}

// roundWeights rounds float weights to 4 decimals for the file (smaller,
// and stable across platforms' last bits).
func roundWeights(ws []float32) []float32 {
	out := make([]float32, len(ws))
	for i, v := range ws {
		out[i] = float32(math.Round(float64(v)*1e4) / 1e4)
	}
	return out
}

// index builds the contiguous attack column.
func (m *Model) index() {
	m.attack = make([]int8, numBuckets)
	for i := range m.attack {
		m.attack[i] = m.sparse[i*numCols+colAttack]
	}
}

// attackLogit scores the features in sc for "attack".
func (m *Model) attackLogit(sc *scratch) float64 {
	var acc int32
	at := m.attack[:numBuckets:numBuckets]
	for _, b := range sc.sparse {
		acc += int32(at[b&(numBuckets-1)])
	}
	var dsum float64
	for _, d := range sc.hits {
		dsum += float64(m.dense[int(d)*numCols+colAttack])
	}
	return float64(m.bias[colAttack]) + float64(acc)*float64(m.scale[colAttack])*sparseNorm(len(sc.sparse)) + dsum*denseNorm(len(sc.hits))
}

// kindLogits scores the features in sc for each kind (columns 1..3; 0
// is left zero). It is computed only for texts that score high.
func (m *Model) kindLogits(sc *scratch) [numCols]float64 {
	var acc [numCols]int32
	sp := m.sparse
	for _, b := range sc.sparse {
		w := sp[int(b)*numCols : int(b)*numCols+numCols : int(b)*numCols+numCols]
		acc[1] += int32(w[1])
		acc[2] += int32(w[2])
		acc[3] += int32(w[3])
	}
	var dsum [numCols]float64
	for _, d := range sc.hits {
		w := m.dense[int(d)*numCols : int(d)*numCols+numCols]
		for c := colExtraction; c < numCols; c++ {
			dsum[c] += float64(w[c])
		}
	}
	var out [numCols]float64
	sn, dn := sparseNorm(len(sc.sparse)), denseNorm(len(sc.hits))
	for c := colExtraction; c < numCols; c++ {
		out[c] = float64(m.bias[c]) + float64(acc[c])*float64(m.scale[c])*sn + dsum[c]*dn
	}
	return out
}

// sparseNorm L2-normalises the hashed features (counted with repeats).
func sparseNorm(n int) float64 {
	if n == 0 {
		return 0
	}
	return 1 / math.Sqrt(float64(n))
}

// topCue names the dense feature that pushed the attack score most.
func (m *Model) topCue(sc *scratch) string {
	best, bestW := int32(-1), float32(0)
	for _, d := range sc.hits {
		if w := m.dense[int(d)*numCols+colAttack]; w > bestW {
			best, bestW = d, w
		}
	}
	return denseName(int(best))
}

func denseName(d int) string {
	switch {
	case d < 0:
		return ""
	case d < densePairs:
		return conceptName(d)
	case d < denseMisc:
		p := (d - densePairs) / 2
		s := conceptName(p/numConcepts) + "→" + conceptName(p%numConcepts)
		if (d-densePairs)%2 == 1 {
			s = "negated " + s
		}
		return s
	}
	switch d {
	case miscDecoded:
		return "encoded text"
	case miscTransform:
		return "rot13 or reversed text"
	case miscInvisible:
		return "invisible characters"
	case miscSpaced:
		return "spaced-out letters"
	case miscLeet:
		return "leetspeak"
	case miscFlood:
		return "repeated-token flood"
	case miscSymbols:
		return "symbol flood"
	}
	return ""
}

// denseNorm scales the concept features of texts with many of them, so
// that a long document does not add up weak cues into certainty: up to
// denseRef² features count fully, beyond that the vector is L2-normalised.
func denseNorm(n int) float64 {
	if n <= denseRef*denseRef {
		return 1
	}
	return denseRef / math.Sqrt(float64(n))
}

func sigmoid(x float64) float64 { return 1 / (1 + math.Exp(-x)) }
