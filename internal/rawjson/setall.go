package rawjson

import "encoding/json"

// KV is a member to set: Key given the raw JSON value Value.
type KV struct {
	Key   string
	Value []byte
}

// Value returns the raw value of the last of ms (b's members, from
// Members) named key, or nil: Get without another scan of b.
func Value(b []byte, ms []Member, key string) []byte {
	var v []byte
	for _, m := range ms {
		if m.Key == key {
			v = b[m.ValStart:m.ValEnd]
		}
	}
	return v
}

// SetAll returns what Set gives for each of sets in turn, from b's
// members ms (from Members) and one copy of b: a member named in sets
// takes the last value set for it, and the keys b lacks are appended in
// the order first set.
func SetAll(b []byte, ms []Member, sets ...KV) []byte {
	if len(sets) == 0 {
		return b
	}
	return Splice(b, SetEdits(b, ms, sets...)...)
}

// SetEdits are the edits by which SetAll sets sets in b, sorted, for a
// caller that has edits of its own inside b's values to make in the
// same copy.
func SetEdits(b []byte, ms []Member, sets ...KV) []Edit {
	last := func(key string) []byte {
		var v []byte
		for _, s := range sets {
			if s.Key == key {
				v = s.Value
			}
		}
		return v
	}
	var es []Edit
	for _, m := range ms {
		if keyIn(sets, m.Key) {
			es = append(es, Edit{Start: m.ValStart, End: m.ValEnd, Text: last(m.Key)})
		}
	}
	// The keys b lacks go before the closing brace, as Set appends them.
	var tail []byte
	members := len(ms)
	for i, s := range sets {
		if keyIn(sets[:i], s.Key) || memberIn(ms, s.Key) {
			continue
		}
		if members > 0 {
			tail = append(tail, ',')
		}
		members++
		kq, _ := json.Marshal(s.Key)
		tail = append(tail, kq...)
		tail = append(tail, ':')
		tail = append(tail, last(s.Key)...)
	}
	if len(tail) > 0 {
		end := len(b) - 1
		for end >= 0 && b[end] != '}' {
			end--
		}
		es = append(es, Edit{Start: end, End: end, Text: tail})
	}
	return es
}

func keyIn(sets []KV, key string) bool {
	for _, s := range sets {
		if s.Key == key {
			return true
		}
	}
	return false
}

func memberIn(ms []Member, key string) bool {
	for _, m := range ms {
		if m.Key == key {
			return true
		}
	}
	return false
}
