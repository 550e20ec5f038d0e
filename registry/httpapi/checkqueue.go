package httpapi

import (
	"net/netip"
	"sync"
	"time"
)

// The scheduling of bcrypt checks of credentials not yet known: who gets
// a slot next, how long a request waits for one, and how refusals are
// paid for. The authenticator (auth.go) asks for a turn before a check and
// says how the check went after it.
//
// Fairness: requests that need a check wait in a queue of their client
// address (IPv6 addresses by /64, the block one host is given), and the
// queues are served in turn, one check each, as slots free up: the next
// check is the waiting address's that was served least recently (a new
// address first). So a flood
// of wrong passwords from one address holds at most the check in progress
// when another address's first check arrives: that check starts within one
// check's time (a few tens of milliseconds at bcrypt's default cost).
//
// Refusals: after a check that refused the credentials, its address rests
// CheckRefusedRest times as long as the check took before its next check
// starts; the slot itself is free at once for other addresses. A flood
// from one address so holds a fifth of a slot's bcrypt time, as before,
// and no longer blocks anyone else. A flood from k addresses at once holds
// up to k/5 of the slots, and never more than the slots:
// max(1, GOMAXPROCS/4) checks at once.
//
// Bounds: a request waits at most CheckMaxWait for its turn, then gets 503
// with Retry-After; an address holds at most CheckQueuePerAddress waiting
// checks, and at most CheckQueueAddresses addresses are queued, resting
// or remembered as served (the idle ones given up first when room is
// needed), so that a flood's excess gets 503 at once instead of memory.

// Defaults of the check scheduling.
const (
	// CheckMaxWait is how long a request waits for its credentials'
	// check to start: long enough for a few other addresses' checks
	// ahead of it, short of a client's read timeout.
	CheckMaxWait = 2 * time.Second
	// CheckQueuePerAddress is how many checks of distinct credentials one
	// client address may have waiting.
	CheckQueuePerAddress = 4
	// CheckQueueAddresses is how many client addresses the queue holds
	// at once: with checks waiting, resting after a refusal, or served
	// before and remembered so (those given up first for room).
	CheckQueueAddresses = 4096
	// CheckRefusedRest is how many times a refusing check's own duration
	// its address waits before its next check.
	CheckRefusedRest = 4
)

// checkClock is the check scheduling's time: the system's, or a test's
// that moves when told.
type checkClock interface {
	Now() time.Time
	// AfterFunc calls f in its own goroutine after d, unless the returned
	// stop is called first.
	AfterFunc(d time.Duration, f func()) (stop func() bool)
}

type systemCheckClock struct{}

func (systemCheckClock) Now() time.Time { return time.Now() }

func (systemCheckClock) AfterFunc(d time.Duration, f func()) func() bool {
	return time.AfterFunc(d, f).Stop
}

// checkQueue hands out the bcrypt slots: in turn across client addresses,
// within a wait bound, with each address resting after its refusals.
type checkQueue struct {
	clock    checkClock
	slots    int           // checks at once
	maxWait  time.Duration // longest wait for a turn
	perAddr  int           // waiting checks per address
	maxAddrs int           // addresses queued or resting
	rest     time.Duration // multiplies a refusing check's duration

	mu      sync.Mutex
	running int
	addrs   map[netip.Addr]*addrQueue
	ring    []*addrQueue // addresses with waiting checks, in the order they came
	served  uint64       // turns given so far
}

// addrQueue is one client address's waiting checks and rest.
type addrQueue struct {
	addr      netip.Addr
	waiting   []*turn
	running   int    // its checks in progress, which keep it in the table
	served    uint64 // q.served when it was last given a turn; 0: never
	restUntil time.Time
	resting   bool // a timer will dispatch at restUntil
}

// turn is one request's wait for a slot: granted is set before done
// closes.
type turn struct {
	done    chan struct{}
	granted bool
	stop    func() bool // the wait bound's timer
}

func newCheckQueue(slots int) *checkQueue {
	return &checkQueue{clock: systemCheckClock{}, slots: slots, maxWait: CheckMaxWait, perAddr: CheckQueuePerAddress,
		maxAddrs: CheckQueueAddresses, rest: CheckRefusedRest, addrs: map[netip.Addr]*addrQueue{}}
}

// clientKey is the address a client's checks queue under: IPv4 as is,
// IPv6 by its /64.
func clientKey(a netip.Addr) netip.Addr {
	a = a.Unmap()
	if a.Is6() {
		if p, err := a.Prefix(64); err == nil {
			return p.Addr()
		}
	}
	return a
}

// acquire waits for a slot for a check of a client at addr, at most
// maxWait. It reports false when none was given: the address's queue (or
// the table of addresses) was full, or the wait ran out. After a true,
// the caller runs the check and calls release.
func (q *checkQueue) acquire(addr netip.Addr) bool {
	key := clientKey(addr)
	q.mu.Lock()
	aq := q.addrs[key]
	if aq == nil {
		if len(q.addrs) >= q.maxAddrs && !q.dropIdle() {
			q.mu.Unlock()
			return false
		}
		aq = &addrQueue{addr: key}
		q.addrs[key] = aq
	}
	if len(aq.waiting) >= q.perAddr {
		q.mu.Unlock()
		return false
	}
	t := &turn{done: make(chan struct{})}
	aq.waiting = append(aq.waiting, t)
	if len(aq.waiting) == 1 {
		q.ring = append(q.ring, aq)
	}
	q.dispatch()
	if !t.granted {
		t.stop = q.clock.AfterFunc(q.maxWait, func() { q.expire(aq, t) })
	}
	q.mu.Unlock()
	<-t.done
	return t.granted
}

