// Command eureka is the standalone Eurekagate registry: a Eureka-compatible
// server that Spring Cloud, hudl/fargo and Node Eureka clients use as they
// would a Netflix or Spring Cloud Eureka server.
//
//	go run ./cmd/eureka                  # listens on :8761
//	go run ./cmd/eureka -addr 127.0.0.1:8761 -self-preservation=false
//	go run ./cmd/eureka -gateway :8080   # and routes /<app>/<rest> on :8080
//	go run ./cmd/eureka -gateway :8080 -gateway-rules rules.yaml  # by traffic rules
//
// Every flag but -version can also be set as an environment variable:
// -eviction-interval as EUREKA_EVICTION_INTERVAL. A Spring Cloud Eureka
// Server's configuration is read as Spring reads it: application.yml (or
// .yaml, .properties) in the working directory or its config/ folder, or
// --spring.config.location=; its profiles, placeholders and variables in
// Spring's form (SERVER_PORT); see docs/spring.md. -print-config prints
// every setting and where it came from. Run with -h for the
// list, and with -version for the version it was built from. SIGINT or SIGTERM
// stops it gracefully: in-flight requests finish and background loops stop.
// SIGHUP re-reads -peers-file.
package main

import (
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"go.uber.org/fx"
	"go.uber.org/fx/fxevent"
	"go.uber.org/zap"

	"github.com/eurekagate/eurekagate/dashboard"
	"github.com/eurekagate/eurekagate/fxmodules"
	"github.com/eurekagate/eurekagate/gateway"
	"github.com/eurekagate/eurekagate/internal/version"
	"github.com/eurekagate/eurekagate/registry"
	"github.com/eurekagate/eurekagate/registry/httpapi"
	registrymetrics "github.com/eurekagate/eurekagate/registry/metrics"
	"github.com/eurekagate/eurekagate/registry/replication"
	"github.com/eurekagate/eurekagate/routing"
	"github.com/eurekagate/eurekagate/traffic"
	trafficmetrics "github.com/eurekagate/eurekagate/traffic/metrics"
	"github.com/eurekagate/eurekagate/xds"
)

func main() {
	opts, err := parseConfig(os.Args[1:], os.Getenv, os.Environ(), ".", os.Stderr)
	if errors.Is(err, flag.ErrHelp) {
		return
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "eureka:", err)
		os.Exit(2)
	}
	if opts.version {
		fmt.Printf("eureka %s (%s, %s/%s)\n", version.String(), runtime.Version(), runtime.GOOS, runtime.GOARCH)
		return
	}
	if opts.printConfig != "" {
		fmt.Print(opts.printConfig)
		return
	}
	if opts.hashPassword != "" {
		hash, err := httpapi.HashPassword(opts.hashPassword)
		if err != nil {
			fmt.Fprintln(os.Stderr, "eureka:", err)
			os.Exit(1)
		}
		fmt.Println(hash)
		return
	}
	if opts.memoryLimit > 0 {
		debug.SetMemoryLimit(opts.memoryLimit)
	}
	log, err := zap.NewProduction()
	if err != nil {
		fmt.Fprintln(os.Stderr, "eureka:", err)
		os.Exit(1)
	}
	defer log.Sync()
	for _, n := range opts.springNotes {
		log.Warn(n)
	}
	for _, n := range opts.overrides {
		log.Info(n)
	}
	closeAccessLog, err := openAccessLog(opts)
	if err != nil {
		fmt.Fprintln(os.Stderr, "eureka:", err)
		os.Exit(1)
	}
	// After the app has stopped: the gateway's Close has written the
	// last lines.
	defer closeAccessLog()
	closeRedis, err := openRedis(opts, log)
	if err != nil {
		fmt.Fprintln(os.Stderr, "eureka:", err)
		os.Exit(1)
	}
	// After the app has stopped: the gateway no longer decides requests.
	defer closeRedis()
	app := fx.New(appOptions(opts, log))
	if err := app.Err(); err != nil {
		// fx has logged its account of the failure; this is the cause.
		fmt.Fprintln(os.Stderr, "eureka:", buildError(err))
		os.Exit(1)
	}
	// fx catches SIGINT and SIGTERM from Wait on, and Run waits only once
	// every start hook has run: a signal between "registry listening"
	// and then killed the process without its stop hooks (seen in
	// TestProcessWithRemoteRegions). Caught from here, it stops the app
	// as soon as it has started.
	app.Wait()
	app.Run()
}

// openAccessLog opens -gateway-access-log into the gateway's config: a
// file, created if need be (readable by its owner only, as Caddy's
// logs), appended to, or stdout. It returns what closes it.
func openAccessLog(opts *options) (func() error, error) {
	switch path := opts.gatewayAccessLog; path {
	case "":
		return func() error { return nil }, nil
	case "stdout":
		opts.gateway.AccessLog = os.Stdout
		return func() error { return nil }, nil
	default:
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
		if err != nil {
			return nil, fmt.Errorf("-gateway-access-log: %w", err)
		}
		opts.gateway.AccessLog = f
		return f.Close, nil
	}
}

