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

// upper returns the upper-case name, and whether it came from the cache.
func (c *nameCache) upper(raw []byte) (string, bool) {
	if m := c.m.Load(); m != nil {
		if s, ok := (*m)[string(raw)]; ok {
			return s, true
		}
	}
	return eureka.AppName(raw), false
}

// remember keeps the name raw spells, one upper did not find, when it is
// in one case.
func (c *nameCache) remember(raw []byte, app string) {
	// Full: the names kept are those of the apps seen first.
	if !oneCase(raw) || c.full() {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	old := c.m.Load()
	var next map[string]string
	if old == nil {
		next = make(map[string]string, 1)
	} else {
		if _, ok := (*old)[string(raw)]; ok || len(*old) >= maxNames {
			return // kept meanwhile, or full
		}
		next = make(map[string]string, len(*old)+1)
		for k, v := range *old {
			next[k] = v
		}
	}
	next[string(raw)] = app
	c.m.Store(&next)
}

// full reports whether the cache holds maxNames names.
func (c *nameCache) full() bool {
	m := c.m.Load()
	return m != nil && len(*m) >= maxNames
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
