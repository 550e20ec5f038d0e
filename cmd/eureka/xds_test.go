package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/eurekagate/eurekagate/internal/testkit"
	"github.com/eurekagate/eurekagate/internal/xdstest"
	"github.com/eurekagate/eurekagate/registry/httpapi"
	"github.com/eurekagate/eurekagate/xds"
)

func TestXDSFlagErrors(t *testing.T) {
	ca := testkit.NewCA(t, t.TempDir(), "ca")
	cert, key := ca.Issue(t, "node")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-xds-tls-cert", cert, "-xds-tls-key", key}, "without -xds"},
		{[]string{"-xds", "127.0.0.1:0", "-xds-policy", "fastest"}, `-xds-policy: xds: Policy: "fastest"`},
		{[]string{"-xds", "127.0.0.1:0", "-xds-tls-cert", cert}, "-xds-tls-key"},
		{[]string{"-xds", "127.0.0.1:0", "-xds-tls-client-ca", ca.File}, "-xds-tls-cert"},
		{[]string{"-xds", "127.0.0.1:0", "-xds-tls-cert", cert, "-xds-tls-key", key + ".missing"}, "-xds-tls-cert:"},
		{[]string{"-xds-failover-regions", "eu-west"}, "without -xds"},
		{[]string{"-xds", "127.0.0.1:0", "-xds-failover-regions", "eu-west"}, `-xds-failover-regions: "eu-west" is not one of -remote-regions`},
	} {
		if _, err := parseOptions(c.args, noEnv, io.Discard); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v, want an error naming %q", c.args, err, c.want)
		}
	}
	o, err := parseOptions([]string{"-xds", "127.0.0.1:0"}, envOf(map[string]string{"EUREKA_XDS_GRPC_PORT_KEY": "grpc.port"}), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if r, err := parseOptions([]string{"-xds", "127.0.0.1:0", "-remote-regions", "eu-west=http://127.0.0.1:1/eureka/", "-xds-failover-regions", "EU-West"}, noEnv, io.Discard); err != nil || !slices.Equal(r.xds.Server.FailoverRegions, []string{"eu-west"}) {
		t.Errorf("-xds-failover-regions: %v %v", err, r)
	}
	if o.xds.Server.GRPCPortKey != "grpc.port" || o.xds.Server.Policy != xds.PolicyRoundRobin || o.xds.Server.TLS != nil {
		t.Errorf("xds options: %+v", o.xds)
	}
}

// With -xds and mutual TLS, grpc-go's xDS client presenting a certificate
// the CA signed reaches an instance registered over the REST API, on its
// gRPC_port, as xds:///orders.
func TestAppServesXDSOverMutualTLS(t *testing.T) {
	dir := t.TempDir()
	ca := testkit.NewCA(t, dir, "ca")
	cert, key := ca.Issue(t, "xds")
	clientCert, clientKey := ca.Issue(t, "client")
	var reg *httpapi.Server
	var xs *xds.Server
	startApp(t, []string{"-addr", "127.0.0.1:0", "-xds", "127.0.0.1:0", "-xds-tls-cert", cert, "-xds-tls-key", key, "-xds-tls-client-ca", ca.File}, &reg, &xs)

	api := "http://" + reg.Addr().String() + "/eureka"
	xdstest.Register(t, api, "ORDERS", "o1", xdstest.Backend(t, "o1"), nil)
	creds := fmt.Sprintf(`{"type":"tls","config":{"ca_certificate_file":%q,"certificate_file":%q,"private_key_file":%q}}`, ca.File, clientCert, clientKey)
	conn := xdstest.Conn(t, xdstest.Bootstrap(xs.Addr().String(), creds, t.Name()), "xds:///orders")
	xdstest.EventuallyReaches(t, conn, "o1")

	// A second instance is pushed to the client; /metrics counts the
	// client, the resources sent and the push.
	xdstest.Register(t, api, "ORDERS", "o2", xdstest.Backend(t, "o2"), nil)
	xdstest.EventuallyReaches(t, conn, "o1", "o2")
	// The dashboard lists the client.
	if _, body := testkit.HTTPGet(t, "http://"+reg.Addr().String()+"/api/xds"); !strings.Contains(body, `"node":"`+t.Name()+`","types":["listener","cluster","endpoints"]`) {
		t.Errorf("the dashboard's api/xds lacks the client: %s", body)
	}
	_, metrics := testkit.HTTPGet(t, "http://"+reg.Addr().String()+"/metrics")
	for _, want := range []string{"eureka_xds_clients 1\n", `eureka_xds_resources_sent_total{type="listener"} 1`, "eureka_xds_push_latency_seconds_count 1\n"} {
		if !strings.Contains(metrics, want) {
			t.Errorf("/metrics has no %q:\n%s", want, grep(metrics, "eureka_xds_"))
		}
	}
}

// grep returns the lines of s that hold sub.
func grep(s, sub string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// -xds beyond loopback without mutual TLS is warned about; on loopback,
// or with a client CA, it is not.
func TestXDSExposureWarning(t *testing.T) {
	ca := testkit.NewCA(t, t.TempDir(), "ca")
	cert, key := ca.Issue(t, "xds")
	for _, c := range []struct {
		args []string
		warn bool
	}{
		{[]string{"-xds", ":18000"}, true},
		{[]string{"-xds", ":18000", "-xds-tls-cert", cert, "-xds-tls-key", key}, true},
		{[]string{"-xds", "127.0.0.1:18000"}, false},
		{[]string{"-xds", ":18000", "-xds-tls-cert", cert, "-xds-tls-key", key, "-xds-tls-client-ca", ca.File}, false},
	} {
		o, err := parseOptions(c.args, noEnv, io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		core, logs := observer.New(zap.WarnLevel)
		xdsModule(o, zap.New(core))
		if warned := logs.FilterMessageSnippet("xDS server listens beyond loopback").Len() > 0; warned != c.warn {
			t.Errorf("%v: warned %t, want %t", c.args, warned, c.warn)
		}
	}
}

// With -gateway-rules and -xds, the xDS server serves the gateway's
// traffic rules: a canary header takes a gRPC client's RPCs to the canary.
func TestXDSServesGatewayRules(t *testing.T) {
	rules := filepath.Join(t.TempDir(), "rules.yaml")
	doc := "apps:\n  ORDERS:\n    default: {version: \"1\"}\n    rules:\n      - match: {header: {X-Canary: \"1\"}}\n        to: [{select: {version: \"2\"}}]\n"
	if err := os.WriteFile(rules, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	var reg *httpapi.Server
	var xs *xds.Server
	startApp(t, []string{"-addr", "127.0.0.1:0", "-xds", "127.0.0.1:0", "-gateway", "127.0.0.1:0", "-gateway-rules", rules}, &reg, &xs)
	api := "http://" + reg.Addr().String() + "/eureka"
	xdstest.Register(t, api, "ORDERS", "stable", xdstest.Backend(t, "stable"), map[string]string{"version": "1"})
	xdstest.Register(t, api, "ORDERS", "canary", xdstest.Backend(t, "canary"), map[string]string{"version": "2"})
	conn := xdstest.Conn(t, xdstest.Bootstrap(xs.Addr().String(), `{"type":"insecure"}`, t.Name()), "xds:///orders")
	xdstest.EventuallyReaches(t, conn, "stable")
	if got := xdstest.Count(conn, 12, "x-canary", "1"); got["canary"] != 12 {
		t.Fatalf("canary RPCs reached %v", got)
	}
}