// buildError returns the reason the application could not be built: a
// -gateway-rules document refused, with its file and line, or err.
func buildError(err error) error {
	var rules *routing.RulesError
	if errors.As(err, &rules) {
		return fmt.Errorf("-gateway-rules: %w", rules)
	}
	return err
}

// appOptions assembles the server: the registry module and the fasthttp
// server module, with the parsed settings, and the gateway module over the
// registry, with its rules file, when -gateway is set.
func appOptions(opts *options, log *zap.Logger) fx.Option {
	gw := fx.Options()
	if opts.gatewayServer.Addr != "" {
		gw = fx.Options(fxmodules.LocalInstances, fxmodules.Gateway, fx.Supply(opts.gateway, opts.gatewayServer, opts.gatewayRules))
	}
	return fx.Options(
		gw,
		peersFileOption(opts),
		auditOption(opts),
		xdsModule(opts, log),
		fxmodules.Registry,
		fxmodules.Server,
		fx.Supply(opts.registry, log),
		fx.Provide(func(p serverParams) (httpapi.ServerConfig, error) { return serverConfig(opts, p, log) }),
		fx.WithLogger(func() fxevent.Logger {
			l := &fxevent.ZapLogger{Logger: log.Named("fx")}
			l.UseLogLevel(zap.DebugLevel)
			return l
		}),
	)
}

// serverParams are what serverConfig builds the operator pages over; the
// gateway when -gateway is set.
type serverParams struct {
	fx.In

	Lifecycle fx.Lifecycle
	Store     *registry.Store
	API       *httpapi.API
	Peers     *replication.Peers
	Gateway   *gateway.Gateway `optional:"true"`
	XDS       *xds.Server      `optional:"true"`
}

// serverConfig adds the operator pages to the server: /metrics and the
// dashboard, which are reads: open unless -auth-reads closes reads (then
// they need a user's credentials, and the browser is challenged), while
// the dashboard's actions are API writes, which need credentials whenever
// -auth-users is set. Caddy's documented basic_auth on writes gives the
// same rule. The dashboard's chart sampler
// runs from start to stop (its hook, added before the server's, stops after
// the server, whose shutdown has already ended the dashboard's long polls).
// With the gateway, /metrics counts its requests per app and subset
// (eureka_gateway_requests_total) and the dashboard shows its traffic
// rules and its traffic, live. It warns when the registry is reachable
// from a network with no credentials configured.
func serverConfig(opts *options, p serverParams, log *zap.Logger) (httpapi.ServerConfig, error) {
	metrics := prometheus.NewRegistry()
	metrics.MustRegister(registrymetrics.New(p.Store, p.Peers, "eureka"), collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	var rules func() *routing.Rules
	var rec *traffic.Recorder
	var health dashboard.Health
	if p.Gateway != nil {
		t := trafficmetrics.NewTraffic(p.Gateway.Traffic(), trafficmetrics.BalancerHealth(p.Gateway.Router().Config().Balancer), "eureka")
		if opts.gatewayAccessLog != "" {
			t.AccessLogDropped = p.Gateway.AccessLogDropped
		}
		metrics.MustRegister(t)
		rules = p.Gateway.Router().Rules
		rec = p.Gateway.Traffic()
		health = p.Gateway.Router().Config().Balancer
	}
	if s := opts.gatewayRules.Limits.Shared; s != nil {
		metrics.MustRegister(trafficmetrics.Redis(func() uint64 { return s.Health().Errors }, func() bool { return s.Health().Up }, "eureka"))
	}
	if p.XDS != nil {
		metrics.MustRegister(p.XDS.Collector("eureka"))
	}
	mux := http.NewServeMux()
	metricsHandler := promhttp.HandlerFor(metrics, promhttp.HandlerOpts{})
	mux.Handle("/metrics", metricsHandler)
	if opts.dashboardPath != "" {
		path := strings.TrimSuffix(opts.dashboardPath, "/") + "/"
		d := dashboard.New(p.Store, dashboard.Config{Path: path, Peers: p.Peers, Rules: rules, Traffic: rec, Health: health, XDS: dashboardXDS(p.XDS),
			Permissions: dashboard.PermissionsFrom(p.API.MayWrite)})
		p.Lifecycle.Append(fx.StartStopHook(d.Start, d.Close))
		mux.Handle(path, d)
	}
	cfg := opts.server
	protect := func(h http.Handler) http.Handler { return h }
	if opts.registry.API.Auth.RequireForReads {
		protect = p.API.Protect
	}
	cfg.Other = protect(mux)
	act, err := actuatorHandler(opts, p, metricsHandler)
	if err != nil {
		return httpapi.ServerConfig{}, err
	}
	switch {
	case act == nil:
	case opts.actuator.managementAddr != "":
		serveManagement(p.Lifecycle, opts.actuator.managementAddr, mountActuator(act, nil, protect), log)
	default:
		cfg.Other = mountActuator(act, cfg.Other, protect)
	}
	auth := opts.registry.API.Auth
	if !auth.Enabled() && !loopbackOnly(cfg.Addr) {
		log.Warn("the registry listens beyond loopback without credentials: anyone who reaches it can register or cancel instances; set -auth-users",
			zap.String("addr", cfg.Addr))
	}
	return cfg, nil
}

// loopbackOnly reports whether addr binds loopback only.
func loopbackOnly(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
