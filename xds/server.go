package xds

import (
	"context"
	"net"
	"sync"
	"time"

	clusterservice "github.com/envoyproxy/go-control-plane/envoy/service/cluster/v3"
	discoverygrpc "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	endpointservice "github.com/envoyproxy/go-control-plane/envoy/service/endpoint/v3"
	listenerservice "github.com/envoyproxy/go-control-plane/envoy/service/listener/v3"
	routeservice "github.com/envoyproxy/go-control-plane/envoy/service/route/v3"
	"github.com/envoyproxy/go-control-plane/pkg/cache/types"
	"github.com/envoyproxy/go-control-plane/pkg/cache/v3"
	resourcev3 "github.com/envoyproxy/go-control-plane/pkg/resource/v3"
	xdsserver "github.com/envoyproxy/go-control-plane/pkg/server/v3"
	"go.uber.org/zap"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"

	"github.com/eurekagate/eurekagate/registry"
	"github.com/eurekagate/eurekagate/registry/regions"
)

const (
	listenerType = resourcev3.ListenerType
	clusterType  = resourcev3.ClusterType
	endpointType = resourcev3.EndpointType
	routeType    = resourcev3.RouteType
)

// Server serves a Source (the Store, or a discovery client) over xDS.
// Start it with a listener; Stop stops it and waits for its goroutines.
type Server struct {
	src Source
	// failover are Config.FailoverRegions, as the Store names them, and
	// mirror the Store's remote regions that hold them (nil without).
	failover []string
	mirror   *regions.Mirror
	cfg      Config
	region   string

	lds *listeners
	cds *cache.LinearCache
	eds *cache.LinearCache
	rds *cache.LinearCache
	// buildMu serializes builds (the loop's, and a new listener's of the
	// app it routes to); known is the apps that have a cluster.
	buildMu sync.Mutex
	known   map[string]bool
	// subsets is the subset clusters made for traffic rules (SetRules).
	subsets map[string]bool
	// tls is the apps whose clusters reach their instances over TLS;
	// mixed, those with instances on both kinds of port (decideTLS).
	tls, mixed map[string]bool
	grpc       *grpc.Server
	ctx        context.Context
	cancel     context.CancelFunc

	// dirty holds the apps changed since the loop last built them, each
	// with its last change's time (for the push latency); wake tells the
	// loop there are some.
	mu    sync.Mutex
	dirty map[string]time.Time
	wake  chan struct{}

	// rules are the apps' traffic rules translated (SetRules); refused,
	// the apps whose rules are not, with the reason.
	rulesMu sync.Mutex
	rules   map[string]*appRoutes
	refused map[string]string
	log     *zap.Logger

	stats       *stats
	unsubscribe func()
	wg          sync.WaitGroup
	addr        net.Addr
}

// New returns a Server of src's applications, or the error in cfg.
func New(src Source, cfg Config) (*Server, error) {
	if err := cfg.defaults(); err != nil {
		return nil, err
	}
	mirror, failover, err := failoverRegions(src, cfg.FailoverRegions)
	if err != nil {
		return nil, err
	}
	s := &Server{
		failover: failover,
		mirror:   mirror,
		src:      src,
		cfg:      cfg,
		region:   regionOf(src, cfg),
		cds:      cache.NewLinearCache(clusterType),
		eds:      cache.NewLinearCache(endpointType),
		rds:      cache.NewLinearCache(routeType),
		known:    map[string]bool{},
		subsets:  map[string]bool{},
		tls:      map[string]bool{},
		mixed:    map[string]bool{},
		log:      cfg.Logger,
		stats:    newStats(),
		dirty:    map[string]time.Time{},
		wake:     make(chan struct{}, 1),
	}
	s.lds = newListeners(cfg.MaxListenerNames, s.buildNow, s.routesOf)
	s.ctx, s.cancel = context.WithCancel(context.Background())
	mux := &cache.MuxCache{
		Classify:      func(r *cache.Request) string { return r.GetTypeUrl() },
		ClassifyDelta: func(r *cache.DeltaRequest) string { return r.GetTypeUrl() },
		Caches: map[string]cache.Cache{
			listenerType: s.lds,
			clusterType:  s.cds,
			endpointType: s.eds,
			routeType:    s.rds,
		},
	}
	var opts []grpc.ServerOption
	if cfg.TLS != nil {
		opts = append(opts, grpc.Creds(credentials.NewTLS(cfg.TLS)))
	}
	s.grpc = grpc.NewServer(opts...)
	xs := xdsserver.NewServer(s.ctx, mux, s.stats.callbacks())
	discoverygrpc.RegisterAggregatedDiscoveryServiceServer(s.grpc, xs)
	listenerservice.RegisterListenerDiscoveryServiceServer(s.grpc, xs)
	clusterservice.RegisterClusterDiscoveryServiceServer(s.grpc, xs)
	endpointservice.RegisterEndpointDiscoveryServiceServer(s.grpc, xs)
	routeservice.RegisterRouteDiscoveryServiceServer(s.grpc, xs)
	s.updateGateway()
	return s, nil
}

