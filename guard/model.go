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

// Columns of the weight tables: one logit per kind of attack.
const (
	colExtraction = iota
	colJailbreak
	colInjection
	numCols
)

// kindLogits adds up exactly three columns; these fail to compile if
// numCols changes without it.
const (
	_ uint = numCols - 3
	_ uint = 3 - numCols
)

// Model is a trained guard model: three logistic regressions, one per
// kind of attack, each telling that kind from benign text, sharing one
// feature space (hashed n-grams plus dense concept features); a
// window's attack logit is the highest of the three, and its kind that
// regression's. Hashed weights are quantised to int8 with one scale per
// column.
type Model struct {
	// Threshold is the default decision threshold on the attack score.
	Threshold float64
	// Grey is the lower end of the grey band: scores in [Grey,
	// Threshold) are not blocked by the first stage but may be sent to a
	// second stage (0: no band).
	Grey float64
	// Meta describes how the model was trained (free text, kept in the
	// file for provenance).
	Meta string

	signature string
	bias      [numCols]float32
	scale     [numCols]float32
	sparse    []int8    // numBuckets*numCols, interleaved by bucket
	dense     []float32 // numDense*numCols, interleaved by feature
	local     *localModel
}

type modelFile struct {
	Signature string     `json:"signature"`
	Meta      string     `json:"meta,omitempty"`
	Threshold float64    `json:"threshold"`
	Grey      float64    `json:"grey,omitempty"`
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
		Grey:      m.Grey,
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
	if f.Grey < 0 || f.Grey >= f.Threshold && f.Grey != 0 {
		return fmt.Errorf("decode model: grey band from %v not below the threshold %v", f.Grey, f.Threshold)
	}
	m.Threshold = f.Threshold
	m.Grey = f.Grey
	copy(m.bias[:], f.Bias)
	copy(m.scale[:], f.Scale)
	m.sparse = asInt8(raw)
	m.dense = f.Dense
	if m.local, err = f.Local.model(); err != nil {
		return err
	}
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

// kindLogits scores the features in sc for each kind of attack, in one
// pass over the hashed buckets (a bucket's three weights are adjacent).
func (m *Model) kindLogits(sc *scratch) [numCols]float64 {
	var a0, a1, a2 int32
	sp := m.sparse[: numBuckets*numCols : numBuckets*numCols]
	for _, b := range sc.sparse {
		i := int(b&(numBuckets-1)) * numCols
		w := sp[i : i+numCols : i+numCols]
		a0 += int32(w[0])
		a1 += int32(w[1])
		a2 += int32(w[2])
	}
	acc := [numCols]int32{a0, a1, a2}
	var dsum [numCols]float64
	for _, d := range sc.hits {
		w := m.dense[int(d)*numCols : int(d)*numCols+numCols]
		dsum[0] += float64(w[0])
		dsum[1] += float64(w[1])
		dsum[2] += float64(w[2])
	}
	var out [numCols]float64
	sn, dn := sparseNorm(len(sc.sparse)), denseNorm(len(sc.hits))
	for c := range out {
		out[c] = float64(m.bias[c]) + float64(acc[c])*float64(m.scale[c])*sn + dsum[c]*dn
	}
	return out
}

// windowLogit is the window model's attack logit for the features in
// sc, the highest of the kinds', and the column that gave it.
func (m *Model) windowLogit(sc *scratch) (float64, int) {
	l := m.kindLogits(sc)
	c := colExtraction
	for k := range l {
		if l[k] > l[c] {
			c = k
		}
	}
	return l[c], c
}

// sparseNorm L2-normalises the hashed features (counted with repeats).
func sparseNorm(n int) float64 {
	if n == 0 {
		return 0
	}
	return 1 / math.Sqrt(float64(n))
}

// topCue names the dense feature that pushed column col's logit most.
func (m *Model) topCue(sc *scratch, col int) string {
	best, bestW := int32(-1), float32(0)
	for _, d := range sc.hits {
		if w := m.dense[int(d)*numCols+col]; w > bestW {
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
