package caddymodule

import (
	"runtime"
	"testing"

	"go.uber.org/zap"
)

// The app raises GOMAXPROCS by one, once a process whatever the reloads,
// and never over the environment's GOMAXPROCS.
func TestSpareProcessor(t *testing.T) {
	n := runtime.GOMAXPROCS(0)
	t.Cleanup(func() {
		runtime.GOMAXPROCS(n)
		spare.raised = false
	})
	spare.raised = false
	t.Setenv("GOMAXPROCS", "7")
	spareProcessor(zap.NewNop())
	if got := runtime.GOMAXPROCS(0); got != n {
		t.Fatalf("with GOMAXPROCS in the environment: %d processors, want %d", got, n)
	}
	t.Setenv("GOMAXPROCS", "")
	spareProcessor(zap.NewNop())
	spareProcessor(zap.NewNop()) // a reload's app
	if got := runtime.GOMAXPROCS(0); got != n+1 {
		t.Fatalf("%d processors, want %d", got, n+1)
	}
}

// spare_processor in the Caddyfile, on and off; absent, the app leaves
// it to SpareProcessorByDefault.
func TestSpareProcessorOption(t *testing.T) {
	expectAppOption(t, "spare_processor", func(a *App) *bool { return a.SpareProcessor }, map[string]*bool{
		"spare_processor on":  boolPtr(true),
		"spare_processor off": boolPtr(false),
		"registry r":          nil,
	})
	expectCaddyfileErrors(t, []caddyfileError{{name: "spare_processor maybe", caddyfile: withEurekaOptions("\t\tspare_processor maybe\n"), want: []string{"spare_processor"}}})
}
