package metrics_test

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/eurekagate/eurekagate/eureka"
	"github.com/eurekagate/eurekagate/internal/testkit"
	"github.com/eurekagate/eurekagate/registry"
	"github.com/eurekagate/eurekagate/registry/httpapi"
	"github.com/eurekagate/eurekagate/registry/metrics"
)

// Scrape the standalone server's /metrics after a scripted sequence of
// registrations, renewals, a cancel and an eviction.
func TestMetricsEndpoint(t *testing.T) {
	clock := testkit.NewFakeClock()
	s := registry.New(registry.Config{DisableSelfPreservation: true, Clock: clock})
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(metrics.New(s, nil, "eureka"))
	srv := httpapi.NewServer(httpapi.NewAPI(s, httpapi.APIConfig{}), httpapi.ServerConfig{Addr: "127.0.0.1:0",
		Other: promhttp.HandlerFor(reg, promhttp.HandlerOpts{})})
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	defer srv.Stop(t.Context())
	base := "http://" + srv.Addr().String()

	for _, id := range []string{"a", "b", "c"} {
		testkit.MustRegister(t, s, testkit.Inst("ORDERS", id), false)
	}
	testkit.MustRegister(t, s, testkit.Inst("BILLING", "d"), false)
	s.SetStatus("ORDERS", "c", eureka.StatusOutOfService, 0, false)
	for range 5 {
		s.Renew("ORDERS", "a", registry.RenewRequest{})
	}
	s.Cancel("ORDERS", "b", false)
	clock.Advance(60 * time.Second)
	for _, id := range []string{"a", "c"} {
		s.Renew("ORDERS", id, registry.RenewRequest{})
	}
	clock.Advance(60 * time.Second) // d, never renewed, has expired
	if ev := s.Evict(); len(ev) != 1 || ev[0] != "d" {
		t.Fatalf("evicted %v", ev)
	}
	resp, err := http.Get(base + "/eureka/apps")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()

	resp, err = http.Get(base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	text := string(body)
	for _, want := range []string{
		`eureka_registrations_total 4`,
		`eureka_renewals_total 7`,
		`eureka_cancels_total 1`,
		`eureka_evictions_total 1`,
		`eureka_instances{app="ORDERS",status="UP"} 1`,
		`eureka_instances{app="ORDERS",status="OUT_OF_SERVICE"} 1`,
		`eureka_self_preservation_active 0`,
		`eureka_fetches_total{kind="full"} 1`,
		`eureka_payload_bytes{document="full",format="xml"}`,
		`eureka_expected_renewing_clients 3`,
	} {
		if !strings.Contains(text, want) {
			t.Errorf("metrics lack %q", want)
		}
	}
	if strings.Contains(text, `app="BILLING"`) {
		t.Error("an evicted app is still reported")
	}
	http.DefaultClient.CloseIdleConnections()
}