// full reports whether a check of a client at addr would be refused at
// once, its address's queue being full: the flood's excess is answered
// without the authenticator's write lock, which known clients' reads
// would wait behind.
func (q *checkQueue) full(addr netip.Addr) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	aq := q.addrs[clientKey(addr)]
	return aq != nil && len(aq.waiting) >= q.perAddr
}

// release gives the slot back after a check of a client at addr that took
// took; refused makes the address rest.
func (q *checkQueue) release(addr netip.Addr, refused bool, took time.Duration) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.running--
	key := clientKey(addr)
	if aq := q.addrs[key]; aq != nil {
		aq.running--
		defer q.forgetIfIdle(aq)
	}
	if refused && q.rest > 0 {
		q.restAfterRefusal(key, took)
	}
	q.dispatch()
}

// restAfterRefusal makes the address at key rest q.rest times took. An
// address the table has no room for does not rest: only a flood from more
// addresses than the table holds gets that far. The caller holds mu.
func (q *checkQueue) restAfterRefusal(key netip.Addr, took time.Duration) {
	aq := q.addrs[key]
	if aq == nil {
		if len(q.addrs) >= q.maxAddrs && !q.dropIdle() {
			return
		}
		aq = &addrQueue{addr: key}
		q.addrs[key] = aq
	}
	until := q.clock.Now().Add(q.rest * took)
	if until.After(aq.restUntil) {
		aq.restUntil = until
	}
	if !aq.resting {
		aq.resting = true
		q.clock.AfterFunc(q.rest*took, func() { q.restEnded(aq) })
	}
}

// restEnded dispatches when an address's rest is over (or arms the timer
// again when a later refusal lengthened it).
func (q *checkQueue) restEnded(aq *addrQueue) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if left := aq.restUntil.Sub(q.clock.Now()); left > 0 {
		q.clock.AfterFunc(left, func() { q.restEnded(aq) })
		return
	}
	aq.resting = false
	q.forgetIfIdle(aq)
	q.dispatch()
}

// expire ends a turn still waiting when the wait bound passes.
func (q *checkQueue) expire(aq *addrQueue, t *turn) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for i, w := range aq.waiting {
		if w == t {
			aq.waiting = append(aq.waiting[:i], aq.waiting[i+1:]...)
			if len(aq.waiting) == 0 {
				q.leaveRing(aq)
			}
			close(t.done)
			return
		}
	}
}

// dispatch grants free slots to the first waiting turn of the address
// served least recently, skipping the addresses that rest. The caller
// holds mu.
func (q *checkQueue) dispatch() {
	now := q.clock.Now()
	for q.running < q.slots && len(q.ring) > 0 {
		var aq *addrQueue
		for _, r := range q.ring {
			if !r.resting && !now.Before(r.restUntil) && (aq == nil || r.served < aq.served) {
				aq = r
			}
		}
		if aq == nil {
			return
		}
		t := aq.waiting[0]
		aq.waiting = aq.waiting[1:]
		q.served++
		aq.served = q.served
		aq.running++
		q.running++
		if len(aq.waiting) == 0 {
			q.leaveRing(aq)
		}
		t.granted = true
		if t.stop != nil {
			t.stop()
		}
		close(t.done)
	}
}

// leaveRing takes aq, which has no waiting turn left, out of the ring.
func (q *checkQueue) leaveRing(aq *addrQueue) {
	for i, r := range q.ring {
		if r == aq {
			q.ring = append(q.ring[:i], q.ring[i+1:]...)
			break
		}
	}
	q.forgetIfIdle(aq)
}

// forgetIfIdle drops an address that neither waits, checks nor rests,
// and was never served. One that was is kept, with its place in turn,
// until the table needs room (dropIdle): forgotten, it would come back as
// a new address, first in turn, and a flood from many addresses whose
// waits run out (or that waits out each rest) would be new at each guess,
// ahead of a client never seen.
func (q *checkQueue) forgetIfIdle(aq *addrQueue) {
	if len(aq.waiting) == 0 && aq.running == 0 && !aq.resting && aq.served == 0 && q.addrs[aq.addr] == aq {
		delete(q.addrs, aq.addr)
	}
}

// dropIdle makes room in a full table by forgetting the addresses that
// have nothing waiting (resting, or remembered as served): their rest and
// their place in turn are lost, which only a flood from more addresses
// than the table holds gets to. It reports
// whether room was made.
func (q *checkQueue) dropIdle() bool {
	for k, aq := range q.addrs {
		if len(aq.waiting) == 0 && aq.running == 0 {
			delete(q.addrs, k) // its rest timer finds it gone
		}
	}
	return len(q.addrs) < q.maxAddrs
}
