package guard

import (
	"math/rand/v2"
	"strings"
)

// Request bounds. A request's text is read by the gateway (see the
// reqbody package) and handed over as segments; the guard scores them in
// windows (scoreText). Its cost is bounded by design, not by a timer: at
// most maxRequestWindows windows of windowSize bytes are scored per
// request, so a verdict always arrives in a few milliseconds and a
// time-out means a broken guard, not a big prompt.
//
// A request within the bound is scored whole (each segment as
// scoreText would). A bigger one (padding, hundreds of turns, a huge
// document) is scored on a sample, chosen in this order until the bound
// is reached:
//
//  1. the latest turns: the head and tail windows of the last
//     latestSegments segments, where an attack on the next answer sits;
//  2. the system-adjacent text: the head and tail of the first
//     segments after the system prompt;
//  3. tool results and documents (the indirect-injection carriers):
//     their head windows, spread evenly if there are many;
//  4. windows holding attack cue words, spread evenly (the search itself
//     covers at most cueScanWindows windows, spread from a random offset);
//  5. windows spread evenly over everything, from a random offset, so
//     that no part of the padding is reliably unread.
const (
	maxRequestWindows = 64
	latestSegments    = 6
	adjacentSegments  = 2
	toolQuota         = 12
	cueQuota          = 12
	// cueScanWindows bounds the windows searched for cue words (about
	// 4 MB of text, 5 ms) in a request or a segment; past it, the middle
	// of the text is read with a probability, not for certain.
	cueScanWindows = 512
)

// window is one window of a segment: the segment's index and the byte
// offset of the window's start.
type window struct {
	seg, start int
}

// windowsOf lists the windows of a text of length n.
func windowsOf(seg, n int, out []window) []window {
	if n <= windowSize {
		return append(out, window{seg, 0})
	}
	step := windowSize - windowOverlap
	k := (n - windowOverlap + step - 1) / step
	for i := 0; i < k; i++ {
		out = append(out, window{seg, i * step})
	}
	return out
}

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

// windowCost is how many windows scoreText would score for a text.
func windowCost(n int) int {
	if n <= windowSize {
		return 1
	}
	step := windowSize - windowOverlap
	return min((n-windowOverlap+step-1)/step, maxWindows)
}

// sample chooses at most maxRequestWindows windows over the scanned
// segments, or returns nil when scoring every segment whole stays within
// the bound.
func sample(segs []Segment, idx []int, rnd func(n int) int) []window {
	cost := 0
	for _, i := range idx {
		cost += windowCost(len(segs[i].Text))
	}
	if cost <= maxRequestWindows {
		return nil
	}
	// Per segment, its windows; all windows in request order.
	var all []window
	first := make([]int, len(idx)+1) // first[j]: index in all of idx[j]'s first window
	for j, i := range idx {
		first[j] = len(all)
		all = windowsOf(i, len(segs[i].Text), all)
	}
	first[len(idx)] = len(all)
	chosen := make(map[int]bool, maxRequestWindows)
	var out []window
	pick := func(w int) {
		if len(out) < maxRequestWindows && w >= 0 && w < len(all) && !chosen[w] {
			chosen[w] = true
			out = append(out, all[w])
		}
	}
	headTail := func(j int) {
		pick(first[j])
		pick(first[j+1] - 1)
	}
	for j := len(idx) - 1; j >= 0 && j >= len(idx)-latestSegments; j-- {
		headTail(j)
	}
	for j := 0; j < len(idx) && j < adjacentSegments; j++ {
		headTail(j)
	}
	var tools []int
	for j, i := range idx {
		if segs[i].Source == SourceTool {
			tools = append(tools, first[j])
		}
	}
	spread(tools, toolQuota, pick)
	var cues []int
	for _, w := range cueScan(len(all), rnd) {
		if win := all[w]; hasCue(windowText(segs[win.seg].Text, win.start)) {
			cues = append(cues, w)
		}
	}
	spread(cues, cueQuota, pick)
	if left := maxRequestWindows - len(out); left > 0 {
		step := float64(len(all)) / float64(left)
		off := float64(rnd(1<<20)) / float64(1<<20) * step
		for k := 0; k < left; k++ {
			pick(int(off + float64(k)*step))
		}
	}
	return out
}

// cueScan lists the windows (of n) that are searched for cue words: all
// of them up to cueScanWindows, else that many spread evenly from a
// random offset, so that the search is bounded too.
func cueScan(n int, rnd func(int) int) []int {
	out := make([]int, 0, min(n, cueScanWindows))
	if n <= cueScanWindows {
		for i := range n {
			out = append(out, i)
		}
		return out
	}
	step := float64(n) / cueScanWindows
	off := float64(rnd(1<<20)) / float64(1<<20) * step
	for k := range cueScanWindows {
		out = append(out, int(off+float64(k)*step))
	}
	return out
}

// spread picks up to quota of ws, evenly spaced.
func spread(ws []int, quota int, pick func(int)) {
	if len(ws) <= quota {
		for _, w := range ws {
			pick(w)
		}
		return
	}
	for k := 0; k < quota; k++ {
		pick(ws[k*len(ws)/quota])
	}
}

// windowText is the text of the window starting at start.
func windowText(text string, start int) string {
	end := min(start+windowSize, len(text))
	return text[start:end]
}

// randN is the sampler's source of offsets.
func randN(n int) int { return rand.IntN(n) }
