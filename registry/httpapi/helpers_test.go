package httpapi

import (
	"math/rand/v2"
	"testing"

	"github.com/eurekagate/eurekagate/eureka"
	"github.com/eurekagate/eurekagate/internal/testkit"
	"github.com/eurekagate/eurekagate/registry"
)

var inst = testkit.Inst

func newTestStore(t testing.TB, cfg registry.Config) (*registry.Store, *testkit.FakeClock) {
	t.Helper()
	clock := testkit.NewFakeClock()
	cfg.Clock = clock
	if cfg.Rand == nil {
		cfg.Rand = rand.New(rand.NewPCG(1, 2))
	}
	return registry.New(cfg), clock
}

// sampleStore is a test store holding n sample instances
// (testkit.SampleInstance 0 to n-1), for the benchmarks.
func sampleStore(t testing.TB, n int) *registry.Store {
	t.Helper()
	s, _ := newTestStore(t, registry.Config{})
	for i := range n {
		mustRegister(t, s, testkit.SampleInstance(i), false)
	}
	return s
}

func mustRegister(t testing.TB, s *registry.Store, i *eureka.InstanceInfo, replication bool) {
	t.Helper()
	testkit.MustRegister(t, s, i, replication)
}
