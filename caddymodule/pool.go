package caddymodule

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/caddyserver/caddy/v2"
	"go.uber.org/dig"
	"go.uber.org/fx"
	"go.uber.org/fx/fxevent"
	"go.uber.org/zap"

	"github.com/eurekagate/eurekagate/balancer"
	"github.com/eurekagate/eurekagate/discovery"
	"github.com/eurekagate/eurekagate/fxmodules"
	"github.com/eurekagate/eurekagate/internal/tlsfiles"
	"github.com/eurekagate/eurekagate/registry"
	"github.com/eurekagate/eurekagate/registry/httpapi"
	"github.com/eurekagate/eurekagate/registry/metrics"
	"github.com/eurekagate/eurekagate/registry/replication"
	"github.com/eurekagate/eurekagate/traffic"
	trafficmetrics "github.com/eurekagate/eurekagate/traffic/metrics"
)

// pool holds the registries by name. A reload provisions the new config,
// which takes a reference, before the old config releases its own, so a
// registry and its registrations live as long as some config names it.
var pool = caddy.NewUsagePool()

// settings are what a config asks of a registry.
type settings struct {
	store   registry.Config
	maxBody int64
	peers   replication.Config
	remote  *discovery.Config // nil: host the registry
	// tls are the files of the client TLS configuration of remote and
	// peers, loaded by newEntry (names compare; configurations do not).
	tls tlsfiles.Files
}

// entry is one registry: its pieces, put together by the same fx modules
// an fx application uses, and the fx app that runs them.
type entry struct {
	name     string
	settings settings
	options  map[string]string // as set in the config, to name what a reload changes
	app      *fx.App

	store     *registry.Store    // nil in remote mode
	peers     *replication.Peers // nil in remote mode
	client    *discovery.Client  // nil in local mode
	balancer  *balancer.Balancer
	instances balancer.Instancer

	// The selection policies' per-app counters, kept with the registry so
	// that they survive reloads. The balancer rotates with roundRobin.
	roundRobin    *balancer.RoundRobin
	leastRequests *balancer.LeastRequests

	metricsOnce sync.Once
	collector   *metrics.Collector

	// The gateways' traffic, kept with the registry so that the counters
	// /metrics exports survive reloads, and its collector.
	traffic        *traffic.Recorder
	trafficMetrics *trafficmetrics.Traffic
	checker        atomic.Pointer[balancer.Checker] // the running config's, for its failure counts

	// The eureka_gateway balancers, by passive-health settings: kept with
	// the registry so that what they know of failed instances survives
	// reloads. They rotate with roundRobin.
	gatewaysMu sync.Mutex
	gateways   map[passiveHealth]*balancer.Balancer

	// The traffic sweeper (sweep.go), while the registry runs, and its
	// clock (a func() time.Time; unset: time.Now).
	sweepStop, sweepDone chan struct{}
	clock                atomic.Value

	mu      sync.Mutex
	running int // configs that have started it and not stopped
	started bool
	stopped bool
}

// acquire returns the named registry, creating it if needed (loaded is
// false then). A running registry cannot change its settings:
// registrations would not survive the change, so the reload is refused
// with an explanation naming the settings instead.
func acquire(name string, s settings, options map[string]string, log *zap.Logger) (e *entry, loaded bool, err error) {
	v, loaded, err := pool.LoadOrNew(name, func() (caddy.Destructor, error) {
		e, err := newEntry(name, s, log)
		if e != nil {
			e.options = options
		}
		return e, err
	})
	if err != nil {
		return nil, false, err
	}
	e = v.(*entry)
	if diff := diffOptions(e.options, options); loaded && len(diff) > 0 {
		pool.Delete(name)
		return nil, false, fmt.Errorf("registry %q is running with other settings: %s; give the new settings a new registry name, or restart Caddy to apply them (registrations are kept in memory only)",
			name, strings.Join(diff, ", "))
	}
	return e, loaded, nil
}

// others returns the registries in the pool other than name, with their
// instance counts: those of the config that a config naming a new
// registry replaces.
func others(name string) map[string]int {
	out := map[string]int{}
	pool.Range(func(key, value any) bool {
		if e, ok := value.(*entry); ok && key != name {
			if e.store != nil {
				out[key.(string)] = e.store.Len()
			} else {
				out[key.(string)] = 0
			}
		}
		return true
	})
	return out
}

