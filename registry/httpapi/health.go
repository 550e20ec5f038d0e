package httpapi

import (
	"net/http"
	"strings"
)

// HealthPath is the node's health endpoint, for load balancers and
// orchestrators, on the registry's listener next to the API: GET answers
// 200 {"status":"UP"} when the node serves reads, and 503 with
// {"status":"DOWN"} and the reason (API.NotReady) while it syncs from its
// peers at start (APIConfig.Ready) or after it has begun shutting down
// (API.Close). It needs no credentials, whatever AuthConfig says: it
// tells only whether the node serves reads.
const HealthPath = "/health"

// The reasons API.NotReady gives.
const (
	ReasonSyncing      = "syncing from its peers"
	ReasonShuttingDown = "shutting down"
)

func isHealth(path string) bool {
	return path == HealthPath || path == HealthPath+"/"
}

// NotReady is the node's readiness, the one decision HealthPath and the
// actuator's readiness (registry/actuator) both read: ReasonShuttingDown
// once Close was called, ReasonSyncing until APIConfig.Ready is closed,
// "" when the node serves reads.
func (a *API) NotReady() string {
	if a.closed.Err() != nil {
		return ReasonShuttingDown
	}
	if a.ready != nil {
		select {
		case <-a.ready:
		default:
			return ReasonSyncing
		}
	}
	return ""
}

// health answers HealthPath.
func (a *API) health(req *Request, resp *Response) {
	if req.Method != http.MethodGet && req.Method != http.MethodHead {
		resp.empty(http.StatusMethodNotAllowed)
		return
	}
	status, body := http.StatusOK, `{"status":"UP"}`
	if reason := a.NotReady(); reason != "" {
		status, body = http.StatusServiceUnavailable, `{"status":"DOWN","reason":"`+strings.ReplaceAll(reason, `"`, "")+`"}`
	}
	*resp = Response{Status: status, ContentType: "application/json", Body: []byte(body)}
}
