package fxmodules

import (
	"net/http"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"go.uber.org/fx"

	"github.com/eurekagate/eurekagate/dashboard"
	"github.com/eurekagate/eurekagate/gateway"
	"github.com/eurekagate/eurekagate/registry"
	"github.com/eurekagate/eurekagate/registry/metrics"
	"github.com/eurekagate/eurekagate/registry/replication"
)

// Page is an operator page served next to the REST API: the Dashboard and
// Metrics modules each add theirs to the "eureka.pages" value group, and
// the Server module serves every page of the group, behind the API's
// credentials. An application adds a page of its own with
// fx.Provide(fx.Annotate(func() fxmodules.Page { ... }, fx.ResultTags(`group:"eureka.pages"`))).
type Page struct {
	// Path is where the page is served, as a net/http.ServeMux pattern:
	// "/metrics" for one path, "/ui/" for a tree.
	Path string
	// Handler serves the page.
	Handler http.Handler
}

// Dashboard provides the registry's web dashboard, a *dashboard.Handler
// over the Registry module's Store (and Peers), whose chart sampler runs
// from the application's start to its stop, and adds it to the pages the
// Server module serves. Supply a dashboard.Config to change its path
// (default "/") or the REST API prefix its actions use (default
// "/eureka"). With the Gateway module in the application, the dashboard
// shows the traffic rules in force in the gateway (unless the
// dashboard.Config's Rules names another source), the gateway's
// traffic live (unless its Traffic names other counters) and the
// instances its balancer keeps out of rotation (unless its Health names
// another source).
var Dashboard = fx.Module("eureka.dashboard",
	fx.Provide(NewDashboard),
	fx.Invoke(func(*dashboard.Handler) {}),
)

// DashboardParams are the dependencies of NewDashboard.
type DashboardParams struct {
	fx.In

	Lifecycle fx.Lifecycle
	Store     *registry.Store
	Peers     *replication.Peers `optional:"true"`
	Config    dashboard.Config   `optional:"true"`
	Gateway   *gateway.Gateway   `optional:"true"`
}

// DashboardResult is the dashboard and its page.
type DashboardResult struct {
	fx.Out

	Handler *dashboard.Handler
	Page    Page `group:"eureka.pages"`
}

// NewDashboard builds the dashboard and ties its sampler to the lifecycle.
// Its hook comes before the Server module's, so it stops after the server,
// whose shutdown has already ended the dashboard's long polls.
func NewDashboard(p DashboardParams) DashboardResult {
	cfg := dashboardConfig(p)
	h := dashboard.New(p.Store, cfg)
	p.Lifecycle.Append(fx.StartStopHook(h.Start, h.Close))
	return DashboardResult{Handler: h, Page: Page{Path: cfg.Path, Handler: h}}
}

// dashboardConfig is the dashboard's config, its path ending in "/", with
// the application's Peers and the gateway's rules and traffic.
func dashboardConfig(p DashboardParams) dashboard.Config {
	cfg := p.Config
	if cfg.Peers == nil && p.Peers != nil {
		cfg.Peers = p.Peers
	}
	if cfg.Rules == nil && p.Gateway != nil {
		cfg.Rules = p.Gateway.Router().Rules
	}
	if cfg.Traffic == nil && p.Gateway != nil {
		cfg.Traffic = p.Gateway.Traffic() // nil with the gateway's DisableTraffic: no panel
	}
	if cfg.Health == nil && p.Gateway != nil {
		cfg.Health = p.Gateway.Router().Config().Balancer
	}
	if cfg.Path == "" {
		cfg.Path = "/"
	}
	if !strings.HasSuffix(cfg.Path, "/") {
		cfg.Path += "/"
	}
	return cfg
}

// MetricsConfig configures the Metrics module.
type MetricsConfig struct {
	// Namespace prefixes the metric names. Default "eureka"
	// (eureka_instances, eureka_renewals_total, ...).
	Namespace string
	// Path is where the Server module serves the metrics. Default
	// "/metrics".
	Path string
}

// namespace returns the Namespace, or its default.
func (c MetricsConfig) namespace() string {
	if c.Namespace == "" {
		return "eureka"
	}
	return c.Namespace
}

// Metrics provides the registry's Prometheus collector, a
// *metrics.Collector over the Registry module's Store (and Peers),
// registers it, and adds the metrics page to the pages the Server module
// serves. It registers with the application's *prometheus.Registry if it
// provides one, and otherwise with a registry of its own that also holds
// Go and process metrics and, with the Gateway module in the application,
// the gateway's requests per app and subset
// (<namespace>_gateway_requests_total; the Gateway module counts them in
// the application's registry itself). Supply a MetricsConfig to change
// the names or the path.
var Metrics = fx.Module("eureka.metrics",
	fx.Provide(NewMetrics),
	fx.Invoke(func(*metrics.Collector) {}),
)

// MetricsParams are the dependencies of NewMetrics.
type MetricsParams struct {
	fx.In

	Store    *registry.Store
	Peers    *replication.Peers   `optional:"true"`
	Registry *prometheus.Registry `optional:"true"`
	Config   MetricsConfig        `optional:"true"`
	Gateway  *gateway.Gateway     `optional:"true"`
}

// MetricsResult is the collector and the metrics page.
type MetricsResult struct {
	fx.Out

	Collector *metrics.Collector
	Page      Page `group:"eureka.pages"`
}

// NewMetrics builds the collector and registers it.
func NewMetrics(p MetricsParams) (MetricsResult, error) {
	cfg := p.Config
	cfg.Namespace = cfg.namespace()
	if cfg.Path == "" {
		cfg.Path = "/metrics"
	}
	reg := p.Registry
	if reg == nil {
		reg = prometheus.NewRegistry()
		reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
		if p.Gateway != nil {
			reg.MustRegister(gatewayMetrics(p.Gateway, cfg.Namespace))
		}
	}
	var peers metrics.Peers
	if p.Peers != nil {
		peers = p.Peers
	}
	c := metrics.New(p.Store, peers, cfg.Namespace)
	if err := reg.Register(c); err != nil {
		return MetricsResult{}, err
	}
	return MetricsResult{Collector: c, Page: Page{Path: cfg.Path, Handler: promhttp.HandlerFor(reg, promhttp.HandlerOpts{})}}, nil
}