func newEntry(name string, s settings, log *zap.Logger) (*entry, error) {
	e := &entry{name: name, settings: s, roundRobin: new(balancer.RoundRobin), leastRequests: new(balancer.LeastRequests), traffic: traffic.New()}
	e.trafficMetrics = trafficmetrics.NewTraffic(e.traffic, e.gatewayHealth, "caddy_eureka")
	opts := []fx.Option{
		fxmodules.Balancer,
		fx.Supply(balancer.Config{Policy: e.roundRobin}),
		fx.Supply(log),
		fx.WithLogger(func() fxevent.Logger {
			l := &fxevent.ZapLogger{Logger: log.Named("fx")}
			l.UseLogLevel(zap.DebugLevel)
			return l
		}),
		fx.Populate(&e.balancer, &e.instances),
	}
	if err := clientTLS(&s); err != nil {
		return nil, err
	}
	if s.remote != nil {
		opts = append(opts, fxmodules.Discovery, fxmodules.RemoteInstances, fx.Supply(*s.remote), fx.Populate(&e.client))
	} else {
		opts = append(opts, fxmodules.Registry, fxmodules.LocalInstances,
			// PeersAlways: a reload may give the registry peers.
			fx.Supply(fxmodules.RegistryConfig{Store: s.store, API: httpapi.APIConfig{MaxBodyBytes: s.maxBody}, Peers: s.peers, PeersAlways: true}),
			fx.Populate(&e.store, &e.peers))
	}
	e.app = fx.New(opts...)
	if err := e.app.Err(); err != nil {
		// The constructor's own error, not fx's account of the wiring.
		return nil, fmt.Errorf("setting up registry %q: %v", name, dig.RootCause(err))
	}
	return e, nil
}

// passiveHealth is a gateway's passive-health settings.
type passiveHealth struct {
	maxFails int
	cooldown time.Duration
}

// gatewayBalancer returns the balancer of the gateways that skip an
// instance for cooldown after maxFails failures, made once per settings.
func (e *entry) gatewayBalancer(maxFails int, cooldown time.Duration) *balancer.Balancer {
	e.gatewaysMu.Lock()
	defer e.gatewaysMu.Unlock()
	k := passiveHealth{maxFails, cooldown}
	if b := e.gateways[k]; b != nil {
		return b
	}
	if e.gateways == nil {
		e.gateways = map[passiveHealth]*balancer.Balancer{}
	}
	b := balancer.New(e.instances, balancer.Config{Policy: e.roundRobin, MaxFails: maxFails, Cooldown: cooldown})
	e.gateways[k] = b
	return b
}

// metrics returns the registry's collector, made once so that every
// config registers the same one; nil in remote mode.
func (e *entry) metrics() *metrics.Collector {
	if e.store == nil {
		return nil
	}
	e.metricsOnce.Do(func() { e.collector = metrics.New(e.store, e.peers, "caddy_eureka") })
	return e.collector
}

// start runs the registry's background work for one more config.
func (e *entry) start() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.stopped {
		return fmt.Errorf("registry %q has been stopped", e.name)
	}
	e.running++
	if e.started {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	if err := e.app.Start(ctx); err != nil {
		e.running--
		return fmt.Errorf("starting registry %q: %v", e.name, err)
	}
	e.started = true
	e.startSweeper()
	return nil
}

// stop stops the background work when no running config uses it.
func (e *entry) stop() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.running == 0 {
		return nil
	}
	e.running--
	if e.running > 0 || !e.started || e.stopped {
		return nil
	}
	return e.shutdown()
}

// shutdown stops the fx app. The caller holds e.mu.
func (e *entry) shutdown() error {
	e.stopped = true
	e.stopSweeper()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	return e.app.Stop(ctx)
}

// Destruct runs when the last config releases the registry.
func (e *entry) Destruct() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.started && !e.stopped {
		return e.shutdown()
	}
	return nil
}

// gatewayHealth adds up the ejections of the eureka_gateway balancers, and
// gives the health-check failures of the running config's checker.
func (e *entry) gatewayHealth() (ejections, failures map[string]uint64) {
	ejections = map[string]uint64{}
	e.gatewaysMu.Lock()
	for _, b := range e.gateways {
		for app, n := range b.Ejections() {
			ejections[app] += n
		}
	}
	e.gatewaysMu.Unlock()
	if c := e.checker.Load(); c != nil {
		failures = c.Failures()
	}
	return ejections, failures
}
