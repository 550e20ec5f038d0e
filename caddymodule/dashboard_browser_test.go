package caddymodule

import (
	"testing"

	"github.com/eurekagate/eurekagate/internal/dashboardsuite"
)

// Caddy's eureka_dashboard beside eureka_gateway: an instance the
// gateway's balancer ejects is marked on the page and in the JSON, and
// unmarked when it answers again (dashboardsuite.OutOfRotation), with
// the gateway's fail_duration of a second.
func TestDashboardOutOfRotationCaddy(t *testing.T) {
	loadConfig(t, testConfig("", "registry "+newRegistry("out-of-rotation-test"),
		site(registryPort, "\teureka_server\n\teureka_dashboard"),
		site(gatewayPort, "\teureka_gateway {\n\t\tfail_duration 1s\n\t}")))
	dashboardsuite.OutOfRotation(t, dashboardsuite.Setup{
		Dashboard: "http://127.0.0.1:" + registryPort + "/", Registry: registryURL,
		Gateway: gatewayURL, Repo: "..", Name: "caddy",
	})
}
