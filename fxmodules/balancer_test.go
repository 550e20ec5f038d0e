package fxmodules

import (
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.uber.org/fx"
	"go.uber.org/fx/fxtest"

	"github.com/eurekagate/eurekagate/balancer"
	"github.com/eurekagate/eurekagate/eureka"
	"github.com/eurekagate/eurekagate/internal/testkit"
)

type staticInstances map[string][]*eureka.InstanceInfo

func (s staticInstances) Instances(app string) []*eureka.InstanceInfo { return s[app] }

// With a CheckConfig supplied, the balancer skips an instance whose health
// URL fails, and the checker's goroutine stops with the application
// (TestMain checks that no goroutine is left).
func TestBalancerWithHealthChecks(t *testing.T) {
	srv := func(status int) *httptest.Server {
		s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(status) }))
		t.Cleanup(s.Close)
		return s
	}
	inst := func(id string, s *httptest.Server) *eureka.InstanceInfo {
		port, _ := strconv.Atoi(s.URL[strings.LastIndex(s.URL, ":")+1:])
		return &eureka.InstanceInfo{InstanceID: id, HostName: "127.0.0.1", App: "A", Status: eureka.StatusUp,
			Port: eureka.Port{Number: port, Enabled: true}, HealthCheckURL: s.URL + "/health"}
	}
	src := staticInstances{"A": {inst("up", srv(200)), inst("failing", srv(503))}}
	var b *balancer.Balancer
	app := fxtest.New(t, Balancer,
		fx.Provide(func() balancer.Instancer { return src }),
		fx.Supply(&balancer.CheckConfig{Interval: 50 * time.Millisecond}),
		fx.Populate(&b))
	app.RequireStart()
	defer app.RequireStop()
	testkit.Eventually(t, time.Second, "the failing instance skipped", func() bool {
		for range 4 {
			if i, _ := b.Pick("A"); i.ID() != "up" {
				return false
			}
		}
		return true
	})
}
