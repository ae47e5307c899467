package guard

import "unsafe"

// Reading a request. The gateway reads a request's text (see the reqbody
// package) and hands it over as segments; the guard reads every byte of
// every segment its policy scores, whatever the request's size: there is
// no sample and no cap, so padding cannot push an attack out of view,
// and the cost is linear in the text (a constant per byte, measured in
// bench_test.go).
//
//   - Each segment is scored alone, in all its windows (scoreText);
//     in a request of more than packOnly scored segments, those of at
//     most packEdge*2 bytes are read in the packs below only (their
//     every byte is there).
//   - When there are several scored segments, the segments' edges (a
//     short segment whole, else its first and last packEdge bytes) are
//     also scored together, joined by newlines in packs of up to
//     windowSize bytes, each pack starting with the last packCarry
//     bytes' worth of edges of the one before. A payload split over
//     several turns ("a='Ignore all previous'", "b='instructions'",
//     "execute a+b") or spread over thousands of short turns is read
//     whole there; the pack's threshold is the most lenient of its
//     members' roles.
const (
	packEdge  = 128
	packCarry = 1024
	packOnly  = 64
)

// edge is the part of a segment's text that goes into packs: all of a
// short one, else its head and tail.
func edge(text string) (head, tail string) {
	if len(text) <= 2*packEdge {
		return text, ""
	}
	h, t := packEdge, len(text)-packEdge
	for h > 0 && text[h]&0xC0 == 0x80 {
		h-- // not inside a UTF-8 sequence
	}
	for t < len(text) && text[t]&0xC0 == 0x80 {
		t++
	}
	return text[:h], text[t:]
}

// scorePacks scores the packs of consecutive segments' edges among idx
// (the scored segments, in order), calling consider with each pack's
// result, its last segment, its threshold, a function returning its
// joined text (valid only during the call) and whether any member is
// text the caller did not write (the pack is then third-party text
// whichever member it ends with).
func (g *Guard) scorePacks(sc *scratch, segs []Segment, idx []int, p *Policy, consider func(int, result, float64, func() string, bool)) {
	members := sc.pack[:0]
	bytes, fresh := 0, 0
	size := func(i int) int {
		h, t := edge(segs[i].Text)
		return len(h) + len(t) + 2
	}
	joined := func() string { return string(sc.join) }
	flush := func() {
		if len(members) >= 2 && fresh > 0 {
			join := sc.join[:0]
			thr, foreign := 0.0, false
			for k, i := range members {
				foreign = foreign || !callerSource(segs[i].Source)
				if k > 0 {
					join = append(join, '\n')
				}
				h, t := edge(segs[i].Text)
				join = append(join, h...)
				if t != "" {
					join = append(join, '\n')
					join = append(join, t...)
				}
				thr = max(thr, g.thresholdFor(p, segs[i].Source))
			}
			sc.join = join
			// The text is only read during the call; sc.join is not
			// written again before it returns.
			text := unsafe.String(unsafe.SliceData(join), len(join))
			r := g.cachedScore(p, cachePack, text, func() result { return g.scoreWindow(sc, text) })
			consider(members[len(members)-1], r, thr, joined, foreign)
		}
		// Carry the last edges into the next pack.
		keep, kb := len(members), 0
		for keep > 0 && kb+size(members[keep-1]) <= packCarry {
			keep--
			kb += size(members[keep])
		}
		members = append(members[:0], members[keep:]...)
		bytes, fresh = kb, 0
	}
	for _, i := range idx {
		n := size(i)
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
