package xds

import (
	"sync"

	listenerv3 "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	routerv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/router/v3"
	hcmv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3"
	"github.com/envoyproxy/go-control-plane/pkg/cache/types"
	"github.com/envoyproxy/go-control-plane/pkg/cache/v3"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"

	"github.com/eurekagate/eurekagate/eureka"
)

// listeners is the LDS cache: it makes the API listener of each name a
// client asks for before the cache answers, since a client's listener name
// is the target as it spelled it (xds:///orders asks for "orders") and a
// name the cache lacks is answered absent. The names are bounded by
// Config.MaxListenerNames; they are kept for good, each a few hundred
// bytes, whether or not its app exists (a listener for an app not yet
// registered routes to a cluster that appears with it).
// maxNameLen bounds a listener name's bytes; a longer name is answered
// absent.
const maxNameLen = 256

type listeners struct {
	*cache.LinearCache
	max int

	// made is the names made; apps, the apps they route to, whose
	// clusters stay while they have no instance, so that an RPC to an app
	// not (or no longer) registered fails at once for want of endpoints
	// instead of waiting for a cluster.
	mu   sync.Mutex
	made map[string]bool
	apps map[string]bool
	// routed is called with the apps of new names, after they are made
	// and before the watch is answered.
	routed func(apps []string)
	// routesOf returns the routes of an app's listeners.
	routesOf func(app string) []*routev3.Route
}

func newListeners(max int, routed func([]string), routesOf func(string) []*routev3.Route) *listeners {
	return &listeners{LinearCache: cache.NewLinearCache(listenerType), max: max, made: map[string]bool{}, apps: map[string]bool{}, routed: routed, routesOf: routesOf}
}

// remake makes again the listeners of the names that route to apps: their
// routes changed (Server.SetRules).
func (l *listeners) remake(apps map[string]struct{}) {
	l.mu.Lock()
	defer l.mu.Unlock()
	again := map[string]types.Resource{}
	for n := range l.made {
		if _, ok := apps[eureka.AppName(n)]; ok {
			again[n] = l.apiListener(n)
		}
	}
	if len(again) > 0 {
		_ = l.UpdateResources(again, nil)
	}
}

// routes reports whether a listener routes to app.
func (l *listeners) routes(app string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.apps[app]
}

// CreateWatch makes the listeners the request names, then watches.
func (l *listeners) CreateWatch(req *cache.Request, sub cache.Subscription, ch chan cache.Response) (func(), error) {
	l.make(sub.SubscribedResources())
	return l.LinearCache.CreateWatch(req, sub, ch)
}

// CreateDeltaWatch makes the listeners the request names, then watches.
func (l *listeners) CreateDeltaWatch(req *cache.DeltaRequest, sub cache.Subscription, ch chan cache.DeltaResponse) (func(), error) {
	l.make(sub.SubscribedResources())
	return l.LinearCache.CreateDeltaWatch(req, sub, ch)
}

func (l *listeners) make(names map[string]struct{}) {
	if apps := l.add(names); len(apps) > 0 {
		l.routed(apps)
	}
}

// add makes the listeners of the new names and returns the apps they
// route to that no listener routed to.
func (l *listeners) add(names map[string]struct{}) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	add := map[string]types.Resource{}
	for n := range names {
		if l.made[n] || len(l.made)+len(add) >= l.max || n == "" || len(n) > maxNameLen {
			continue
		}
		add[n] = l.apiListener(n)
	}
	if len(add) == 0 {
		return nil
	}
	var apps []string
	for n := range add {
		l.made[n] = true
		if app := eureka.AppName(n); !l.apps[app] {
			l.apps[app] = true
			apps = append(apps, app)
		}
	}
	// The error is a resource's failure to marshal, which these cannot have.
	_ = l.UpdateResources(add, nil)
	return apps
}

// apiListener is the listener of a name a gRPC client dials: its inline
// routes are those of the app the name spells (routesOf): every RPC to
// the app's cluster, or its traffic rules'.
func (l *listeners) apiListener(name string) *listenerv3.Listener {
	hcm := &hcmv3.HttpConnectionManager{
		RouteSpecifier: &hcmv3.HttpConnectionManager_RouteConfig{RouteConfig: &routev3.RouteConfiguration{
			Name: name,
			VirtualHosts: []*routev3.VirtualHost{{
				Name:    name,
				Domains: []string{"*"},
				Routes:  l.routesOf(eureka.AppName(name)),
			}},
		}},
		HttpFilters: []*hcmv3.HttpFilter{routerFilter()},
	}
	return &listenerv3.Listener{
		Name:        name,
		ApiListener: &listenerv3.ApiListener{ApiListener: mustAny(hcm)},
	}
}

// routerFilter is the last HTTP filter every connection manager needs.
func routerFilter() *hcmv3.HttpFilter {
	return &hcmv3.HttpFilter{
		Name:       "envoy.filters.http.router",
		ConfigType: &hcmv3.HttpFilter_TypedConfig{TypedConfig: mustAny(&routerv3.Router{})},
	}
}

// mustAny wraps m, a message of this package's making, which always
// marshals.
func mustAny(m proto.Message) *anypb.Any {
	a, err := anypb.New(m)
	if err != nil {
		panic(err)
	}
	return a
}
