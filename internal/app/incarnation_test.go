package app

import (
	"os"
	"testing"
)

func TestInstanceName(t *testing.T) {
	host, _ := os.Hostname()
	for _, c := range []struct{ setting, addr, want string }{
		{"gw-1", "127.0.0.1:0", "gw-1"},
		{"", "127.0.0.1:8080", host + "/127.0.0.1:8080"},
		{"", "127.0.0.1:0", ""}, // a new port at each start: no stable name
		{"", "bad", ""},
	} {
		if got := instanceName(c.setting, c.addr); got != c.want {
			t.Errorf("instanceName(%q, %q) = %q; want %q", c.setting, c.addr, got, c.want)
		}
	}
}
