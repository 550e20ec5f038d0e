package apisuite

import (
	_ "embed"
	"net/http"
	"testing"
	"time"

	"github.com/eurekagate/eurekagate/registry"
	"github.com/eurekagate/eurekagate/registry/httpapi"
)

// Starter starts a fresh, empty registry with the given settings behind the
// host under test and returns its base URL (scheme, host and port; the
// suite adds /eureka/...) and its Store.
type Starter func(t *testing.T, cfg registry.Config, api httpapi.APIConfig) (string, *registry.Store)

// Run runs the REST API suite against the host.
func Run(t *testing.T, start Starter) {
	for _, c := range []struct {
		name string
		test func(*testing.T, Starter)
	}{
		{"RegisterAndRead", registerAndRead},
		{"Paths", paths},
		{"GzipOnlyWhenAsked", gzipOnlyWhenAsked},
		{"RenewCancelStatus", renewCancelStatus},
		{"DisableDelta", disableDelta},
		{"BadInputChangesNothing", badInputChangesNothing},
		{"NoForgedWrites", noForgedWrites},
		{"Limits", limits},
		{"ReplicationBatch", replicationBatch},
		{"Watch", watch},
	} {
		t.Run(c.name, func(t *testing.T) { c.test(t, start) })
	}
}

// RunFargo drives the host with hudl/fargo v1.4.0, a real Eureka client, in
// its default XML mode and in JSON mode.
func RunFargo(t *testing.T, start Starter) {
	for _, useJSON := range []bool{false, true} {
		name := "xml"
		if useJSON {
			name = "json"
		}
		t.Run(name, func(t *testing.T) {
			base, _ := start(t, registry.Config{}, httpapi.APIConfig{})
			runFargo(t, base, useJSON)
		})
	}
}

//go:embed testdata/java-batch.json
var javaBatch string

// fargoXML is a registration as fargo sends it in XML mode (protocol doc
// 3.10).
const fargoXML = `<instance><instanceId></instanceId><hostName>host1</hostName><app>orders</app><ipAddr>10.0.0.12</ipAddr><vipAddress>orders</vipAddress><secureVipAddress></secureVipAddress><status>UP</status><overriddenstatus></overriddenstatus><homePageUrl></homePageUrl><statusPageUrl></statusPageUrl><healthCheckUrl></healthCheckUrl><countryId>0</countryId><dataCenterInfo><name>MyOwn</name><metadata></metadata></dataCenterInfo><leaseInfo><renewalIntervalInSecs>0</renewalIntervalInSecs><durationInSecs>0</durationInSecs><registrationTimestamp>0</registrationTimestamp><lastRenewalTimestamp>0</lastRenewalTimestamp><evictionTimestamp>0</evictionTimestamp><serviceUpTimestamp>0</serviceUpTimestamp></leaseInfo><metadata><management__port>8080</management__port></metadata><port enabled="true">8080</port><securePort enabled="false">443</securePort></instance>`

// client opens a connection per request: the hosts under test are
// restarted between cases (Caddy loads a new config), and a kept-alive
// connection the old server closes would fail a POST, which Go does not
// resend.
var client = &http.Client{
	Timeout:   10 * time.Second,
	Transport: &http.Transport{DisableCompression: true, DisableKeepAlives: true},
}
