package routing

import (
	"sync"
	"sync/atomic"

	"github.com/eurekagate/eurekagate/eureka"
)

// nameCache maps the application names requests spell to the upper-case
// names Eureka stores, without an allocation per request. It only holds
// names of registered applications, and at most maxNames of them.
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

// remember keeps the name raw spells, when it is not kept yet.
func (c *nameCache) remember(raw []byte, app string) {
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
	next := make(map[string]string, n+1)
	if old != nil && n < maxNames {
		for k, v := range *old {
			next[k] = v
		}
	}
	next[string(raw)] = app
	c.m.Store(&next)
}
