package fakevendor

import "testing"

// The service tier and speed are read once per call and read as each
// was read alone: a member of the wrong type leaves the other.
func TestCallKnobsReadOnce(t *testing.T) {
	cases := []struct {
		body string
		tier string
		fast bool
	}{
		{`{"service_tier":"priority","speed":"fast"}`, "priority", true},
		{`{"service_tier":"flex","speed":7}`, "flex", false},
		{`{"service_tier":3,"speed":"fast"}`, "default", true},
		{`{"service_tier":"auto"}`, "default", false},
		{`not json`, "default", false},
	}
	for _, tc := range cases {
		c := &call{body: []byte(tc.body)}
		if got := c.servedTier("default"); got != tc.tier {
			t.Errorf("%s: tier %q, want %q", tc.body, got, tc.tier)
		}
		if got := c.fastMode(); got != tc.fast {
			t.Errorf("%s: fast %v, want %v", tc.body, got, tc.fast)
		}
		c.body = []byte(`{"service_tier":"flex","speed":"fast"}`)
		if got := c.servedTier("default"); got != tc.tier {
			t.Errorf("%s: tier read again from a later body: %q", tc.body, got)
		}
	}
}
