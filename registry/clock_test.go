package registry

import (
	"math/rand/v2"
	"testing"

	"github.com/eurekagate/eurekagate/eureka"
	"github.com/eurekagate/eurekagate/internal/testkit"
)

// Short names for the shared fixtures, which most tests here use.
var (
	inst         = testkit.Inst
	mustGet      = testkit.MustGet
	newFakeClock = testkit.NewFakeClock
)

func newTestStore(t testing.TB, cfg Config) (*Store, *testkit.FakeClock) {
	t.Helper()
	clock := newFakeClock()
	cfg.Clock = clock
	if cfg.Rand == nil {
		cfg.Rand = rand.New(rand.NewPCG(1, 2))
	}
	return New(cfg), clock
}

func mustRegister(t testing.TB, s *Store, i *eureka.InstanceInfo, replication bool) {
	t.Helper()
	testkit.MustRegister(t, s, i, replication)
}
