package redisrate

import (
	"sync"
	"time"

	"github.com/eurekagate/eurekagate/internal/ratelimit"
)

// shards is the number of a Limit's shards, as the local limiter's.
const shards = 64

// leaseTTL is how long granted requests may wait to be used: a lease
// older is dropped, so that requests Redis granted long ago do not pass
// on top of a burst it grants now.
const leaseTTL = int64(time.Second)

// maxLease is the most requests of one key asked for at a time.
const maxLease = 1000

// leaseWindow is how much of the rate a lease holds at most (10 ms of
// it): a larger lease asks Redis less often and strays further from the
// limit.
const leaseWindow = int64(10 * time.Millisecond)

// A Limit is one shared limit's leases, on this gateway: per key, the
// requests it may still pass of those Redis granted it. A request is
// decided on them alone (Allow); a key whose lease runs low is refilled
// by the Store's workers, in the background, up to a lease.
//
// Its accuracy: a key with no requests left passes up to a lease more on
// credit while it is refilled (a key new to this gateway among them), and
// its next grants pay that credit back first, so that a gateway passes at
// most a lease more than Redis granted it, and N gateways at most N
// leases more than the limit; a lease unused for a second is dropped, and
// the requests it held are lost to the limit (fewer pass, never more).
type Limit struct {
	store    *Store
	prefix   string // the Redis keys' prefix
	interval int64  // nanoseconds between two requests at the rate
	burst    int
	lease    int64 // the requests a key is refilled up to
	low      int64 // a key with this many left or fewer is refilled
	closed   bool  // Redis unreachable and no lease left: refuse
	perShard int
	shards   [shards]shard
}

type shard struct {
	mu sync.Mutex
	m  map[uint64]*entry
	_  [40]byte
}

// An entry is one key's lease, under its shard's lock.
type entry struct {
	key     uint64
	tokens  int64 // requests granted and not yet passed; below 0, passed on credit
	pending bool  // a refill is asked for
	until   int64 // refused until then: Redis had no room
	granted int64 // when the last grant arrived
	used    int64 // the last request, for eviction
}

// NewLimit returns the leases of a limit of burst requests at once then
// one every interval nanoseconds, its keys in Redis named prefix then
// the key's hash, holding at most maxKeys keys (0:
// ratelimit.DefaultMaxKeys). closed: when Redis cannot be reached and a
// key has no lease left, its requests are refused (Allow's unavailable)
// rather than passed.
func (s *Store) NewLimit(prefix string, interval int64, burst, maxKeys int, closed bool) *Limit {
	if maxKeys <= 0 {
		maxKeys = ratelimit.DefaultMaxKeys
	}
	interval, burst = max(interval, 1), max(burst, 1)
	l := &Limit{store: s, prefix: prefix, interval: interval, burst: burst, closed: closed,
		perShard: max(1, (maxKeys+shards-1)/shards)}
	l.lease = min(max(1, leaseWindow/interval), max(1, int64(burst)/4), maxLease)
	l.low = l.lease / 2
	for i := range l.shards {
		l.shards[i].m = map[uint64]*entry{}
	}
	return l
}

// Lease is the requests of one key this gateway asks Redis for at a
// time, and the most it passes on credit.
func (l *Limit) Lease() int64 { return l.lease }

// Allow decides a request of key at now (nanoseconds on the Store's
// clock) without waiting on Redis: unavailable reports Redis unreachable
// with no lease left for a limit that fails closed. It allocates nothing
// once the key is held.
func (l *Limit) Allow(key uint64, now int64) (d ratelimit.Decision, unavailable bool) {
	s := &l.shards[key%shards]
	s.mu.Lock()
	e := s.m[key]
	if e == nil {
		if len(s.m) >= l.perShard {
			s.evict(now)
		}
		e = &entry{key: key}
		s.m[key] = e
	}
	e.used = now
	if e.tokens > 0 && now-e.granted > leaseTTL {
		e.tokens = 0
	}
	up := l.store.Up()
	switch {
	case e.tokens > 0:
		e.tokens--
		d = ratelimit.Decision{Allowed: true, Remaining: int(e.tokens)}
	case !up:
		// Redis unreachable, nothing left of what it granted: the
		// limit fails open (passes) or closed.
		d.Allowed, unavailable = !l.closed, l.closed
	case now < e.until:
		d.RetryAfter = e.until - now
	case e.tokens > -l.lease:
		e.tokens--
		d.Allowed = true
	default:
		d.RetryAfter = l.interval // its credit is spent: the refill asked for will tell
	}
	if up && !e.pending && e.tokens <= l.low && now >= e.until {
		e.pending = l.store.ask(refill{l: l, e: e, want: l.lease - e.tokens})
	}
	s.mu.Unlock()
	return d, unavailable
}

// apply hands a refill's answer to its key: granted requests and, when
// Redis had room for fewer than asked, the nanoseconds until it has for
// one more; failed, no answer (Redis unreachable).
func (l *Limit) apply(r refill, granted, retry int64, failed bool, now int64) {
	s := &l.shards[r.e.key%shards]
	s.mu.Lock()
	e := r.e
	e.pending = false
	if !failed {
		e.tokens += granted
		e.granted = now
		if granted < r.want {
			e.until = now + retry
		}
	}
	s.mu.Unlock()
}

// evict drops the keys of a full shard unused for leaseTTL (their
// leases are void) and not being refilled, or an eighth of its keys when
// none is (ratelimit.Evict): a key dropped with requests on credit may
// take credit again.
func (s *shard) evict(now int64) {
	ratelimit.Evict(s.m, func(e *entry) bool { return now-e.used > leaseTTL && !e.pending })
}

// Keys returns the number of keys held.
func (l *Limit) Keys() int {
	n := 0
	for i := range l.shards {
		s := &l.shards[i]
		s.mu.Lock()
		n += len(s.m)
		s.mu.Unlock()
	}
	return n
}

// Pending reports whether a refill of a key is out, for the tests that
// wait for Redis's answer.
func (l *Limit) Pending() bool {
	for i := range l.shards {
		s := &l.shards[i]
		s.mu.Lock()
		for _, e := range s.m {
			if e.pending {
				s.mu.Unlock()
				return true
			}
		}
		s.mu.Unlock()
	}
	return false
}
