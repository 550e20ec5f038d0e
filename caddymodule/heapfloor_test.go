package caddymodule

import (
	"runtime/metrics"
	"testing"
)

// gcPercent is the garbage collector's percentage now.
func gcPercent() uint64 {
	s := []metrics.Sample{{Name: "/gc/gogc:percent"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// heap_floor in the Caddyfile: a size, off, or absent (the app leaves it
// to HeapFloorByDefault); what is not a size, and a negative floor in
// JSON, are refused.
func TestHeapFloorOption(t *testing.T) {
	expectAppOption(t, "heap_floor", func(a *App) *int64 { return a.HeapFloor }, map[string]*int64{
		"heap_floor 32MiB":   int64Ptr(32 << 20),
		"heap_floor 1048576": int64Ptr(1 << 20),
		"heap_floor off":     int64Ptr(0),
		"registry r":         nil,
	})
	expectCaddyfileErrors(t, []caddyfileError{
		{name: "heap_floor lots", caddyfile: withEurekaOptions("\t\theap_floor lots\n"), want: []string{`heap_floor "lots" is not a size`}},
		{name: "heap_floor 0", caddyfile: withEurekaOptions("\t\theap_floor 0\n"), want: []string{`heap_floor "0" is not a size`, "off"}},
		{name: "heap_floor", caddyfile: withEurekaOptions("\t\theap_floor\n"), want: []string{"heap_floor"}},
	})
	expectAppErrors(t, []appError{{app: `{"heap_floor": -1}`, want: []string{"heap_floor -1 must not be negative"}}})
}

func int64Ptr(v int64) *int64 { return &v }

// A config with heap_floor raises the collector's percentage while it
// runs; the config that replaces it, without one, puts GOGC's default
// back.
func TestHeapFloorInCaddy(t *testing.T) {
	t.Setenv("GOGC", "")
	if p := gcPercent(); p != 100 {
		t.Fatalf("the collector's percentage is %d before the test, not GOGC's default: a floor left by another test, or GOGC set for the tests", p)
	}
	loadConfig(t, testConfig("", "registry "+newRegistry("heap-floor")+"\n\t\theap_floor 256MiB", site(gatewayPort, "\trespond ok")))
	if p := gcPercent(); p <= 100 {
		t.Fatalf("with heap_floor 256MiB: the collector's percentage is %d, want it above 100", p)
	}
	loadConfig(t, testConfig("", "registry "+newRegistry("heap-floor"), site(gatewayPort, "\trespond ok")))
	if p := gcPercent(); p != 100 {
		t.Fatalf("after the config without heap_floor replaced it: the collector's percentage is %d, want 100", p)
	}
}
