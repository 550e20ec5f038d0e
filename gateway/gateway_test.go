package gateway

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"net/http/httptest"
	"os"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/eurekagate/eurekagate/balancer"
	"github.com/eurekagate/eurekagate/internal/gatewaysuite"
	"github.com/eurekagate/eurekagate/internal/testkit"
	"github.com/eurekagate/eurekagate/registry"
	"github.com/eurekagate/eurekagate/registry/regions"
	"github.com/eurekagate/eurekagate/routing"
	"github.com/eurekagate/eurekagate/traffic/metrics"
)

func TestMain(m *testing.M) { testkit.VerifyTestMain(m) }

// start serves a gateway over store on a free loopback port until the test
// ends, and returns its base URL and the gateway.
func start(t *testing.T, cfg Config, store *registry.Store) (string, *Gateway, *Server) {
	t.Helper()
	return startServer(t, cfg, ServerConfig{}, store)
}

// modes are the server's two ways to serve: event loops in front of
// fasthttp (the default), and fasthttp alone.
var modes = []struct {
	name  string
	loops int
}{{"loops", 0}, {"fasthttp", -1}}

// startServer is start with scfg (its Addr is a free loopback port).
func startServer(t testing.TB, cfg Config, scfg ServerConfig, store *registry.Store) (string, *Gateway, *Server) {
	t.Helper()
	if cfg.Routing.Instances == nil {
		cfg.Routing.Instances = regions.InstancesOf(store)
	}
	g, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	scfg.Addr = "127.0.0.1:0"
	srv := NewServer(g, scfg)
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	testkit.StopOnCleanupChecked(t, 10*time.Second, func(ctx context.Context) error {
		defer g.Close()
		return srv.Stop(ctx)
	})
	return "http://" + srv.Addr().String(), g, srv
}

// The shared gateway suite, which Caddy's eureka_gateway passes too.
// It runs in both of the server's modes.
func TestGatewaySuite(t *testing.T) {
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			gatewaysuite.Run(t, func(t *testing.T) (string, *registry.Store, gatewaysuite.Metrics) {
				store := registry.New(registry.Config{RemoteRegions: []registry.RemoteRegion{{Name: gatewaysuite.Region}}})
				base, g, _ := startServer(t, suiteConfig(t, store), ServerConfig{Loops: m.loops}, store)
				return base, store, suiteMetrics(g)
			}, gatewaysuite.FastHTTP)
		})
	}
}

// suiteMetrics are g's traffic metrics as cmd/eureka's /metrics has them
// (namespace eureka), gathered in process.
func suiteMetrics(g *Gateway) gatewaysuite.Metrics {
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(metrics.NewTraffic(g.Traffic(), metrics.BalancerHealth(g.Router().Config().Balancer), "eureka"))
	h := promhttp.HandlerFor(reg, promhttp.HandlerOpts{ErrorHandling: promhttp.HTTPErrorOnError})
	return gatewaysuite.Metrics{Namespace: "eureka", Scrape: func(t *testing.T) string {
		t.Helper()
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest("GET", "/metrics", nil))
		if w.Code != 200 {
			t.Fatalf("metrics: %d %s", w.Code, w.Body)
		}
		return w.Body.String()
	}}
}

// suiteConfig is the gateway configuration the shared suite asks for
// (see gatewaysuite.Starter): its response header timeout, active health
// checks every HealthInterval, its certificate authority trusted for
// secure ports, its traffic rules, and no trusted proxy.
func suiteConfig(t *testing.T, store *registry.Store) Config {
	t.Helper()
	rules, err := routing.ParseRules("gatewaysuite.Rules", []byte(gatewaysuite.Rules))
	if err != nil {
		t.Fatal(err)
	}
	pem, err := os.ReadFile(gatewaysuite.TrustedCA(t))
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(pem)
	checker := balancer.NewChecker(store, balancer.CheckConfig{Interval: gatewaysuite.HealthInterval})
	checker.Start()
	t.Cleanup(checker.Stop)
	return Config{
		Routing: routing.Config{
			Balancer:              balancer.New(regions.InstancesOf(store), balancer.Config{Checker: checker, MaxFails: routing.DefaultMaxFails, Cooldown: routing.DefaultFailDuration}),
			ResponseHeaderTimeout: gatewaysuite.ResponseHeaderTimeout,
			ReadTimeout:           gatewaysuite.ReadTimeout,
			Rules:                 rules,
			TrustedProxies:        nil, // no client's X-Forwarded-* or route header stands
			FailoverRegions:       []string{gatewaysuite.Region},
		},
		TLS: &tls.Config{RootCAs: roots},
	}
}
