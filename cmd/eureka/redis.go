package main

import (
	"fmt"

	"go.uber.org/zap"

	"github.com/eurekagate/eurekagate/registry/actuator"
	"github.com/eurekagate/eurekagate/routing"
)

// openRedis makes the shared rate limits' client of -gateway-redis, for
// the rules file's parse (gatewayRules.Limits.Shared), and returns its
// Close, which main calls once the application has stopped.
func openRedis(opts *options, log *zap.Logger) (func() error, error) {
	if opts.gatewayRedis == "" {
		return func() error { return nil }, nil
	}
	s, err := routing.NewSharedLimits(routing.SharedLimitsConfig{URL: opts.gatewayRedis, Logger: log.Named("eureka.gateway.redis")})
	if err != nil {
		return nil, fmt.Errorf("-gateway-redis: %w", err)
	}
	opts.gatewayRules.Limits.Shared = s
	return s.Close, nil
}

// redisComponent is the shared limits' Redis as the actuator's health
// shows it, the registry's status staying UP (actuator.Config.Degraded).
func redisComponent(h routing.SharedHealth) actuator.Component {
	status, details := h.Component()
	return actuator.Component{Status: status, Details: details}
}
