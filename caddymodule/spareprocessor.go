package caddymodule

import (
	"os"
	"runtime"
	"sync"

	"go.uber.org/zap"
)

// SpareProcessorByDefault is the eureka app's spare_processor when the
// config does not say: false, so that a Caddy built with xcaddy keeps
// the GOMAXPROCS Go and Caddy chose; cmd/caddy, our binary, sets it
// true before Caddy starts (BinaryDefaults), as cmd/eureka spares a
// processor beside its loops.
var SpareProcessorByDefault bool

// spare is whether this process raised GOMAXPROCS already: once a
// process, so that a reload, whose new app starts before the old one
// stops, does not raise it again.
var spare struct {
	sync.Mutex
	raised bool
}

// spareProcessor raises GOMAXPROCS by one, once a process, unless the
// GOMAXPROCS environment variable is set (the user's number is kept).
// With as many processors as cores, a gateway sharing its cores with
// other processes (its instances, a sidecar, the load) left them idle
// for a tenth of the time under load while its goroutines waited for a
// processor whose thread the kernel had descheduled; one more keeps the
// cores busy (docs/performance.md). GOMAXPROCS then no longer follows a
// container's CPU limit as it changes.
func spareProcessor(log *zap.Logger) {
	spare.Lock()
	defer spare.Unlock()
	if spare.raised {
		return
	}
	if os.Getenv("GOMAXPROCS") != "" {
		log.Info("spare_processor: GOMAXPROCS is set in the environment, kept", zap.Int("gomaxprocs", runtime.GOMAXPROCS(0)))
		return
	}
	spare.raised = true
	n := runtime.GOMAXPROCS(0)
	runtime.GOMAXPROCS(n + 1)
	log.Info("spare_processor: GOMAXPROCS raised by one", zap.Int("from", n), zap.Int("to", n+1))
}
