// Package dashboard is the registry's web dashboard: what Eureka's status
// page at http://localhost:8761/ shows, live, for a fleet of thousands of
// instances. General information (uptime, version, node, peers and their
// replication health), the self-preservation state with the numbers behind
// it, charts of the last 15 minutes (registrations, cancels, evictions and
// renews per minute against the self-preservation threshold, instances by
// status), the recent changes, and the applications grouped with their
// per-status counts, searchable and paged, with the traffic rules in force
// for each (Config.Rules) and the instances of each subset they name, and,
// with a gateway's traffic (Config.Traffic), a live Traffic panel: per app
// the requests per second, the share of 5xx answers, the latency's median
// and 99th percentile, charts of the last minute and 15 minutes and the
// split per instance, the apps with errors first, the requests for
// unregistered names on a line apart; and with the gateway's balancer
// (Config.Health), the instances it keeps out of rotation marked (ejected,
// failing their health check) in the applications and in their app's
// traffic. The page loads the
// registry once and then applies only the changes since the version it
// holds (api/changes, a bounded long poll on the Store's change stream),
// updating the rows on screen in place. Operators can take an instance out of
// service, put it back and deregister it; the page does it through the
// Eureka REST API, so the API's access control applies, and the browser
// sends the credentials it was given for the page.
//
// The page needs no external network: its script and styles are embedded.
//
// Endpoints, under Path:
//
//	api/summary  the whole registry for the page (Summary)
//	api/changes  ?since=V[&wait=S][&apps=A,B]: the changes after version V (Changes)
//	api/charts   the per-minute series of the last 15 minutes (Charts)
//	api/rules    the traffic rules in force and each subset's instances (RulesView)
//	api/traffic  [?top=N]: the gateways' requests per app, live (TrafficView)
//	api/regions  the remote regions' state, counted apart (RegionsView)
package dashboard

import (
	"context"
	"embed"
	"encoding/json"
	"io/fs"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/eurekagate/eurekagate/eureka"
	"github.com/eurekagate/eurekagate/internal/version"
	"github.com/eurekagate/eurekagate/registry"
	"github.com/eurekagate/eurekagate/registry/replication"
	"github.com/eurekagate/eurekagate/routing"
	"github.com/eurekagate/eurekagate/traffic"
)

//go:embed static
var static embed.FS

// Config configures the dashboard.
type Config struct {
	// Path is where the dashboard is served. Default "/".
	Path string
	// APIPrefix is where the page sends its actions. Default "/eureka".
	APIPrefix string
	// Node names this registry node on the page. Default: the host name
	// the browser used.
	Node string
	// Version is shown on the page. Default: the Eurekagate module's
	// version, from the binary's build info.
	Version string
	// Peers, if set, is the node's replication (a *replication.Peers),
	// whose state the page shows. Default: none.
	Peers Peers
	// MaxWait bounds how long api/changes holds a request open waiting for
	// a change, whatever its wait parameter asks. Default
	// registry.DefaultMaxWait (60s); negative: never wait. A request that
	// gives no wait waits registry.DefaultWait (30s), as every long poll
	// does (registry.ParseWait).
	MaxWait time.Duration
	// Rules, if set, returns the traffic rules in force (a gateway's:
	// routing.Router.Rules), which the page shows per app with the
	// instances of each subset. Default: none.
	Rules func() *routing.Rules
	// Traffic, if set, is the gateways' traffic counters (a gateway's
	// Traffic()): the Handler samples them every second into the last 15
	// minutes per app (api/traffic) and the page shows them live in a
	// Traffic panel. Default: none, and no panel.
	Traffic *traffic.Recorder
	// TrafficLive, if set with Traffic, says whether a gateway records
	// into Traffic now: while it returns false, api/traffic answers
	// {"enabled": false} and the page shows no panel (Caddy's
	// eureka_dashboard: no eureka_gateway routes to its registry).
	// Default: always.
	TrafficLive func() bool
	// Health, if set, is what the gateways' balancers know of the
	// instances out of rotation (a gateway's balancer): the page marks
	// each ejected instance (since when, why, until when) and each failing
	// its active health check in the Applications list and in its app's
	// traffic card, and api/summary and api/traffic carry the marks.
	// Default: none, and no marks.
	Health Health
	// XDS, if set, returns the clients of the node's xDS server (an
	// xds.Server's Clients): the page lists them (node id, the resource
	// types they asked for, since when), from api/xds. Default: none, and
	// no list.
	XDS func() []XDSClient
	// Permissions, if set, tells what the account signed in to the page
	// may write (httpapi.API.MayWrite): the page disables the actions it
	// may not take, saying why. It returns nil for an account that may
	// write every app's instances. Default: none, every action enabled.
	Permissions func(r *http.Request) *Permissions
}

