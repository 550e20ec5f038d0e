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
	// serve answers 500 when fail says so for the nth request.
	serve := func(fail func(n int64) bool) string {
		var served atomic.Int64
		ln, err := newLoopbackListener()
		if err != nil {
			t.Fatal(err)
		}
		srv := &fasthttp.Server{Handler: func(ctx *fasthttp.RequestCtx) {
			if fail(served.Add(1)) {
				ctx.SetStatusCode(500)
			}
		}}
		go srv.Serve(ln)
		t.Cleanup(func() { srv.Shutdown() })
		return "http://" + ln.Addr().String() + "/x"
	}
	row := func(url string) *gatewayRow {
		return &gatewayRow{name: "a JVM", url: url, jvm: true, warmTurn: time.Second, log: func() string { return "its log" }}
	}

	const failFirst = 20
	r := row(serve(func(n int64) bool { return n <= failFirst }))
	if err := measureGateways(context.Background(), wrk, 2, time.Second, 1, []*gatewayRow{r}); err != nil {
		t.Fatalf("errors in the warm-up failed the measurement: %v", err)
	}
	if r.warmBad != failFirst || len(r.warmed) < 3 || len(r.rates) != 1 || r.rates[0] <= 0 {
		t.Errorf("warm-up: %d answers counted bad (want %d), %d turns (want 3 or more), rounds %v", r.warmBad, failFirst, len(r.warmed), r.rates)
	}

	r = row(serve(func(n int64) bool { return n%100 == 0 }))
	err = measureGateways(context.Background(), wrk, 2, time.Second, 1, []*gatewayRow{r})
	if err == nil || !strings.Contains(err.Error(), "were not 2xx or 3xx") || strings.Contains(err.Error(), "warm-up:") || !strings.Contains(err.Error(), "its log") {
		t.Errorf("a measured round answered 500: %v, want its error (not the warm-up's) with the JVM's log", err)
	}
	if len(r.warmed) < 3 || r.warmBad == 0 {
		t.Errorf("warm-up: %d turns, %d answers counted bad; want 3 or more turns and some counted", len(r.warmed), r.warmBad)
	}
}

// A JVM that answers nothing, or only errors, fails its warm-up's first
// turn, where a rate of nothing would never stop rising.
func TestJVMWarmUpFailsWithoutAnswers(t *testing.T) {
	wrk, err := exec.LookPath("wrk")
	if err != nil {
		t.Skip("wrk not installed")
	}
	hung, err := newLoopbackListener() // accepts, never answers
	if err != nil {
		t.Fatal(err)
	}
	defer hung.Close()
	failing, err := newLoopbackListener()
	if err != nil {
		t.Fatal(err)
	}
	srv := &fasthttp.Server{Handler: func(ctx *fasthttp.RequestCtx) { ctx.SetStatusCode(500) }}
	go srv.Serve(failing)
	defer srv.Shutdown()
	for _, addr := range []string{hung.Addr().String(), failing.Addr().String()} {
		r := &gatewayRow{name: "a JVM", url: "http://" + addr + "/x", jvm: true, warmTurn: time.Second, log: func() string { return "its log" }}
		err := measureGateways(context.Background(), wrk, 2, time.Second, 1, []*gatewayRow{r})
		if err == nil || !strings.Contains(err.Error(), "warm-up: no answer 2xx or 3xx") || !strings.Contains(err.Error(), "its log") || len(r.warmed) != 0 {
			t.Errorf("%s: %v after %d turns, want the first turn's error with the JVM's log", addr, err, len(r.warmed))
		}
	}
}
