package caddymodule

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/eurekagate/eurekagate/internal/registrytest"
	"github.com/eurekagate/eurekagate/internal/xdstest"
	"github.com/eurekagate/eurekagate/registry"
	"github.com/eurekagate/eurekagate/registry/httpapi"
)

// The xds option and its block adapt into the eureka app's JSON.
func TestXDSCaddyfile(t *testing.T) {
	a, _ := adaptApp(t, withEurekaOptions(`		xds 127.0.0.1:18000 {
			tls_cert xds.pem
			tls_key xds.key
			tls_client_ca ca.pem
			policy least_request
			grpc_port_key grpc
			instance_ca instances
		}
`))
	want := &XDS{Listen: "127.0.0.1:18000", TLSCert: "xds.pem", TLSKey: "xds.key", TLSClientCA: "ca.pem", Policy: "least_request", GRPCPortKey: "grpc", InstanceCA: "instances"}
	if got := a.XDS; !reflect.DeepEqual(got, want) {
		t.Fatalf("xds adapted to %+v, want %+v", got, want)
	}
}

func TestXDSConfigErrors(t *testing.T) {
	expectCaddyfileErrors(t, []caddyfileError{
		{"no address", withEurekaOptions("\t\txds\n"), []string{"xds takes the address to listen on", "Caddyfile:3"}},
		{"two addresses", withEurekaOptions("\t\txds :1 :2\n"), []string{"Caddyfile:3"}},
		{"key without cert", withEurekaOptions("\t\txds :18000 {\n\t\t\ttls_key k.pem\n\t\t}\n"),
			[]string{`xds: tls_cert "" and tls_key "k.pem" go together`, "Caddyfile:5"}},
		{"client CA without TLS", withEurekaOptions("\t\txds :18000 {\n\t\t\ttls_client_ca ca.pem\n\t\t}\n"),
			[]string{"xds: tls_client_ca needs tls_cert and tls_key", "Caddyfile:5"}},
		{"unknown policy", withEurekaOptions("\t\txds :18000 {\n\t\t\tpolicy fastest\n\t\t}\n"),
			[]string{`xds: policy "fastest" is none of round_robin, least_request, ring_hash`, "Caddyfile:5"}},
		{"unknown option", withEurekaOptions("\t\txds :18000 {\n\t\t\tport 1\n\t\t}\n"),
			[]string{`unrecognized xds option "port"`, "Caddyfile:4"}},
	})
	expectAppErrors(t, []appError{
		{`{"registry":"xds-1","xds":{}}`, []string{"xds: listen is empty"}},
		{`{"registry":"xds-2","xds":{"listen":":18000","tls_cert":"c.pem"}}`, []string{"xds: tls_cert \"c.pem\" and tls_key \"\" go together"}},
		{`{"registry":"xds-3","xds":{"listen":":18000","policy":"fastest"}}`, []string{`xds: policy "fastest"`}},
		{`{"registry":"xds-4","xds":{"listen":":18000","tls_cert":"missing.pem","tls_key":"missing.key"}}`, []string{"xds:", "missing.pem"}},
	})
}

// A grpc-go client with its own xDS resolver reaches an instance
// registered with the eureka app through the app's xDS server, and its
// RPCs follow a second registration, and eureka_dashboard lists it; a
// reload that drops the option
// stops the server (goleak checks at the end that nothing is left).
func TestXDSThroughCaddy(t *testing.T) {
	port := testPorts(1)[0]
	loadConfig(t, testConfig("", "registry "+newRegistry("xds")+"\n\t\txds 127.0.0.1:"+port, site(registryPort, "\teureka_server\n\teureka_dashboard")))
	api := strings.TrimSuffix(registryURL, "/")
	xdstest.Register(t, api, "ORDERS", "o1", xdstest.Backend(t, "o1"), nil)
	conn := xdstest.Conn(t, xdstest.Bootstrap("127.0.0.1:"+port, `{"type":"insecure"}`, t.Name()), "xds:///orders")
	xdstest.EventuallyReaches(t, conn, "o1")
	xdstest.Register(t, api, "ORDERS", "o2", xdstest.Backend(t, "o2"), nil)
	xdstest.EventuallyReaches(t, conn, "o1", "o2")
	// eureka_dashboard lists the client.
	if _, body := do(t, "GET", "http://127.0.0.1:"+registryPort+"/api/xds", nil); !strings.Contains(body, `"node":"`+t.Name()+`"`) {
		t.Errorf("api/xds lacks the client: %s", body)
	}

	loadConfig(t, testConfig("", "registry "+newRegistry("xds-after"), site(registryPort, "\teureka_server")))
}

// The server is warned about when it listens beyond loopback without
// mutual TLS.
func TestXDSExposed(t *testing.T) {
	for _, c := range []struct {
		x    XDS
		want bool
	}{
		{XDS{Listen: ":18000"}, true},
		{XDS{Listen: "0.0.0.0:18000", TLSCert: "c", TLSKey: "k"}, true},
		{XDS{Listen: "10.0.0.1:18000"}, true},
		{XDS{Listen: "127.0.0.1:18000"}, false},
		{XDS{Listen: "[::1]:18000"}, false},
		{XDS{Listen: "localhost:18000"}, false},
		{XDS{Listen: ":18000", TLSCert: "c", TLSKey: "k", TLSClientCA: "ca"}, false},
	} {
		if got := c.x.exposed(); got != c.want {
			t.Errorf("%+v: exposed %t, want %t", c.x, got, c.want)
		}
	}
}

// In remote mode, a JSON config's xds option serves the registry the app
// reads from another Eureka server (the bridge): a grpc-go xDS client
// reaches the instance registered there.
func TestXDSBridgeThroughCaddyJSON(t *testing.T) {
	store := registry.New(registry.Config{})
	remote := strings.TrimSuffix(registrytest.Start(t, store, httpapi.ServerConfig{Addr: "127.0.0.1:0"}).URL(), "/")
	xdstest.Register(t, remote, "ORDERS", "r1", xdstest.Backend(t, "r1"), nil)
	port := testPorts(1)[0]
	loadConfigAs(t, fmt.Sprintf(`{"admin":{"listen":"localhost:%s"},"apps":{"eureka":{"registry":%q,"remote":[%q],"xds":{"listen":"127.0.0.1:%s"}}}}`,
		adminPort, newRegistry("xds-bridge"), remote+"/", port), "json")
	conn := xdstest.Conn(t, xdstest.Bootstrap("127.0.0.1:"+port, `{"type":"insecure"}`, t.Name()), "xds:///orders")
	xdstest.EventuallyReaches(t, conn, "r1")

	loadConfig(t, testConfig("", "registry "+newRegistry("xds-bridge-after"), site(registryPort, "\teureka_server")))
}
