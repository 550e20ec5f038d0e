package gateway

import (
	"net/http"
	"testing"
	"time"

	"github.com/eurekagate/eurekagate/registry"
	"github.com/eurekagate/eurekagate/routing"
)

// A request over a rate limit is answered 429 on both paths, and its
// access log line names the limit; the request that passed names none.
func TestAccessLogLimited(t *testing.T) {
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			store := registry.New(registry.Config{})
			serve(t, store, "orders", "o1", func(w http.ResponseWriter, r *http.Request) {})
			rules, err := routing.ParseRules("test", []byte("apps:\n  orders:\n    limits: [{key: client, rate: 1/h, burst: 1}]\n"))
			if err != nil {
				t.Fatal(err)
			}
			var log logBuffer
			base, g, _ := startServer(t, Config{AccessLog: &log}, ServerConfig{Loops: m.loops}, store)
			g.Router().SetRules(rules)
			for i, want := range []int{200, 429} {
				if status, _, _ := do(t, "GET", base+"/orders/x", nil); status != want {
					t.Fatalf("request %d: %d, want %d", i, status, want)
				}
			}
			lines := log.waitLines(t, 2, 5*time.Second)
			if l := lines[0]; l.Status != 200 || l.Limited != "" {
				t.Errorf("the request that passed: status %d, limited %q", l.Status, l.Limited)
			}
			if l := lines[1]; l.Status != 429 || l.Limited != "client" || l.App != "ORDERS" || l.Instance != "" {
				t.Errorf("the request over the limit: %+v", l)
			}
		})
	}
}
