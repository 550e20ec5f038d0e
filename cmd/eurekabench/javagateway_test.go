package main

import (
	"context"
	"os/exec"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/valyala/fasthttp"
)

// A JVM's warm-up counts the answers that are not 2xx or 3xx instead of
// failing on them; its measured rounds still fail on one.
func TestJVMWarmUpCountsErrors(t *testing.T) {
	wrk, err := exec.LookPath("wrk")
	if err != nil {
		t.Skip("wrk not installed")
	}
	// failing answers the first failFirst requests 500, the others 200;
	// failAfter, once set, answers every request 500.
	const failFirst = 20
	var served atomic.Int64
	var failAfter atomic.Bool
	ln, err := newLoopbackListener()
	if err != nil {
		t.Fatal(err)
	}
	srv := &fasthttp.Server{Handler: func(ctx *fasthttp.RequestCtx) {
		if served.Add(1) <= failFirst || failAfter.Load() {
			ctx.SetStatusCode(500)
		}
	}}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Shutdown() })
	row := func() *gatewayRow {
		return &gatewayRow{name: "a JVM", url: "http://" + ln.Addr().String() + "/x", jvm: true, warmTurn: time.Second, log: func() string { return "its log" }}
	}

	r := row()
	if err := measureGateways(context.Background(), wrk, 2, time.Second, 1, []*gatewayRow{r}); err != nil {
		t.Fatalf("errors in the warm-up failed the measurement: %v", err)
	}
	if r.warmBad != failFirst || len(r.warmed) < 3 || len(r.rates) != 1 || r.rates[0] <= 0 {
		t.Errorf("warm-up: %d answers counted bad (want %d), %d turns (want 3 or more), rounds %v", r.warmBad, failFirst, len(r.warmed), r.rates)
	}

	failAfter.Store(true)
	r = row()
	err = measureGateways(context.Background(), wrk, 2, time.Second, 1, []*gatewayRow{r})
	if err == nil || !strings.Contains(err.Error(), "were not 2xx or 3xx") || strings.Contains(err.Error(), "warm-up") {
		t.Errorf("a measured round answered 500: %v, want its error (not the warm-up's)", err)
	}
	if r.warmBad == 0 {
		t.Error("the warm-up's 500s were not counted")
	}
}
