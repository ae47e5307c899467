package app

import (
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"
)

// TestPprofOwnListener: the profiles, mutex contention included, are
// served on their own address, and stopping turns the listener off.
func TestPprofOwnListener(t *testing.T) {
	addr, stop, err := startPprof("127.0.0.1:0", slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.Get("http://" + addr + "/debug/pprof/mutex?debug=1")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(body), "mutex") {
		t.Errorf("mutex profile: %d %.100s", resp.StatusCode, body)
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	if resp, err := http.Get("http://" + addr + "/debug/pprof/"); err == nil {
		resp.Body.Close()
		t.Error("pprof still served after stop")
	}
}