// Start follows the source's changes, builds every application's
// resources and serves ln until Stop.
func (s *Server) Start(ln net.Listener) {
	s.addr = ln.Addr()
	s.unsubscribe = s.follow()
	// The registry as it is, built before the first client is answered.
	s.build(s.takeDirty())
	if store, ok := s.src.(*registry.Store); ok && len(s.failover) > 0 {
		s.followRegions(store)
	}
	s.wg.Add(2)
	go func() {
		defer s.wg.Done()
		s.loop()
	}()
	go func() {
		defer s.wg.Done()
		_ = s.grpc.Serve(ln) // returns when Stop stops it
	}()
}

// Addr is the address Start serves.
func (s *Server) Addr() net.Addr { return s.addr }

// Stop closes the clients' streams and waits for the server's goroutines.
func (s *Server) Stop() {
	if s.unsubscribe != nil {
		s.unsubscribe()
	}
	s.cancel()
	s.grpc.Stop()
	s.wg.Wait()
}

// mark runs on the Store's writer's goroutine: it only records the app
// and the time, under one lock; the loop hands the times to the stats.
func (s *Server) mark(app string) {
	now := time.Now()
	s.mu.Lock()
	s.dirty[app] = now
	s.mu.Unlock()
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// loop builds the changed apps' resources: changes that arrive while it
// builds join the next round, so a burst to one app costs one build.
func (s *Server) loop() {
	for {
		select {
		case <-s.ctx.Done():
			return
		case <-s.wake:
		}
		s.build(s.takeDirty())
	}
}

// takeDirty returns the apps changed since it was last called, their
// change times recorded in the stats before they are built and pushed.
func (s *Server) takeDirty() map[string]struct{} {
	s.mu.Lock()
	changed := s.dirty
	s.dirty = make(map[string]time.Time, len(changed))
	s.mu.Unlock()
	s.stats.changed(changed)
	apps := make(map[string]struct{}, len(changed))
	for app := range changed {
		apps[app] = struct{}{}
	}
	return apps
}

// buildNow builds apps at once: a new listener's app, so that the client
// that asked for it finds its cluster in the answer to its next request.
func (s *Server) buildNow(apps []string) {
	set := make(map[string]struct{}, len(apps))
	for _, a := range apps {
		set[a] = struct{}{}
	}
	s.build(set)
}

// build replaces the clusters and endpoints of apps: an app with no
// instance left loses both, unless a listener routes to it; then it keeps
// its cluster with no endpoints, and RPCs to it fail at once.
func (s *Server) build(apps map[string]struct{}) {
	s.buildMu.Lock()
	defer s.buildMu.Unlock()
	clusters := map[string]types.Resource{}
	endpoints := map[string]types.Resource{}
	var gone []string
	for app := range apps {
		if len(s.src.AllInstances(app)) == 0 && !s.lds.routes(app) && !s.inFailover(app) {
			if s.known[app] {
				s.stats.gone(app)
				delete(s.known, app)
				delete(s.tls, app)
				delete(s.mixed, app)
				gone = s.dropSubsets(app, nil, append(gone, app))
			}
			continue
		}
		// Clusters are sent again only when their TLS changes.
		changed := s.decideTLS(app)
		if !s.known[app] || changed {
			s.known[app] = true
			clusters[app] = s.cluster(app)
		}
		endpoints[app] = s.endpoints(app)
		s.buildSubsets(app, changed, clusters, endpoints)
	}
	// Endpoints first, so that a client following a new cluster finds them.
	_ = s.eds.UpdateResources(endpoints, gone)
	_ = s.cds.UpdateResources(clusters, gone)
	if len(clusters) > 0 || len(gone) > 0 {
		s.updateGateway()
	}
}
