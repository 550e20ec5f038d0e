package actuator

import (
	"net/http"

	"github.com/eurekagate/eurekagate/registry/httpapi"
	"github.com/eurekagate/eurekagate/registry/regions"
)

// The statuses of Spring Boot's health, in its order of severity: the
// aggregate is the most severe of its components'.
const (
	StatusUp           = "UP"
	StatusOutOfService = "OUT_OF_SERVICE"
	StatusDown         = "DOWN"
)

var severity = map[string]int{StatusUp: 0, StatusOutOfService: 1, StatusDown: 2}

// component is one entry of health's components.
type component struct {
	Status  string         `json:"status"`
	Details map[string]any `json:"details,omitempty"`
}

// notReady is Config.NotReady's reason, "" when ready.
func (a *Actuator) notReady() string {
	if a.cfg.NotReady == nil {
		return ""
	}
	return a.cfg.NotReady()
}

// components are the registry's: liveness and readiness as Spring's,
// the start-up sync, the peers, the remote regions.
func (a *Actuator) components() map[string]component {
	reason := a.notReady()
	readiness, synced := StatusUp, StatusUp
	if reason != "" {
		readiness = StatusOutOfService
	}
	if reason == httpapi.ReasonSyncing {
		synced = StatusOutOfService
	}
	c := map[string]component{
		"ping":           {Status: StatusUp},
		"livenessState":  {Status: StatusUp},
		"readinessState": {Status: readiness},
		"startupSync":    {Status: synced, Details: map[string]any{"done": synced == StatusUp}},
	}
	if a.cfg.Peers != nil {
		peers := map[string]any{}
		for _, p := range a.cfg.Peers.Stats() {
			peers[p.URL] = p
		}
		// A peer that is down does not make this node unhealthy: Eureka's
		// peers catch up by replication and repair.
		c["peers"] = component{Status: StatusUp, Details: peers}
	}
	if regions := regions.MirrorOf(a.cfg.Store).States(); len(regions) > 0 {
		details := map[string]any{}
		for _, r := range regions {
			details[r.Name] = map[string]any{"ready": r.Ready, "dropped": r.Dropped, "apps": r.Apps, "instances": r.Instances, "lastError": r.LastError}
		}
		c["remoteRegions"] = component{Status: StatusUp, Details: details}
	}
	return c
}

// health answers the status, 503 unless UP, with the components to a
// caller that may see them; the groups liveness and readiness are named,
// as Spring Boot names them under Kubernetes.
func (a *Actuator) health(w http.ResponseWriter, r *http.Request) {
	comps := a.components()
	status := StatusUp
	for _, c := range comps {
		if severity[c.Status] > severity[status] {
			status = c.Status
		}
	}
	for name, c := range a.degraded() {
		comps[name] = c
	}
	body := map[string]any{"status": status}
	if a.cfg.Details == nil || a.cfg.Details(r) {
		body["components"] = comps
	}
	body["groups"] = []string{"liveness", "readiness"}
	writeJSON(w, code(status), body)
}

// probe answers a group: liveness is UP while the process serves;
// readiness is OUT_OF_SERVICE until the start-up sync is done and once
// the registry shuts down.
func (a *Actuator) probe(w http.ResponseWriter, group string) {
	status := StatusUp
	if group == "readiness" && a.notReady() != "" {
		status = StatusOutOfService
	}
	writeJSON(w, code(status), map[string]string{"status": status})
}

// code is Spring Boot's status mapping: UP 200, the others 503.
func code(status string) int {
	if status == StatusUp {
		return http.StatusOK
	}
	return http.StatusServiceUnavailable
}
