package main

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/eurekagate/eurekagate/internal/testkit"
	"github.com/eurekagate/eurekagate/registry/httpapi"
)

func status(t *testing.T, url string) (int, string) {
	t.Helper()
	code, body := testkit.HTTPGet(t, url)
	var m struct{ Status string }
	json.Unmarshal([]byte(body), &m)
	return code, m.Status
}

// /actuator/health/readiness answers 503 OUT_OF_SERVICE while the node
// waits for its start-up sync and 200 UP after; liveness is UP all along.
func TestActuatorReadinessWaitsForTheStartupSync(t *testing.T) {
	peer := testkit.NewHeldPeer(t)
	var srv *httpapi.Server
	startApp(t, []string{"-addr", "127.0.0.1:0", "-peers", peer.URL}, &srv)
	base := "http://" + srv.Addr().String() + "/actuator/health"
	if code, s := status(t, base+"/readiness"); code != 503 || s != "OUT_OF_SERVICE" {
		t.Errorf("readiness during the sync: %d %s", code, s)
	}
	if code, s := status(t, base+"/liveness"); code != 200 || s != "UP" {
		t.Errorf("liveness during the sync: %d %s", code, s)
	}
	peer.Release()
	testkit.Eventually(t, 10*time.Second, "readiness UP", func() bool {
		code, s := status(t, base+"/readiness")
		return code == 200 && s == "UP"
	})
	code, body := testkit.HTTPGet(t, base)
	if code != 200 || !strings.Contains(body, `"peers"`) || !strings.Contains(body, `"startupSync"`) {
		t.Errorf("health after the sync: %d %s", code, body)
	}
	http.DefaultClient.CloseIdleConnections()
}

// Only the exposed endpoints answer: health alone by default; with
// -actuator '*' the prometheus endpoint is Prometheus text; under
// -auth-users health answers anonymous callers the status alone, and the
// other endpoints need credentials with -auth-reads.
func TestActuatorExposureAndAuth(t *testing.T) {
	var srv *httpapi.Server
	startApp(t, []string{"-addr", "127.0.0.1:0"}, &srv)
	base := "http://" + srv.Addr().String() + "/actuator"
	for path, want := range map[string]int{"/health": 200, "/info": 404, "/prometheus": 404} {
		if code, _ := testkit.HTTPGet(t, base+path); code != want {
			t.Errorf("by default %s: %d, want %d", path, code, want)
		}
	}

	hash := testkit.PasswordHash(t, "s3cret")
	var auth *httpapi.Server
	startApp(t, []string{"-addr", "127.0.0.1:0", "-actuator", "*", "-auth-users", "ops:" + hash, "-auth-reads"}, &auth)
	base = "http://" + auth.Addr().String() + "/actuator"
	code, body := testkit.HTTPGet(t, base+"/health")
	if code != 200 || strings.Contains(body, "components") {
		t.Errorf("anonymous health: %d %s", code, body)
	}
	if code, _ := testkit.HTTPGet(t, base+"/prometheus"); code != 401 {
		t.Errorf("anonymous prometheus: %d, want 401", code)
	}
	req := testkit.JSONRequest(t, "GET", base+"/prometheus", "")
	req.SetBasicAuth("ops", "s3cret")
	resp, text := testkit.Do(t, http.DefaultClient, req)
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(strings.NewReader(text))
	if resp.StatusCode != 200 || err != nil || families["eureka_renew_threshold"] == nil {
		t.Errorf("prometheus: %d %v (%d families)", resp.StatusCode, err, len(families))
	}
	req = testkit.JSONRequest(t, "GET", base+"/health", "")
	req.SetBasicAuth("ops", "s3cret")
	if _, text := testkit.Do(t, http.DefaultClient, req); !strings.Contains(text, `"components"`) {
		t.Errorf("health with credentials: %s", text)
	}
	http.DefaultClient.CloseIdleConnections()
}

// Spring's management properties reach the actuator's settings; a name
// of an endpoint this server has not is logged and left out.
func TestSpringManagementProperties(t *testing.T) {
	dir := springDir(t, map[string]string{"application.yml": "management:\n  server:\n    port: 9090\n  endpoints:\n    web:\n      base-path: /manage\n      exposure:\n        include: health,info,metrics,prometheus\n        exclude: info\n"})
	o, err := parseSpring(t, dir, map[string]string{"MANAGEMENT_ENDPOINTS_WEB_EXPOSURE_INCLUDE": "health,prometheus,env"})
	if err != nil {
		t.Fatal(err)
	}
	a := o.actuator
	if strings.Join(a.exposure, ",") != "health,prometheus" || a.path != "/manage" || a.managementAddr != ":9090" {
		t.Errorf("actuator: %+v", a)
	}
	want := "variable MANAGEMENT_ENDPOINTS_WEB_EXPOSURE_INCLUDE: management.endpoints.web.exposure.include: env: ignored (no effect here: this server has no env endpoint; it serves health, info, prometheus)"
	if len(o.springNotes) != 1 || o.springNotes[0] != want {
		t.Errorf("notes %q, want %q", o.springNotes, want)
	}
	o, err = parseSpring(t, t.TempDir(), map[string]string{"MANAGEMENT_SERVER_PORT": "-1"})
	if err != nil || len(o.actuator.exposure) != 0 {
		t.Errorf("management.server.port -1: %v %+v", err, o.actuator)
	}
}

// -management-addr serves the endpoints on a server of their own, which
// the app stops with the rest; the registry's port no longer has them.
func TestActuatorOnManagementAddr(t *testing.T) {
	mgmt := testkit.FreeAddr(t)
	var srv *httpapi.Server
	startApp(t, []string{"-addr", "127.0.0.1:0", "-management-addr", mgmt, "-dashboard-path", "off"}, &srv)
	if code, s := status(t, "http://"+mgmt+"/actuator/health/readiness"); code != 200 || s != "UP" {
		t.Errorf("readiness on the management server: %d %s", code, s)
	}
	if code, _ := testkit.HTTPGet(t, "http://"+srv.Addr().String()+"/actuator/health"); code != 404 {
		t.Errorf("health on the registry's port: %d, want 404", code)
	}
	http.DefaultClient.CloseIdleConnections()
}

// The actuator's flags are checked as registry/actuator checks its
// Config (actuator.BasePath, actuator.Exposed): the refusal names the
// flag and the reason; an explicitly empty -actuator-path is refused as
// "/" is, not taken for the default.
func TestActuatorFlagsRefused(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-actuator", "health,env"}, `-actuator: endpoint "env": not served here (health, info, prometheus, or *)`},
		{[]string{"-actuator-path", "/"}, "-actuator-path /: the endpoints would stand beside the registry's own /health"},
		{[]string{"-actuator-path", ""}, "-actuator-path : the endpoints would stand beside the registry's own /health"},
	} {
		_, err := parseOptions(c.args, func(string) string { return "" }, io.Discard)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v, want %q", c.args, err, c.want)
		}
	}
}
