package chat

import (
	gw "github.com/gwlabs/gateway"
)

// drainUsage reads the rest of a vendor's stream whose caller left,
// writing nothing, and merges the usage its events carry: what the
// vendor reports at the end of its stream bills, not an estimate from
// the text relayed. It returns whether the stream finished. The read
// is bounded by the vendor call's context, which outlives the caller by
// proxy.StreamLinger at most; the text read here is never billed as
// relayed.
func drainUsage(es gw.EventStream, usage *gw.Usage) (finished bool) {
	for {
		ev, err := es.Recv()
		if err != nil {
			return finished
		}
		switch ev.Type {
		case gw.EventStart:
			mergeEventUsage(usage, ev)
		case gw.EventFinish:
			mergeEventUsage(usage, ev)
			finished = true
		case gw.EventError:
			// A cancelled read's error event keeps the usage so far; the
			// stream did not finish.
			mergeEventUsage(usage, ev)
			return finished
		}
	}
}
