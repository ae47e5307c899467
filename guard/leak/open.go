package leak

import "unicode/utf8"

// MaxOpenBytes bounds the caller-visible text Exempt reads: the newest
// text first, the rest not read (its runs stay protected).
const MaxOpenBytes = 1 << 20

// Exempt returns the protected texts without the runs of more than
// MaxWords consecutive words (read as the matcher reads them) that also
// stand in open, the text the caller itself sent in the same request
// (its user, assistant and tool turns, documents, tool descriptions): a
// caller gains nothing from reading back what it sent. A text with such
// a run is cut into the pieces around it, each matched on its own, so
// the private words next to a shared run still leak past MaxWords. A
// text that shares no run comes back unchanged (the same cache key).
// open is read newest first, at most MaxOpenBytes of it. The work is
// linear in the bytes read and the memory in the protected words.
func Exempt(texts, open []string) []string {
	type span struct {
		start, end int
		h          uint64
	}
	per := make([][]span, len(texts))
	shingles := map[uint64]bool{}
	// filter is a quick no before the map: one bit per the top 16 bits of a hash.
	var filter [1 << 16 / 64]uint64
	for i, t := range texts {
		eachWord(t, func(start, end int, h uint64) {
			per[i] = append(per[i], span{start, end, h})
		})
		ws := per[i]
		for j := 0; j+MaxWords < len(ws); j++ {
			var h uint64
			for _, w := range ws[j : j+MaxWords+1] {
				h = shingle(h, w.h)
			}
			shingles[h] = false
			filter[h>>48/64] |= 1 << (h >> 48 % 64)
		}
	}
	if len(shingles) == 0 {
		return texts
	}
	// Read the caller's text, newest first, marking the shingles found.
	found, budget := 0, MaxOpenBytes
	var ring [MaxWords + 1]uint64
	for i := len(open) - 1; i >= 0 && budget > 0 && found < len(shingles); i-- {
		t := open[i]
		if len(t) > budget {
			t = t[:budget]
		}
		budget -= len(t)
		n := 0
		eachWord(t, func(_, _ int, h uint64) {
			ring[n%len(ring)] = h
			n++
			if n < len(ring) {
				return
			}
			var sh uint64
			for j := n - len(ring); j < n; j++ {
				sh = shingle(sh, ring[j%len(ring)])
			}
			if filter[sh>>48/64]&(1<<(sh>>48%64)) == 0 {
				return
			}
			if seen, ok := shingles[sh]; ok && !seen {
				shingles[sh] = true
				found++
			}
		})
	}
	if found == 0 {
		return texts
	}
	out := make([]string, 0, len(texts)+1)
	for i, t := range texts {
		ws := per[i]
		shared := make([]bool, len(ws))
		cut := false
		for j := 0; j+MaxWords < len(ws); j++ {
			var h uint64
			for _, w := range ws[j : j+MaxWords+1] {
				h = shingle(h, w.h)
			}
			if shingles[h] {
				cut = true
				for o := j; o <= j+MaxWords; o++ {
					shared[o] = true
				}
			}
		}
		if !cut {
			out = append(out, t)
			continue
		}
		// The pieces between the shared runs; one of MaxWords words or
		// fewer cannot leak and is dropped.
		for j := 0; j < len(ws); {
			if shared[j] {
				j++
				continue
			}
			e := j
			for e < len(ws) && !shared[e] {
				e++
			}
			if e-j > MaxWords {
				out = append(out, t[ws[j].start:ws[e-1].end])
			}
			j = e
		}
	}
	return out
}

func shingle(h, w uint64) uint64 {
	return (h ^ w) * 0x100000001b3
}

// eachWord calls f with each word of t as the matcher reads it: its
// bytes in t and a hash of its folded letters.
func eachWord(t string, f func(start, end int, h uint64)) {
	var n normalizer
	start, end := -1, 0
	var h uint64
	flush := func() {
		for _, o := range n.out {
			if o.start {
				if start >= 0 {
					f(start, end, h)
				}
				start, h = int(o.org), 0xcbf29ce484222325
			}
			h = (h ^ uint64(o.c)) * 0x100000001b3
			_, sz := utf8.DecodeRuneInString(t[o.org:])
			end = int(o.org) + sz
		}
		n.out = n.out[:0]
	}
	for i, r := range t {
		n.feed(r, int64(i))
		flush()
	}
	n.end()
	flush()
	if start >= 0 {
		f(start, end, h)
	}
}
