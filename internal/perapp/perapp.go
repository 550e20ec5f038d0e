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