// Permissions are what an account may write, as api/summary's "may":
// the apps of its binding (names, or patterns with *), and whether it is
// an operator, who may take any app's instances out of service, put them
// back and deregister them.
type Permissions struct {
	Apps     []string `json:"apps"`
	Operator bool     `json:"operator"`
}

// PermissionsFrom makes Config.Permissions of a decision shaped as
// httpapi.API.MayWrite's: limited false for an account that may write
// everything.
func PermissionsFrom(mayWrite func(*http.Request) (apps []string, operator, limited bool)) func(*http.Request) *Permissions {
	return func(r *http.Request) *Permissions {
		apps, operator, limited := mayWrite(r)
		if !limited {
			return nil
		}
		return &Permissions{Apps: apps, Operator: operator}
	}
}

// Peers reports each peer's replication state.
type Peers interface {
	Stats() []replication.PeerStats
}

// sampleInterval is how often a started Handler samples the Store for the
// charts.
const sampleInterval = 10 * time.Second

// Handler serves the dashboard page, its assets and its data.
//
// New subscribes it to the Store's change stream, which feeds the charts
// and the recent changes; the numbers that are not changes (renews, the
// threshold, instances by status) are sampled on every request and change.
// Start adds a sampler goroutine so that the charts keep their history
// while nobody has the page open, and that samples Config.Traffic every
// second. Close stops the sampler, ends the long polls in progress and
// unsubscribes.
type Handler struct {
	store *registry.Store
	cfg   Config
	files http.Handler
	rec   *recorder
	// traffic samples Config.Traffic; nil without it.
	traffic *trafficRecorder

	unsubscribe func()
	// closed ends the long polls in progress when the Handler is closed.
	closed    context.Context
	close     context.CancelFunc
	closeOnce sync.Once

	mu      sync.Mutex
	stopped bool
	sampler chan struct{} // closed when the sampler goroutine has returned
}

// New returns the dashboard over store. Close releases it.
func New(store *registry.Store, cfg Config) *Handler {
	if cfg.Path == "" {
		cfg.Path = "/"
	}
	if !strings.HasSuffix(cfg.Path, "/") {
		cfg.Path += "/"
	}
	if cfg.APIPrefix == "" {
		cfg.APIPrefix = "/eureka"
	}
	if cfg.Version == "" {
		cfg.Version = version.String()
	}
	if cfg.MaxWait == 0 {
		cfg.MaxWait = registry.DefaultMaxWait
	}
	sub, _ := fs.Sub(static, "static")
	h := &Handler{store: store, cfg: cfg, files: http.StripPrefix(cfg.Path, http.FileServerFS(sub)), rec: newRecorder(store)}
	if cfg.Traffic != nil {
		h.traffic = newTrafficRecorder(cfg.Traffic, store.Config().Clock.Now)
	}
	h.closed, h.close = context.WithCancel(context.Background())
	h.unsubscribe = store.Subscribe(h.rec.onChange)
	return h
}

// Start starts sampling the Store every few seconds for the charts, and
// Config.Traffic every second, on one goroutine that Close stops. Without
// it the charts and the traffic are sampled only when the page is open
// (and the charts when the registry changes). Start after Close, or a
// second Start, does nothing.
func (h *Handler) Start() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.stopped || h.sampler != nil {
		return
	}
	done := make(chan struct{})
	h.sampler = done
	go func() {
		defer close(done)
		t := time.NewTicker(sampleInterval)
		defer t.Stop()
		var trafficTick <-chan time.Time // nil without Config.Traffic: never
		if h.traffic != nil {
			tt := time.NewTicker(trafficEvery)
			defer tt.Stop()
			trafficTick = tt.C
			h.traffic.sample(true)
		}
		h.rec.sample(true)
		for {
			select {
			case <-t.C:
				h.rec.sample(true)
			case <-trafficTick:
				h.traffic.sample(true)
			case <-h.closed.Done():
				return
			}
		}
	}()
}

