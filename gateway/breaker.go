package gateway

import (
	"go.uber.org/zap"

	"github.com/eurekagate/eurekagate/routing"
	"github.com/eurekagate/eurekagate/traffic"
)

// BreakerEvents logs and counts what the traffic rules' circuit breakers
// and retry budgets do, the same in both gateways (Caddy's eureka_gateway
// uses it too): each move of a breaker, logged once (a warning when it
// opens) and counted by Traffic, and each retry a budget kept from being
// made, counted. Log and Traffic may be set after Hook (the fasthttp
// gateway makes its Recorder after its router), before the first request.
type BreakerEvents struct {
	Log     *zap.Logger       // nil: not logged
	Traffic *traffic.Recorder // nil: not counted
}

// Hook returns cfg with e as its OnBreaker and OnRetryDenied, after those
// cfg has.
func (e *BreakerEvents) Hook(cfg routing.Config) routing.Config {
	moved, denied := cfg.OnBreaker, cfg.OnRetryDenied
	cfg.OnBreaker = func(app, subset string, to routing.BreakerState) {
		e.Traffic.BreakerMoved(app, subset, to)
		if e.Log != nil {
			level := e.Log.Info
			if to == routing.BreakerOpen {
				level = e.Log.Warn
			}
			fields := []zap.Field{zap.String("app", app), zap.Stringer("to", to)}
			if subset != "" {
				fields = append(fields, zap.String("subset", subset))
			}
			level("circuit breaker moved", fields...)
		}
		if moved != nil {
			moved(app, subset, to)
		}
	}
	cfg.OnRetryDenied = func(app string) {
		e.Traffic.RetryDenied(app)
		if denied != nil {
			denied(app)
		}
	}
	return cfg
}

// breakerOpen adds to an access log line that the request was answered
// 503 by its app's open circuit breaker: "breaker":"open".
func (l *logLine) breakerOpen(state string) {
	l.b = appendJSONString(append(l.b, `,"breaker":`...), state)
}
