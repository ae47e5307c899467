package app

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"runtime"
	"time"
)

// Profiling rates while GATEWAY_PPROF_ADDR is set: one mutex contention
// event in mutexFraction, and goroutine blocking sampled once per
// blockRate nanoseconds blocked.
const (
	mutexFraction = 5
	blockRate     = 10_000
)

// startPprof serves the runtime profiles (/debug/pprof/: CPU, heap,
// goroutines, mutex and block contention) on their own listener at addr,
// never on the API's. It turns mutex and block profiling on (they cost
// a little on every contended lock) and returns the function that stops
// the listener and turns them off again, with the address it listens on.
func startPprof(addr string, logger *slog.Logger) (string, func() error, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return "", nil, fmt.Errorf("pprof listen: %w", err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	runtime.SetMutexProfileFraction(mutexFraction)
	runtime.SetBlockProfileRate(blockRate)
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			logger.Error("pprof server", "err", err)
		}
	}()
	logger.Info("pprof serving", "addr", ln.Addr().String())
	return ln.Addr().String(), func() error {
		runtime.SetMutexProfileFraction(0)
		runtime.SetBlockProfileRate(0)
		return srv.Close()
	}, nil
}
