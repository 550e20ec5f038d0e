// Package dashboard is the registry's web dashboard: what Eureka's status
// page at http://localhost:8761/ shows, live. General information (uptime,
// version, node, peers and their replication health), the self-preservation
// state with the numbers behind it, and a table of applications and
// instances, refreshed every two seconds without reloading the page.
// Operators can take an instance out of service, put it back and
// deregister it; the page does it through the Eureka REST API, so the
// API's access control applies, and the browser sends the credentials it
// was given for the page.
//
// The page needs no external network: its script and styles are embedded.
package dashboard

import (
	"embed"
	"encoding/json"
	"io/fs"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/eurekagate/eurekagate/registry"
	"github.com/eurekagate/eurekagate/registry/replication"
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
	// Version is shown on the page. Default "dev".
	Version string
	// Peers, if set, is the node's replication (a *replication.Peers),
	// whose state the page shows. Default: none.
	Peers Peers
}

// Peers reports each peer's replication state.
type Peers interface {
	Stats() []replication.PeerStats
}

// Handler serves the dashboard page, its assets and its data
// ({Path}api/summary).
type Handler struct {
	store *registry.Store
	cfg   Config
	files http.Handler
}

// New returns the dashboard over store.
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
		cfg.Version = "dev"
	}
	sub, _ := fs.Sub(static, "static")
	return &Handler{store: store, cfg: cfg, files: http.StripPrefix(cfg.Path, http.FileServerFS(sub))}
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
	if rest == "api/summary" {
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(h.summary(r))
		return
	}
	h.files.ServeHTTP(w, r)
}

// Summary is the data behind the page.
type Summary struct {
	Node             string                    `json:"node"`
	Version          string                    `json:"version"`
	APIPrefix        string                    `json:"api_prefix"`
	Started          time.Time                 `json:"started"`
	UptimeSeconds    int64                     `json:"uptime_seconds"`
	Now              time.Time                 `json:"now"`
	SelfPreservation registry.SelfPreservation `json:"self_preservation"`
	Explanation      string                    `json:"explanation,omitempty"`
	Peers            []replication.PeerStats   `json:"peers"`
	Applications     []App                     `json:"applications"`
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
	StatusPageURL      string `json:"status_page_url,omitempty"`
	HealthCheckURL     string `json:"health_check_url,omitempty"`
}

func (h *Handler) summary(r *http.Request) Summary {
	cfg := h.store.Config()
	now := cfg.Clock.Now()
	sp := h.store.SelfPreservation()
	s := Summary{
		Node: h.cfg.Node, Version: h.cfg.Version, APIPrefix: h.cfg.APIPrefix,
		Started: h.store.StartedAt(), UptimeSeconds: int64(now.Sub(h.store.StartedAt()).Seconds()), Now: now,
		SelfPreservation: sp, Peers: h.peerStats(), Applications: []App{},
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
	}
	for _, a := range h.store.Applications().Applications {
		app := App{Name: a.Name}
		for _, i := range a.Instances {
			last := i.LeaseInfo.LastRenewalTimestamp
			if cfg.LegacyLeaseExpiry && last > i.LeaseInfo.RegistrationTimestamp {
				last -= int64(i.LeaseInfo.Duration()) * 1000 // Eureka reports it a duration ahead
			}
			zone := i.Metadata["zone"]
			if zone == "" && i.DataCenterInfo.IsAmazon() {
				zone = i.DataCenterInfo.Metadata["availability-zone"]
			}
			app.Instances = append(app.Instances, Instance{
				ID: i.ID(), Address: i.HostName + ":" + strconv.Itoa(i.Port.Number), Status: i.Status.String(),
				OverriddenStatus: i.OverriddenStatus.String(), Zone: zone,
				LastHeartbeatAgeMS: max(0, now.UnixMilli()-last),
				StatusPageURL:      safeURL(i.StatusPageURL), HealthCheckURL: safeURL(i.HealthCheckURL),
			})
		}
		s.Applications = append(s.Applications, app)
	}
	return s
}

// safeURL keeps only http(s) links, so a registration cannot put a
// javascript: link on the operator's page.
func safeURL(u string) string {
	if strings.HasPrefix(u, "http://") || strings.HasPrefix(u, "https://") {
		return u
	}
	return ""
}
