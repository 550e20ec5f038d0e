// Package actuator serves Spring Boot 3's actuator endpoints over a
// registry, as a Spring Cloud Eureka Server answers them, so that the
// probes and scrapers pointed at one keep working: /actuator/health with
// the registry's components, its liveness and readiness groups (always
// on, as Spring Boot turns them on under Kubernetes), /actuator/info and
// /actuator/prometheus, each only when exposed.
package actuator

import (
	"encoding/json"
	"fmt"
	"net/http"
	"runtime"
	"strings"

	"github.com/eurekagate/eurekagate/internal/version"
	"github.com/eurekagate/eurekagate/registry"
	"github.com/eurekagate/eurekagate/registry/replication"
)

// DefaultBasePath is Config.BasePath's default, Spring Boot's.
const DefaultBasePath = "/actuator"

// Endpoints are the endpoints served here, as exposure lists name them.
var Endpoints = []string{"health", "info", "prometheus"}

// Config configures the endpoints.
type Config struct {
	// BasePath is where they are served (management.endpoints.web.
	// base-path). Default /actuator.
	BasePath string
	// Exposure names the endpoints served (management.endpoints.web.
	// exposure.include): health, info, prometheus, or * for all.
	// Default health alone, as Spring Boot's.
	Exposure []string
	Store    *registry.Store
	// Peers, if set, are health's peers component.
	Peers *replication.Peers
	// NotReady, if set, tells why the registry does not answer reads,
	// "" when it does: httpapi.API.NotReady, the decision the registry's
	// own /health reads too. While it gives a reason readiness is
	// OUT_OF_SERVICE, answered 503; the start-up sync is done unless the
	// reason is httpapi.ReasonSyncing. Default: ready.
	NotReady func() string
	// Prometheus serves the prometheus endpoint: the handler of
	// /metrics, the same families.
	Prometheus http.Handler
	// Details reports whether a request may see health's components and
	// their details; nil lets every caller see them. Under basic auth,
	// anonymous callers get the status alone, as Spring Boot's default
	// (show-details: never) gives everyone.
	Details func(*http.Request) bool
	// Degraded, if set, adds components that health shows and does not
	// aggregate (degraded.go): cmd/eureka's gateway's redis. Default: none.
	Degraded func() map[string]Component
}

// Actuator serves the endpoints under its base path.
type Actuator struct {
	cfg     Config
	exposed map[string]bool
}

// New checks cfg: an exposed name this server has no endpoint for is an
// error naming the ones it has.
func New(cfg Config) (*Actuator, error) {
	if cfg.BasePath == "" {
		cfg.BasePath = DefaultBasePath
	}
	base, err := BasePath(cfg.BasePath)
	if err != nil {
		return nil, fmt.Errorf("actuator base path %s: %w", cfg.BasePath, err)
	}
	cfg.BasePath = base
	if len(cfg.Exposure) == 0 {
		cfg.Exposure = []string{"health"}
	}
	a := &Actuator{cfg: cfg, exposed: map[string]bool{}}
	for _, e := range cfg.Exposure {
		names, err := Exposed(e)
		if err != nil {
			return nil, fmt.Errorf("actuator %w", err)
		}
		for _, n := range names {
			a.exposed[n] = true
		}
	}
	if a.exposed["prometheus"] && cfg.Prometheus == nil {
		return nil, fmt.Errorf("actuator endpoint prometheus exposed without a metrics handler")
	}
	return a, nil
}

// Path is the base path with a trailing slash, for a mux.
func (a *Actuator) Path() string { return a.cfg.BasePath + "/" }

// ServeHTTP answers the base path (the links, as Spring Boot's
// discovery page) and the exposed endpoints; any other path under it is
// 404, and a method other than GET or HEAD 405.
func (a *Actuator) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	rest, ok := strings.CutPrefix(r.URL.Path, a.cfg.BasePath)
	rest = strings.Trim(rest, "/")
	switch {
	case !ok:
		http.NotFound(w, r)
	case rest == "":
		a.links(w, r)
	case rest == "health" && a.exposed["health"]:
		a.health(w, r)
	case (rest == "health/liveness" || rest == "health/readiness") && a.exposed["health"]:
		a.probe(w, strings.TrimPrefix(rest, "health/"))
	case rest == "info" && a.exposed["info"]:
		writeJSON(w, http.StatusOK, map[string]any{"build": map[string]string{
			"name": "eurekagate", "artifact": "eureka", "version": version.String(), "go": runtime.Version(),
		}})
	case rest == "prometheus" && a.exposed["prometheus"]:
		a.cfg.Prometheus.ServeHTTP(w, r)
	default:
		http.NotFound(w, r)
	}
}

// links is Spring Boot's discovery page: a link per exposed endpoint.
func (a *Actuator) links(w http.ResponseWriter, r *http.Request) {
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	base := scheme + "://" + r.Host + a.cfg.BasePath
	type link struct {
		Href      string `json:"href"`
		Templated bool   `json:"templated"`
	}
	links := map[string]link{"self": {Href: base}}
	for _, n := range Endpoints {
		if a.exposed[n] {
			links[n] = link{Href: base + "/" + n}
		}
	}
	if a.exposed["health"] {
		links["health-path"] = link{Href: base + "/health/{*path}", Templated: true}
	}
	writeJSON(w, http.StatusOK, map[string]any{"_links": links})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	body, _ := json.Marshal(v)
	// Spring Boot 3's actuator media type; a client asking for JSON
	// reads it as JSON.
	w.Header().Set("Content-Type", "application/vnd.spring-boot.actuator.v3+json")
	w.WriteHeader(status)
	w.Write(body)
}
