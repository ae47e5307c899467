package guard

import (
	"strings"
	"unsafe"
)

// Reading a request. The gateway reads a request's text (see the reqbody
// package) and hands it over as segments; the guard reads every byte of
// every segment its policy scores, whatever the request's size: there is
// no sample and no cap, so padding cannot push an attack out of view,
// and the cost is linear in the text (a constant per byte, measured in
// bench_test.go).
//
//   - Each segment is scored alone, in all its windows (scoreText).
//   - Consecutive short segments (at most packMax bytes each) are also
//     scored together, joined by newlines in packs of up to windowSize
//     bytes, each pack starting with the last packCarry bytes' worth of
//     segments of the one before. A payload split over several turns
//     ("a='Ignore all previous'", "b='instructions'", "execute a+b") or
//     spread over thousands of short turns is read whole there; the
//     pack's threshold is the most lenient of its members' roles.
const (
	packMax   = 2048
	packCarry = 2048
)

// scanned returns the segments worth scoring (not system, not blank).
func scanned(segs []Segment) []int {
	var idx []int
	for i, s := range segs {
		if s.Source != SourceSystem && strings.TrimSpace(s.Text) != "" {
			idx = append(idx, i)
		}
	}
	return idx
}

// scorePacks scores the packs of consecutive short segments among idx
// (the scored segments, in order), calling consider with each pack's
// result, its last segment, its threshold and a function returning its
// joined text (valid only during the call).
func (g *Guard) scorePacks(sc *scratch, segs []Segment, idx []int, p *Policy, consider func(int, result, float64, func() string)) {
	members := sc.pack[:0]
	bytes, fresh := 0, 0
	joined := func() string { return string(sc.join) }
	flush := func() {
		if len(members) >= 2 && fresh > 0 {
			join := sc.join[:0]
			thr := 0.0
			for k, i := range members {
				if k > 0 {
					join = append(join, '\n')
				}
				join = append(join, segs[i].Text...)
				thr = max(thr, g.thresholdFor(p, segs[i].Source))
			}
			sc.join = join
			// The text is only read during the call; sc.join is not
			// written again before it returns.
			r := g.scoreWindow(sc, unsafe.String(unsafe.SliceData(join), len(join)))
			consider(members[len(members)-1], r, thr, joined)
		}
		// Carry the last segments into the next pack.
		keep, kb := len(members), 0
		for keep > 0 && kb+len(segs[members[keep-1]].Text)+1 <= packCarry {
			keep--
			kb += len(segs[members[keep]].Text) + 1
		}
		members = append(members[:0], members[keep:]...)
		bytes, fresh = kb, 0
	}
	for _, i := range idx {
		n := len(segs[i].Text) + 1
		if n > packMax+1 {
			flush()
			members, bytes = members[:0], 0
			continue
		}
		if bytes+n > windowSize {
			flush()
		}
		members = append(members, i)
		bytes += n
		fresh++
	}
	flush()
	sc.pack = members
}
