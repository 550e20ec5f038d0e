package caddymodule

import (
	"errors"
	"fmt"

	"github.com/caddyserver/caddy/v2"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/eurekagate/eurekagate/registry/actuator"
	"github.com/eurekagate/eurekagate/routing"
	"github.com/eurekagate/eurekagate/traffic/metrics"
)

// adaptShared checks a Caddyfile's rules heredoc at adapt time, before
// the eureka app says whether it has a Redis: its shared limits are read
// (the zero routing.SharedLimits) and refused, if the app has none, when
// the config is provisioned.
var adaptShared = new(routing.SharedLimits)

// provisionRedis makes the client of the app's redis option, shared by
// every eureka_gateway of the config (one client, one lease per key for
// them all), with its metrics: eureka_gateway_redis_errors_total and
// eureka_gateway_redis_up. Cleanup closes it.
func (a *App) provisionRedis(ctx caddy.Context) error {
	if a.Redis == "" {
		return nil
	}
	s, err := routing.NewSharedLimits(routing.SharedLimitsConfig{URL: a.Redis, Logger: a.log.Named("redis")})
	if err != nil {
		return fmt.Errorf("redis: %v", err)
	}
	a.shared = s
	c := metrics.Redis(func() uint64 { return s.Health().Errors }, func() bool { return s.Health().Up }, "eureka")
	if err := ctx.GetMetricsRegistry().Register(c); err != nil && !errors.As(err, new(prometheus.AlreadyRegisteredError)) {
		return fmt.Errorf("registering metrics: %v", err)
	}
	return nil
}

// redisHealth is the redis component of eureka_actuator's health, nil
// without the redis option: DOWN during an outage, the status staying UP.
func (a *App) redisHealth() func() map[string]actuator.Component {
	s := a.shared
	if s == nil {
		return nil
	}
	return func() map[string]actuator.Component {
		status, details := s.Health().Component()
		return map[string]actuator.Component{"redis": {Status: status, Details: details}}
	}
}

// closeRedis closes the client once the config's gateways are done.
func (a *App) closeRedis() {
	if a.shared != nil {
		a.shared.Close()
	}
}
