package routing

import (
	"sync"
	"sync/atomic"

	"github.com/eurekagate/eurekagate/internal/perapp"
)

// Counts counts the requests routers routed, per app and subset. A host
// that replaces its Router (Caddy, on a config reload) gives the new one
// the old one's Counts (Config.Counts), so that the counters it exports
// only grow. The zero value is ready to use; it is safe for concurrent
// use.
type Counts struct {
	mu       sync.Mutex
	bySubset map[[2]string]*atomic.Uint64 // app, subset label
	any      perapp.Map[atomic.Uint64]    // per app: requests that could go to any instance
}

// subset returns the counter of app's subset label.
func (c *Counts) subset(app, label string) *atomic.Uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.bySubset == nil {
		c.bySubset = map[[2]string]*atomic.Uint64{}
	}
	k := [2]string{app, label}
	n := c.bySubset[k]
	if n == nil {
		n = new(atomic.Uint64)
		c.bySubset[k] = n
	}
	return n
}

// Each calls f with the number of requests routed to each subset of each
// app so far: subset is a selector's text ("version=2.1"), or "" for the
// requests that could go to any instance of the app (it has no rules, no
// rule gave a subset, or the fallback was any).
func (c *Counts) Each(f func(app, subset string, requests uint64)) {
	c.mu.Lock()
	counts := make(map[[2]string]uint64, len(c.bySubset))
	for k, n := range c.bySubset {
		counts[k] = n.Load()
	}
	c.mu.Unlock()
	for k, n := range counts {
		f(k[0], k[1], n)
	}
	for app, n := range c.any.Snapshot() {
		f(app, "", n.Load())
	}
}

// Counts returns the Router's request counts.
func (r *Router) Counts() *Counts { return r.counts }
