package dashboard

import (
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/eurekagate/eurekagate/routing"
	"github.com/eurekagate/eurekagate/traffic"
)

// An app whose circuit breaker opened (its instance answered 500, the
// gateway's rules open it at the first failure) has its traffic card
// marked "circuit open", and api/traffic says so.
func TestDashboardTrafficBreaker(t *testing.T) {
	rec := traffic.New()
	addr, store := startTrafficDashboard(t, rec)
	startBackend(t, store, "ORDERS", "orders-1").fail.Store(true)
	rules, err := routing.ParseRules("rules.yaml", []byte("apps:\n  orders:\n    breaker: {consecutive_failures: 1, open: 1h}\n"))
	if err != nil {
		t.Fatal(err)
	}
	_, gw := startGateway(t, routing.Config{Instances: store, Rules: rules}, rec)
	var statuses []int
	for range 3 {
		resp, err := http.Get("http://" + gw.Addr().String() + "/orders/x")
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		statuses = append(statuses, resp.StatusCode)
	}
	if statuses[0] != 500 || statuses[1] != 503 || statuses[2] != 503 {
		t.Fatalf("statuses %v, want 500 503 503", statuses)
	}

	p := page{t, browser(t, 1280)}
	p.do(chromedp.Navigate("http://"+addr+"/"), visible("#traffic-section"))
	p.waitFor("ORDERS marked circuit open", `[...document.querySelectorAll('#traffic .t-app[data-app="ORDERS"] h3 .badge-error')].some((b) => b.textContent === "circuit open")`, 20*time.Second)

	v, err := getTraffic(t, addr)
	if err != nil || len(v.Apps) != 1 || v.Apps[0].Breaker != "open" || v.Apps[0].BreakerRejected != 2 {
		t.Errorf("api/traffic: %v %+v", err, v)
	}
}
