package discovery

import (
	"context"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/eurekagate/eurekagate/internal/registrytest"
	"github.com/eurekagate/eurekagate/internal/testkit"
	"github.com/eurekagate/eurekagate/registry"
	"github.com/eurekagate/eurekagate/registry/httpapi"
)

func TestMain(m *testing.M) { testkit.VerifyTestMain(m) }

// ourServer is our registry on loopback.
type ourServer = registrytest.Server

func startOurServer(t *testing.T, addr string) *ourServer {
	t.Helper()
	return startOurServerWith(t, addr, registry.New(registry.Config{}))
}

// startOurServerWith serves store, which may run on a fake clock.
func startOurServerWith(t *testing.T, addr string, store *registry.Store) *ourServer {
	t.Helper()
	return registrytest.Start(t, store, httpapi.ServerConfig{Addr: addr})
}

func stopClient(t *testing.T, c *Client) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := c.Stop(ctx); err != nil {
		t.Error(err)
	}
}

func seededRand() *rand.Rand { return rand.New(rand.NewPCG(1, 2)) }

// fakeClock is a clock for the client's loops and a registry's leases at
// once: it moves only when Advance is called, and then fires the timers
// that are due.
type fakeClock struct {
	mu     sync.Mutex
	now    time.Time
	timers []*fakeTimer // pending
	armed  int          // timers created so far
}

type fakeTimer struct {
	at time.Time
	ch chan time.Time
}

func newFakeClock() *fakeClock { return &fakeClock{now: time.Date(2026, 1, 2, 3, 4, 0, 0, time.UTC)} }

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) NewTimer(d time.Duration) (<-chan time.Time, func() bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.armed++
	t := &fakeTimer{at: c.now.Add(d), ch: make(chan time.Time, 1)}
	if d <= 0 {
		t.ch <- c.now
		return t.ch, func() bool { return false }
	}
	c.timers = append(c.timers, t)
	return t.ch, func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		n := slices.Index(c.timers, t)
		if n >= 0 {
			c.timers = slices.Delete(c.timers, n, n+1)
		}
		return n >= 0
	}
}

// Advance moves the clock by d and fires the timers then due. It returns
// how many fired.
func (c *fakeClock) Advance(d time.Duration) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
	fired := 0
	c.timers = slices.DeleteFunc(c.timers, func(t *fakeTimer) bool {
		if t.at.After(c.now) {
			return false
		}
		t.ch <- c.now
		fired++
		return true
	})
	return fired
}

// state returns how many timers were created so far, and when the pending
// ones are due.
func (c *fakeClock) state() (armed int, due []time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, t := range c.timers {
		due = append(due, t.at)
	}
	return c.armed, due
}

// settle waits (in real time, bounded) until loops have each armed a
// timer again after armedBefore, and waits for pending timers.
func (c *fakeClock) settle(t *testing.T, armedBefore, loops int) {
	t.Helper()
	testkit.Eventually(t, 10*time.Second, "the client's loops waiting again", func() bool {
		armed, due := c.state()
		return armed > armedBefore && len(due) == loops
	})
}
