package fxmodules

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/fx"
	"go.uber.org/zap"

	"github.com/eurekagate/eurekagate/balancer"
	"github.com/eurekagate/eurekagate/gateway"
	"github.com/eurekagate/eurekagate/routing"
	"github.com/eurekagate/eurekagate/traffic"
	"github.com/eurekagate/eurekagate/traffic/metrics"
)

// Gateway serves the fasthttp gateway (package gateway): a request for
// /<app>/<rest> goes to /<rest> on an UP instance of <app>. It routes by
// the balancer.Instancer in the application: add LocalInstances to route
// by the Registry module's Store (registry and gateway in one process), or
// RemoteInstances to route by the Discovery module's copy of a remote
// registry. It provides the *gateway.Gateway and its *gateway.Server,
// which listens when the application starts (a bind error fails the
// start) and, when it stops, lets in-flight requests finish before the
// gateway closes its connections. It routes with the application's
// *balancer.Balancer when there is one (the Balancer module: supply a
// *balancer.CheckConfig there, and an application whose instances all
// fail their health check is answered 503). Supply a gateway.Config to
// change the routing (its Routing.Instances is filled in), a
// gateway.ServerConfig to change the address (default ":8080"), and a
// GatewayRules to route by the traffic rules of a file, re-read when it
// changes. When the application has a *prometheus.Registry, the requests
// the gateway routes per app and subset are counted there, as
// <namespace>_gateway_requests_total (the MetricsConfig's namespace,
// default "eureka"); the Metrics module, when it makes a registry of its
// own, counts them in it. The Dashboard module shows the gateway's rules.
var Gateway = fx.Module("eureka.gateway",
	namedLogger("eureka.gateway"),
	fx.Provide(NewGateway),
	fx.Invoke(func(*gateway.Server) {}),
)

// GatewayRules is the file of the gateway's traffic rules: a YAML or JSON
// document (routing.ParseRules, docs/gateway.md) of the subsets of each
// application's instances, by their metadata, that requests go to. The
// Gateway module reads it when the application is built (a document that
// does not parse or validate fails the start with its file, line and
// reason, "rules.yaml:4: ...") and, from the start to the stop, checks it
// every Interval and puts its rules in force when it changes: when its
// modification time or size does, or another file is at its path (a
// replacement by a rename, as editors and Kubernetes' config map volumes
// make), once the next check finds it unchanged (a file being written is
// not applied halfway). A new document that does not parse or is past
// one of the Limits is logged at Error with its file and line, and the
// rules in force stay (routing.RulesFile). The zero value: no file.
type GatewayRules struct {
	// File is the rules document. Default "": none, the rules are the
	// gateway.Config's Routing.Rules (default: none, a request may go to
	// any instance of its app). When set, its rules replace those.
	File string
	// Interval is how often the file is checked for a change. Default
	// routing.DefaultRulesInterval (500ms).
	Interval time.Duration
	// Limits bound the document: its size, rules, regular expressions,
	// and what a refusal quotes of it. Default: routing's defaults
	// (routing.RulesLimits).
	Limits routing.RulesLimits
}

// GatewayParams are the dependencies of NewGateway.
type GatewayParams struct {
	fx.In

	Lifecycle    fx.Lifecycle
	Instances    balancer.Instancer
	Balancer     *balancer.Balancer   `optional:"true"`
	Config       gateway.Config       `optional:"true"`
	ServerConfig gateway.ServerConfig `optional:"true"`
	Rules        GatewayRules         `optional:"true"`
	Registry     *prometheus.Registry `optional:"true"`
	Metrics      MetricsConfig        `optional:"true"`
	Logger       *zap.Logger          `optional:"true"`
}

// NewGateway builds the gateway and its server and ties them to the
// lifecycle, with the rules file's watcher when there is one. The gateway
// logs to the module's logger unless the config names another.
func NewGateway(p GatewayParams) (*gateway.Gateway, *gateway.Server, error) {
	cfg := p.Config
	cfg.Routing.Instances = p.Instances
	if cfg.Routing.Balancer == nil {
		cfg.Routing.Balancer = p.Balancer
	}
	log := p.Logger
	if log == nil {
		log = zap.NewNop()
	}
	if cfg.Logger == nil {
		cfg.Logger = log
	}
	g, err := gateway.New(cfg)
	if err != nil {
		return nil, nil, err
	}
	var rules *routing.RulesFile
	if p.Rules.File != "" {
		rules, err = routing.NewRulesFile(routing.RulesFileConfig{Path: p.Rules.File, Interval: p.Rules.Interval,
			Limits: p.Rules.Limits, Apply: g.Router().SetRules, Logger: log})
		if err != nil {
			g.Close()
			return nil, nil, err
		}
	}
	if p.Registry != nil {
		if err := p.Registry.Register(gatewayMetrics(g, p.Metrics.namespace())); err != nil {
			g.Close()
			return nil, nil, err
		}
	}
	srv := gateway.NewServer(g, p.ServerConfig)
	p.Lifecycle.Append(fx.Hook{
		OnStart: func(context.Context) error {
			if err := srv.Start(); err != nil {
				g.Close()
				return err
			}
			log.Info("gateway listening", zap.Stringer("addr", srv.Addr()))
			if rules != nil {
				rules.Start()
				log.Info("gateway traffic rules watched", zap.String("file", p.Rules.File), zap.Int("apps", len(rules.Rules().Apps())))
			}
			return nil
		},
		OnStop: func(ctx context.Context) error {
			if rules != nil {
				rules.Close()
			}
			err := srv.Stop(ctx)
			g.Close()
			return err
		},
	})
	return g, srv, nil
}

// gatewayMetrics is the collector of g's traffic, nil-safe when g records
// none.
func gatewayMetrics(g *gateway.Gateway, namespace string) prometheus.Collector {
	rec := g.Traffic()
	if rec == nil {
		rec = traffic.New() // exports nothing
	}
	t := metrics.NewTraffic(rec, metrics.BalancerHealth(g.Router().Config().Balancer), namespace)
	t.AccessLogDropped = g.AccessLogDropped
	return t
}
