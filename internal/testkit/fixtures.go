package testkit

import (
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/eurekagate/eurekagate/eureka"
)

// FakeClock is a clock that moves only when told to, for leases, eviction
// and retention tests that must not sleep. It satisfies registry.Clock.
type FakeClock struct {
	mu  sync.Mutex
	now time.Time
}

// NewFakeClock returns a FakeClock at a fixed date.
func NewFakeClock() *FakeClock {
	return &FakeClock{now: time.Date(2026, 1, 2, 3, 4, 0, 0, time.UTC)}
}

// Now returns the clock's time.
func (c *FakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Advance moves the clock forward by d.
func (c *FakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// Registrar is what MustRegister needs of a registry.
type Registrar interface {
	Register(i *eureka.InstanceInfo, replication bool) error
}

// MustRegister registers i and fails the test if that fails.
func MustRegister(t testing.TB, r Registrar, i *eureka.InstanceInfo, replication bool) {
	t.Helper()
	if err := r.Register(i, replication); err != nil {
		t.Fatal(err)
	}
}

// Getter is what MustGet needs of a registry.
type Getter interface {
	Get(app, id string) (*eureka.InstanceInfo, bool)
}

// MustGet returns the instance (app, id) and fails the test if it is not
// there.
func MustGet(t testing.TB, g Getter, app, id string) *eureka.InstanceInfo {
	t.Helper()
	i, ok := g.Get(app, id)
	if !ok {
		t.Fatalf("%s/%s not found", app, id)
	}
	return i
}

// NameList returns n distinct names, prefix followed by 0 to n-1,
// comma-separated, as a reader's apps= or regions= list.
func NameList(prefix string, n int) string {
	var b strings.Builder
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(prefix)
		b.WriteString(strconv.Itoa(i))
	}
	return b.String()
}