// Close stops the sampler and waits for it, makes the long polls in
// progress return at once, and unsubscribes from the Store. The Handler
// still serves afterwards, without waiting and without new chart data.
func (h *Handler) Close() {
	h.closeOnce.Do(func() {
		h.close()
		h.unsubscribe()
		h.mu.Lock()
		h.stopped = true
		done := h.sampler
		h.mu.Unlock()
		if done != nil {
			<-done
		}
	})
}

func (h *Handler) peerStats() []replication.PeerStats {
	if h.cfg.Peers == nil {
		return nil
	}
	return h.cfg.Peers.Stats()
}

// ServeHTTP serves the page, its assets and its data.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rest, ok := strings.CutPrefix(r.URL.Path, h.cfg.Path)
	if !ok && r.URL.Path+"/" == h.cfg.Path {
		http.Redirect(w, r, h.cfg.Path, http.StatusMovedPermanently)
		return
	}
	if !ok || (r.Method != http.MethodGet && r.Method != http.MethodHead) {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("Content-Security-Policy", "default-src 'self'; img-src 'self' data:")
	var body any
	var err error // a query the data cannot answer
	switch rest {
	case "api/summary":
		body = h.summary(r)
	case "api/changes":
		body, err = h.changes(r)
	case "api/charts":
		body = h.rec.charts()
	case "api/rules":
		body = h.rules()
	case "api/regions":
		body = h.regions()
	case "api/xds":
		body = h.xdsView()
	case "api/traffic":
		body, err = h.trafficView(r)
	default:
		h.files.ServeHTTP(w, r)
		return
	}
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(body)
}

// Head is what every data response carries: the node, its state and the
// registry version the data is at.
type Head struct {
	Node             string                    `json:"node"`
	Version          string                    `json:"version"`
	APIPrefix        string                    `json:"api_prefix"`
	Started          time.Time                 `json:"started"`
	UptimeSeconds    int64                     `json:"uptime_seconds"`
	Now              time.Time                 `json:"now"`
	SelfPreservation registry.SelfPreservation `json:"self_preservation"`
	Explanation      string                    `json:"explanation,omitempty"`
	Peers            []replication.PeerStats   `json:"peers"`
	// RegistryVersion is the Store version the data reflects: the page
	// asks api/changes for what came after it.
	RegistryVersion uint64 `json:"registry_version"`
}

// Summary is the data behind the page: the whole registry, and the last
// changes for the feed.
type Summary struct {
	Head
	Applications []App `json:"applications"`
	// Recent is the last changes (up to 100), oldest first.
	Recent []Event `json:"recent"`
	// May is what the signed-in account may write (Config.Permissions);
	// absent when it may write everything.
	May *Permissions `json:"may,omitempty"`
}

// App is one application's instances.
type App struct {
	Name      string     `json:"name"`
	Instances []Instance `json:"instances"`
}

// Instance is one row of the table.
type Instance struct {
	ID                 string `json:"id"`
	Address            string `json:"address"`
	Status             string `json:"status"`
	OverriddenStatus   string `json:"overridden_status"`
	Zone               string `json:"zone,omitempty"`
	LastHeartbeatAgeMS int64  `json:"last_heartbeat_age_ms"`
	// LastHeartbeat is the last renew, in ms since the epoch (server time).
	LastHeartbeat  int64  `json:"last_heartbeat"`
	StatusPageURL  string `json:"status_page_url,omitempty"`
	HealthCheckURL string `json:"health_check_url,omitempty"`
	// OutOfRotation's ejected and failing_health_check: whether a
	// gateway keeps the instance out of rotation now (Config.Health).
	OutOfRotation
}

