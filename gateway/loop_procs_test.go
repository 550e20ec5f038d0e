package gateway

import (
	"runtime"
	"testing"

	"github.com/eurekagate/eurekagate/registry"
)

// A Server with loops and SpareProcessor leaves one of the runtime's
// processors free while its loops wait for events, and a second Server
// counts its loops as the first did, not from the first one's room;
// without SpareProcessor, GOMAXPROCS is left as it is.
func TestLoopsLeaveAProcessorFree(t *testing.T) {
	store := registry.New(registry.Config{})
	before := runtime.GOMAXPROCS(0)
	t.Cleanup(func() { // after the servers' own: the package's later tests as before
		runtime.GOMAXPROCS(before)
		procs.Lock()
		procs.base = 0
		procs.Unlock()
	})
	startServer(t, Config{}, ServerConfig{}, store)
	if procs := runtime.GOMAXPROCS(0); procs != before {
		t.Fatalf("GOMAXPROCS %d, was %d: a Server without SpareProcessor changed it", procs, before)
	}
	_, _, first := startServer(t, Config{}, ServerConfig{SpareProcessor: true}, store)
	if procs := runtime.GOMAXPROCS(0); procs <= first.cfg.Loops {
		t.Fatalf("GOMAXPROCS %d for %d loops", procs, first.cfg.Loops)
	}
	_, _, second := startServer(t, Config{}, ServerConfig{SpareProcessor: true}, store)
	if second.cfg.Loops != first.cfg.Loops {
		t.Errorf("the second server runs %d loops, the first %d", second.cfg.Loops, first.cfg.Loops)
	}
	if procs := runtime.GOMAXPROCS(0); procs != first.cfg.Loops+1 {
		t.Errorf("GOMAXPROCS %d for %d loops", procs, first.cfg.Loops)
	}
}
