package routing

import (
	"sync"
	"sync/atomic"

	"github.com/eurekagate/eurekagate/eureka"
)

// nameCache maps the application names requests spell to the upper-case
// names Eureka stores, without an allocation per request. It only holds
// names of registered applications, at most maxNames of them, and only
// their spellings in one case (orders, ORDERS): a client that varies the
// case of each request's name (oRdErS) costs one string per request, not
// a copy of the cache.
type nameCache struct {
	m  atomic.Pointer[map[string]string]
	mu sync.Mutex
}

const maxNames = 4096

// upper returns the upper-case name.
func (c *nameCache) upper(raw []byte) string {
	if m := c.m.Load(); m != nil {
		if s, ok := (*m)[string(raw)]; ok {
			return s
		}
	}
	return eureka.AppName(raw)
}

// remember keeps the name raw spells, when it is in one case and not
// kept yet.
func (c *nameCache) remember(raw []byte, app string) {
	if !oneCase(raw) {
		return
	}
	if m := c.m.Load(); m != nil {
		if _, ok := (*m)[string(raw)]; ok {
			return
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	old := c.m.Load()
	n := 0
	if old != nil {
		n = len(*old)
	}
	if n >= maxNames {
		return // full: the names kept are those of the apps seen first
	}
	next := make(map[string]string, n+1)
	if old != nil {
		for k, v := range *old {
			next[k] = v
		}
	}
	next[string(raw)] = app
	c.m.Store(&next)
}

// oneCase reports whether name has no ASCII upper-case letter, or no
// lower-case one.
func oneCase(name []byte) bool {
	var lower, upper bool
	for _, c := range name {
		lower = lower || ('a' <= c && c <= 'z')
		upper = upper || ('A' <= c && c <= 'Z')
	}
	return !lower || !upper
}
