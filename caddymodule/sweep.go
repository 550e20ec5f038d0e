package caddymodule

import (
	"time"

	"github.com/eurekagate/eurekagate/gateway"
	"github.com/eurekagate/eurekagate/internal/tick"
	"github.com/eurekagate/eurekagate/notify"
	"github.com/eurekagate/eurekagate/routing"
)

// The registry's sweeper drops eureka_gateway's traffic counters (and so
// their series on /metrics and their apps in the dashboard's api/traffic)
// of the apps and instances gone from the registry for traffic.Grace, as
// the fasthttp gateway's sweeper does: every gateway.DefaultSweepInterval
// and on each change the registry announces, with the per-app counts of
// the eureka_gateway balancers and of the running config's health checks,
// and the routable lists their routers keep of the apps it dropped.
// It runs while the registry runs (entry.start to entry.shutdown).

// startSweeper starts the sweeper. The caller holds e.mu.
func (e *entry) startSweeper() {
	stop, done := make(chan struct{}), make(chan struct{})
	e.sweepStop, e.sweepDone = stop, done
	// The channel taken before the goroutine runs, as the fasthttp
	// gateway's sweeper takes it: no change between goes unnoticed.
	n, changed := notify.Of(e.instances)
	go func() {
		defer close(done)
		tick.OnChange(gateway.DefaultSweepInterval, stop, n, changed, e.sweepTraffic)
	}()
}

// stopSweeper stops the sweeper and waits for it. The caller holds e.mu.
func (e *entry) stopSweeper() {
	if e.sweepStop != nil {
		close(e.sweepStop)
		<-e.sweepDone
		e.sweepStop = nil
	}
}

// sweepTraffic is one sweep.
func (e *entry) sweepTraffic() {
	dropped := e.traffic.Sweep(e.now(), e.instances)
	if len(dropped) == 0 {
		return
	}
	e.gatewaysMu.Lock()
	for _, b := range e.gateways {
		b.ForgetApps(dropped)
	}
	e.gatewaysMu.Unlock()
	gatewayRouters.each(e, func(r *routing.Router) { r.ForgetApps(dropped) })
	if c := e.checker.Load(); c != nil {
		c.ForgetApps(dropped)
	}
}

// now is the sweeper's clock: time.Now, or the func() time.Time a test
// stored in e.clock.
func (e *entry) now() time.Time {
	if f, ok := e.clock.Load().(func() time.Time); ok {
		return f()
	}
	return time.Now()
}