// freshRegistry is how long after its start a registry in
// self-preservation is told to be fresh: the minute whose heartbeats are
// counted, and the one after it.
const freshRegistry = 2 * time.Minute

func (h *Handler) head(r *http.Request, version uint64) Head {
	now := h.store.Config().Clock.Now()
	sp := h.store.Stats().SelfPreservation()
	s := Head{
		Node: h.cfg.Node, Version: h.cfg.Version, APIPrefix: h.cfg.APIPrefix,
		Started: h.store.Stats().StartedAt(), UptimeSeconds: int64(now.Sub(h.store.Stats().StartedAt()).Seconds()), Now: now,
		SelfPreservation: sp, Peers: h.peerStats(), RegistryVersion: version,
	}
	if s.Node == "" {
		s.Node = r.Host
	}
	if s.Peers == nil {
		s.Peers = []replication.PeerStats{}
	}
	if sp.Active {
		s.Explanation = "Self-preservation is on: fewer heartbeats arrived in the last minute than the threshold, " +
			"so the registry assumes a network problem rather than many dead instances, and evicts nobody until " +
			"heartbeats recover. Instances that really stopped stay listed until then."
		if now.Sub(h.store.Stats().StartedAt()) < freshRegistry || sp.RenewsLastMinute == 0 {
			s.Explanation += " On a fresh registry this is normal: heartbeats are counted per full minute, so " +
				"until the instances registered have heartbeated for a whole minute the count is under the " +
				"threshold, as on Eureka's own servers."
		}
	}
	return s
}

func (h *Handler) summary(r *http.Request) Summary {
	h.rec.sample(false)
	// The version first: the snapshot is at least that new, and the changes
	// after it that the page then applies set each instance to its state
	// after the change, so applying one the snapshot already has is harmless.
	version := h.store.Version()
	s := Summary{Head: h.head(r, version), Applications: []App{}, Recent: h.rec.recent()}
	if h.cfg.Permissions != nil {
		s.May = h.cfg.Permissions(r)
	}
	legacy := h.store.Config().LegacyLeaseExpiry
	now := s.Now.UnixMilli()
	out := h.outOfRotation()
	for _, a := range h.store.Applications().Applications {
		app := App{Name: a.Name, Instances: make([]Instance, 0, len(a.Instances))}
		for _, i := range a.Instances {
			in := instanceOf(i, i.LeaseInfo, legacy, now)
			in.OutOfRotation = out[healthKey{strings.ToUpper(a.Name), "", in.ID}]
			app.Instances = append(app.Instances, in)
		}
		s.Applications = append(s.Applications, app)
	}
	return s
}

// instanceOf renders one instance, with the lease's timestamps from lease.
func instanceOf(i *eureka.InstanceInfo, lease eureka.LeaseInfo, legacy bool, now int64) Instance {
	last := lastHeartbeat(lease, legacy)
	zone := i.Metadata["zone"]
	if zone == "" && i.DataCenterInfo.IsAmazon() {
		zone = i.DataCenterInfo.Metadata["availability-zone"]
	}
	return Instance{
		ID: i.ID(), Address: i.HostName + ":" + strconv.Itoa(i.Port.Number), Status: i.Status.String(),
		OverriddenStatus: i.OverriddenStatus.String(), Zone: zone,
		LastHeartbeatAgeMS: max(0, now-last), LastHeartbeat: last,
		StatusPageURL: safeURL(i.StatusPageURL), HealthCheckURL: safeURL(i.HealthCheckURL),
	}
}

// lastHeartbeat is the lease's last renew. Eureka's legacy lease expiry
// reports it a duration ahead.
func lastHeartbeat(l eureka.LeaseInfo, legacy bool) int64 {
	last := l.LastRenewalTimestamp
	if legacy && last > l.RegistrationTimestamp {
		last -= int64(l.Duration()) * 1000
	}
	return last
}

// safeURL keeps only http(s) links, so a registration cannot put a
// javascript: link on the operator's page.
func safeURL(u string) string {
	if strings.HasPrefix(u, "http://") || strings.HasPrefix(u, "https://") {
		return u
	}
	return ""
}
