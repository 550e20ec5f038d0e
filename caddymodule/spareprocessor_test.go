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
	for _, c := range []struct {
		body string
		want *bool
	}{
		{withEurekaOptions("\t\tspare_processor on\n"), boolPtr(true)},
		{withEurekaOptions("\t\tspare_processor off\n"), boolPtr(false)},
		{withEurekaOptions("\t\tregistry r\n"), nil},
	} {
		app, _ := adaptApp(t, c.body)
		if app == nil {
			t.Fatalf("%q: no eureka app", c.body)
		}
		if (app.SpareProcessor == nil) != (c.want == nil) || app.SpareProcessor != nil && *app.SpareProcessor != *c.want {
			t.Errorf("%q: spare_processor %v, want %v", c.body, app.SpareProcessor, c.want)
		}
	}
	expectCaddyfileErrors(t, []caddyfileError{{name: "spare_processor maybe", caddyfile: withEurekaOptions("\t\tspare_processor maybe\n"), want: []string{"spare_processor"}}})
}
