package chat

import "github.com/gwlabs/gateway/internal/rawjson"

// deliveryBytes is the length of the delivery members ("stream",
// "stream_options") of a request body with everything that only
// separates them from the others (the comma and the white space around
// it), so that a stream request is estimated as the same request
// without them would be, whatever its spacing: `, "stream": true` in
// `{"model": "m", "stream": true, "messages": [...]}` is one span.
func deliveryBytes(ms []rawjson.Member) int64 {
	var n int64
	for k, m := range ms {
		if m.Key != "stream" && m.Key != "stream_options" {
			continue
		}
		switch {
		case k > 0:
			// From the end of the member before: its separator and
			// this member.
			n += int64(m.ValEnd - ms[k-1].ValEnd)
		case k+1 < len(ms) && ms[k+1].Key != "stream" && ms[k+1].Key != "stream_options":
			// The first member: up to the next one's key.
			n += int64(ms[k+1].KeyStart - m.KeyStart)
		default:
			n += int64(m.ValEnd - m.KeyStart)
		}
	}
	return n
}
