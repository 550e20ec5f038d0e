package registry

import (
	"sync"
	"sync/atomic"
)

// stream delivers the change log to the Store's own consumers (views,
// counters, logs) and to subscribers, in version order, after the write
// lock is released, and wakes watchers.
//
// A writer records its change under the write lock, releases it, and then
// delivers: whoever holds deliverMu delivers every change recorded so far,
// so changes reach consumers exactly once and in order, and a write returns
// only once its change has been delivered (a registration is routable on
// the very next Instances call).
type stream struct {
	deliverMu sync.Mutex
	delivered atomic.Uint64
	// wake is closed and replaced at each delivery: a watcher waits on the
	// channel current when it looked, so waiting costs the Store nothing per
	// watcher (Consul's WatchSet idea).
	wake atomic.Pointer[chan struct{}]

	subs subscribers[Change]
}

func (st *stream) init() {
	ch := make(chan struct{})
	st.wake.Store(&ch)
}

// Subscribe calls f with every change from now on, in version order, one
// at a time, after the write lock is released and before the write
// returns. f must be quick and must not block or write to the Store: it
// runs on the writer's goroutine (a replication queue, a counter, a log
// line). The returned function removes the subscription.
func (s *Store) Subscribe(f func(Change)) (unsubscribe func()) {
	return s.stream.subs.add(f)
}

// Changed returns a channel closed at the next delivery of a change
// (notify.Notifier): the channel the watchers wait on, so that it costs
// the Store nothing per change or per waiter. Remote regions' changes
// do not close it.
func (s *Store) Changed() <-chan struct{} { return *s.stream.wake.Load() }

// deliver hands every recorded but undelivered change to the consumers.
// The caller holds no Store lock.
func (s *Store) deliver() {
	st := &s.stream
	if st.delivered.Load() == s.version.Load() {
		return
	}
	st.deliverMu.Lock()
	defer st.deliverMu.Unlock()
	from := st.delivered.Load()
	s.mu.RLock()
	pending, _ := s.changes.after(from, s.version.Load())
	s.mu.RUnlock()
	if len(pending) == 0 {
		return
	}
	subs := st.subs.load()
	s.views.apply(pending)
	for n := range pending {
		c := &pending[n]
		s.counters.apply(c)
		s.logChange(c)
		for _, sub := range subs {
			sub.f(*c)
		}
	}
	st.delivered.Store(pending[len(pending)-1].Version)
	next := make(chan struct{})
	close(*st.wake.Swap(&next))
}
