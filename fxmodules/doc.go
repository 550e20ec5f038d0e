// Package fxmodules wires Eurekagate's pieces into go.uber.org/fx
// applications. Each module is thin wiring over the exported constructors
// of the registry, discovery, balancer, gateway, dashboard and metrics
// packages: supply a config with fx.Supply to change the defaults, or
// supply nothing to get Eureka's.
//
//   - Registry: the *registry.Store, the *replication.Peers of a cluster,
//     the *feeds.Feeds that read its remote regions
//     (RegistryConfig.RemoteRegions; nil without) and the *httpapi.API
//     (config RegistryConfig).
//   - Server: the standalone fasthttp server of the API and of the
//     operator pages (config httpapi.ServerConfig, default ":8761").
//   - Dashboard and Metrics: the registry's web dashboard (config
//     dashboard.Config, default at "/") and its Prometheus metrics (config
//     MetricsConfig, default at "/metrics"), served by Server.
//   - Discovery: the *discovery.Client, which registers an instance and
//     keeps a copy of a registry (config discovery.Config).
//   - Balancer: a *balancer.Balancer over LocalInstances (the Store) or
//     RemoteInstances (the client) (config balancer.Config, and
//     *balancer.CheckConfig for active health checks).
//   - Gateway: the fasthttp gateway, the *gateway.Gateway and its
//     *gateway.Server, routing by LocalInstances or RemoteInstances
//     (config gateway.Config, gateway.ServerConfig, default ":8080", and
//     GatewayRules, a traffic rules file re-read when it changes).
//
// A registry with its dashboard and metrics:
//
//	fx.New(
//		fxmodules.Registry,
//		fxmodules.Server,
//		fxmodules.Dashboard,
//		fxmodules.Metrics,
//		fx.Supply(httpapi.ServerConfig{Addr: ":8761"}),
//	).Run()
//
// Each module logs to the application's *zap.Logger, if it provides one,
// named after the module (eureka.registry, ...). The package holds no
// state of its own; every goroutine a module starts is stopped, and
// waited for, in its OnStop hook.
package fxmodules
