// Package ratelimit is the gateways' local rate limiter: GCRA (the
// generic cell rate algorithm, a token bucket kept as one time per key)
// per key, in shards, with a bound on the keys it holds.
package ratelimit

import (
	"sync"
	"sync/atomic"
)

// shards is the number of a Limiter's shards: keys spread over them by
// their hash, so that requests of different keys seldom wait on one
// another's lock.
const shards = 64

// DefaultMaxKeys is the most keys a Limiter holds when its MaxKeys is 0:
// 100,000, some 3 MB at most.
const DefaultMaxKeys = 100_000

// A Limiter passes, for each key, burst requests at once and then one
// every interval: the rate. Keys are 64-bit hashes (a caller hashes its
// strings, so that a decision copies nothing). Each key holds one time,
// its theoretical arrival time (TAT): a key whose TAT has passed is full
// and is the same as a key not held, which is what makes eviction of the
// idle keys exact. Safe for concurrent use; it starts nothing.
type Limiter struct {
	interval int64 // nanoseconds between two requests at the rate
	tau      int64 // burst × interval: how far ahead of now a TAT may be
	perShard int
	shards   [shards]shard
	single   atomic.Int64 // the TAT of Single's one key, lock-free
}

type shard struct {
	mu  sync.Mutex
	tat map[uint64]int64
	_   [40]byte // a shard's lock on a cache line of its own
}

// New returns a Limiter of burst requests at once then one every
// interval nanoseconds (both at least 1), holding at most maxKeys keys
// (0: DefaultMaxKeys).
func New(interval int64, burst, maxKeys int) *Limiter {
	if maxKeys <= 0 {
		maxKeys = DefaultMaxKeys
	}
	l := &Limiter{interval: max(interval, 1), perShard: max(1, (maxKeys+shards-1)/shards)}
	l.tau = l.interval * int64(max(burst, 1))
	for i := range l.shards {
		l.shards[i].tat = map[uint64]int64{}
	}
	return l
}

// A Decision is the outcome of one request.
type Decision struct {
	// Allowed says the request passes.
	Allowed bool
	// Remaining is how many more requests of the key would pass now.
	Remaining int
	// RetryAfter, for a request refused, is how long (nanoseconds) until
	// one would pass.
	RetryAfter int64
}

// Allow decides a request of key at now (nanoseconds on a monotonic
// clock). It allocates nothing once key is held; a new key may grow its
// shard's map. When a shard is full it first drops its keys whose TAT
// has passed (they are full buckets: exact); when none has, it drops an
// eighth of its keys (which then start full again, a burst early at
// worst), so that a flood of new keys scans a full shard once every
// eighth of it, not at each key.
func (l *Limiter) Allow(key uint64, now int64) Decision {
	s := &l.shards[key%shards]
	s.mu.Lock()
	tat, held := s.tat[key]
	d, next := l.decide(tat, now)
	if d.Allowed {
		if !held && len(s.tat) >= l.perShard {
			s.evict(now)
		}
		s.tat[key] = next
	}
	s.mu.Unlock()
	return d
}

// Single decides a request of a limiter with one key (an app's whole
// traffic) without a lock: a compare-and-swap on its TAT.
func (l *Limiter) Single(now int64) Decision {
	for {
		tat := l.single.Load()
		d, next := l.decide(tat, now)
		if !d.Allowed || l.single.CompareAndSwap(tat, next) {
			return d
		}
	}
}

// decide is GCRA: the request passes when its TAT, moved one interval
// on, is at most tau ahead of now.
func (l *Limiter) decide(tat, now int64) (Decision, int64) {
	next := max(tat, now) + l.interval
	ahead := next - now
	if ahead > l.tau {
		return Decision{RetryAfter: ahead - l.tau}, tat
	}
	return Decision{Allowed: true, Remaining: int((l.tau - ahead) / l.interval)}, next
}

// evictShare is the share of a full shard's keys dropped when none is
// idle: one in evictShare.
const evictShare = 8

// evict drops the idle keys of a full shard, or an eighth of its keys
// (one at least) when none is.
func (s *shard) evict(now int64) {
	Evict(s.tat, func(tat int64) bool { return tat <= now })
}

// Evict drops the keys of a full map that idle says are idle or, when
// none is, an eighth of its keys (one at least), so that a flood of new
// keys does not scan a full map for each: the bound on a limiter's keys
// (the shared limits' leases too).
func Evict[V any](m map[uint64]V, idle func(V) bool) {
	n := len(m)
	for k, v := range m {
		if idle(v) {
			delete(m, k)
		}
	}
	if len(m) < n {
		return
	}
	drop := max(1, n/evictShare)
	for k := range m {
		if drop == 0 {
			return
		}
		delete(m, k)
		drop--
	}
}

// Keys returns the number of keys held.
func (l *Limiter) Keys() int {
	n := 0
	for i := range l.shards {
		s := &l.shards[i]
		s.mu.Lock()
		n += len(s.tat)
		s.mu.Unlock()
	}
	return n
}
