// Package perapp is a map from application name to a value made on first
// use, for the state kept per application on a request's path (the
// balancer's counters, the router's routable lists).
package perapp

import (
	"sync"
	"sync/atomic"
)

// Map maps application names to a *T made on first use. It is
// copy-on-write: apps are added rarely and read on every request, and a
// plain map read is the cheapest lookup there is. The zero value is ready
// to use; it is safe for concurrent use.
type Map[T any] struct {
	m  atomic.Pointer[map[string]*T]
	mu sync.Mutex
}

// Get returns app's value, making it if needed.
func (p *Map[T]) Get(app string) *T {
	if v := p.Lookup(app); v != nil {
		return v
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	old := p.m.Load()
	if old != nil && (*old)[app] != nil {
		return (*old)[app]
	}
	next := make(map[string]*T, 1)
	if old != nil {
		for k, v := range *old {
			next[k] = v
		}
	}
	v := new(T)
	next[app] = v
	p.m.Store(&next)
	return v
}

// Lookup returns app's value, or nil if it has none.
func (p *Map[T]) Lookup(app string) *T {
	if m := p.m.Load(); m != nil {
		return (*m)[app]
	}
	return nil
}

// Snapshot returns the map as it is: it must not be modified.
func (p *Map[T]) Snapshot() map[string]*T {
	if m := p.m.Load(); m != nil {
		return *m
	}
	return nil
}

// DeleteFunc removes the apps for which del returns true, in one copy of
// the map. A value taken by Get or Lookup before is the caller's still;
// the next Get of a removed app makes a new one.
func (p *Map[T]) DeleteFunc(del func(app string, v *T) bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	old := p.m.Load()
	if old == nil {
		return
	}
	var next map[string]*T
	for k, v := range *old {
		if !del(k, v) {
			continue
		}
		if next == nil {
			next = make(map[string]*T, len(*old))
			for k, v := range *old {
				next[k] = v
			}
		}
		delete(next, k)
	}
	if next != nil {
		p.m.Store(&next)
	}
}
