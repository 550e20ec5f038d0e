package registry

import (
	"slices"
	"sync"
	"sync/atomic"
)

// subscribers is a copy-on-write list of functions: read with one atomic
// load on a write's path (none listening is a nil list), changed under a
// mutex by the rare subscribe and unsubscribe. The change stream and the
// heartbeats each keep one.
type subscribers[T any] struct {
	mu     sync.Mutex
	nextID int
	list   atomic.Pointer[[]subscription[T]]
}

type subscription[T any] struct {
	id int
	f  func(T)
}

// add appends f; the function returned removes it.
func (s *subscribers[T]) add(f func(T)) (remove func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.nextID++
	id := s.nextID
	next := append(slices.Clone(s.load()), subscription[T]{id, f})
	s.list.Store(&next)
	return func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		next := slices.DeleteFunc(slices.Clone(s.load()), func(sub subscription[T]) bool { return sub.id == id })
		if len(next) == 0 {
			s.list.Store(nil)
			return
		}
		s.list.Store(&next)
	}
}

// load returns the subscriptions, in the order they were added; nil when
// none.
func (s *subscribers[T]) load() []subscription[T] {
	if p := s.list.Load(); p != nil {
		return *p
	}
	return nil
}
