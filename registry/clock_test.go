package registry

import (
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/eurekagate/eurekagate/eureka"
)

// fakeClock is a Clock that moves only when told to.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func newFakeClock() *fakeClock {
	return &fakeClock{now: time.Date(2026, 1, 2, 3, 4, 0, 0, time.UTC)}
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

func newTestStore(t testing.TB, cfg Config) (*Store, *fakeClock) {
	t.Helper()
	clock := newFakeClock()
	cfg.Clock = clock
	if cfg.Rand == nil {
		cfg.Rand = rand.New(rand.NewPCG(1, 2))
	}
	return New(cfg), clock
}

// inst returns a valid registration of app/id.
func inst(app, id string) *eureka.InstanceInfo {
	return &eureka.InstanceInfo{
		InstanceID: id, HasInstanceID: true, HostName: id + ".local", App: app, IPAddr: "127.0.0.1",
		Status: eureka.StatusUp, Port: eureka.Port{Number: 8080, Enabled: true},
		SecurePort: eureka.Port{Number: 443}, CountryID: 1, SID: "na",
		DataCenterInfo: eureka.DataCenterInfo{Name: eureka.DataCenterMyOwn},
		LeaseInfo:      eureka.LeaseInfo{RenewalIntervalInSecs: 30, DurationInSecs: 90},
		VIPAddress:     app + "-vip", LastDirtyTimestamp: 1000,
	}
}

func mustRegister(t testing.TB, s *Store, i *eureka.InstanceInfo, replication bool) {
	t.Helper()
	if err := s.Register(i, replication); err != nil {
		t.Fatal(err)
	}
}

func mustGet(t testing.TB, s *Store, app, id string) *eureka.InstanceInfo {
	t.Helper()
	i, ok := s.Get(app, id)
	if !ok {
		t.Fatalf("%s/%s not found", app, id)
	}
	return i
}
