// Package fxmodules wires Eurekagate's pieces into go.uber.org/fx
// applications. Each module is thin wiring over the exported constructors
// of registry (and, later, discovery and balancer): supply a config with
// fx.Supply to change the defaults, or supply nothing to get Eureka's.
//
//	fx.New(
//		fxmodules.Registry,
//		fxmodules.Server,
//		fx.Supply(httpapi.ServerConfig{Addr: ":8761"}),
//	).Run()
//
// The package holds no state of its own; every goroutine a module starts is
// stopped, and waited for, in its OnStop hook.
package fxmodules
