package httpapi

import (
	"net/netip"
	"sync"
	"testing"
	"time"

	"github.com/eurekagate/eurekagate/internal/testkit"
)

// timerClock is a checkClock that moves only when told to, firing the
// timers that fall due as it moves.
type timerClock struct {
	mu     sync.Mutex
	now    time.Time
	timers []*fakeTimer
}

type fakeTimer struct {
	at      time.Time
	f       func()
	stopped bool
}

func newTimerClock() *timerClock { return &timerClock{now: testkit.NewFakeClock().Now()} }

func (c *timerClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *timerClock) AfterFunc(d time.Duration, f func()) func() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := &fakeTimer{at: c.now.Add(d), f: f}
	c.timers = append(c.timers, t)
	return func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		was := !t.stopped
		t.stopped = true
		return was
	}
}

// Advance moves the clock by d, running each timer that falls due, in
// the order they fall due, at its time.
func (c *timerClock) Advance(d time.Duration) {
	c.mu.Lock()
	end := c.now.Add(d)
	for {
		var due *fakeTimer
		for _, t := range c.timers {
			if !t.stopped && !t.at.After(end) && (due == nil || t.at.Before(due.at)) {
				due = t
			}
		}
		if due == nil {
			break
		}
		due.stopped = true
		if due.at.After(c.now) {
			c.now = due.at
		}
		c.mu.Unlock()
		due.f()
		c.mu.Lock()
	}
	c.now = end
	c.mu.Unlock()
}

// queueTest drives a checkQueue of one slot with the fake clock: each
// request is a goroutine that reports when it got its turn (or none).
type queueTest struct {
	t     *testing.T
	q     *checkQueue
	clock *timerClock
	got   chan grant
	left  sync.WaitGroup // requests not answered yet
}

type grant struct {
	addr    netip.Addr
	n       int
	granted bool
	at      time.Time
}

func newQueueTest(t *testing.T) *queueTest {
	clock := newTimerClock()
	q := newCheckQueue(1)
	q.clock = clock
	qt := &queueTest{t: t, q: q, clock: clock, got: make(chan grant, 64)}
	t.Cleanup(func() {
		qt.clock.Advance(CheckMaxWait) // the waits left end at their bound
		qt.left.Wait()
	})
	return qt
}

var (
	addrA = netip.MustParseAddr("127.0.0.1")
	addrB = netip.MustParseAddr("127.0.0.2")
	addrC = netip.MustParseAddr("127.0.0.3")
)

// ask starts request n of addr and returns once it waits or has its
// answer.
func (qt *queueTest) ask(addr netip.Addr, n int) {
	before := qt.waiting(addr)
	answered := make(chan struct{})
	qt.left.Add(1)
	go func() {
		defer qt.left.Done()
		ok := qt.q.acquire(addr)
		qt.got <- grant{addr, n, ok, qt.clock.Now()}
		close(answered)
	}()
	testkit.Eventually(qt.t, 5*time.Second, "the request to queue or be answered", func() bool {
		select {
		case <-answered:
			return true
		default:
			return qt.waiting(addr) > before
		}
	})
}

func (qt *queueTest) waiting(addr netip.Addr) int {
	qt.q.mu.Lock()
	defer qt.q.mu.Unlock()
	if aq := qt.q.addrs[clientKey(addr)]; aq != nil {
		return len(aq.waiting)
	}
	return 0
}

// next returns the next answer.
func (qt *queueTest) next() grant {
	qt.t.Helper()
	select {
	case g := <-qt.got:
		return g
	case <-time.After(5 * time.Second):
		qt.t.Fatal("no request was answered")
		return grant{}
	}
}

// none fails if a request has been answered.
func (qt *queueTest) none(what string) {
	qt.t.Helper()
	select {
	case g := <-qt.got:
		qt.t.Fatalf("%s: request %d of %v answered (granted %v)", what, g.n, g.addr, g.granted)
	default:
	}
}

// check runs a check of took for a granted request and releases its
// slot.
func (qt *queueTest) check(g grant, refused bool, took time.Duration) {
	qt.t.Helper()
	if !g.granted {
		qt.t.Fatalf("request %d of %v got no turn", g.n, g.addr)
	}
	qt.clock.Advance(took)
	qt.q.release(g.addr, refused, took)
}

// A flood of wrong passwords from one address delays another address's
// first check by at most the check in progress: the queues are served in
// turn, and an address that was refused rests while others are served.
func TestCheckQueueServesAddressesInTurn(t *testing.T) {
	const took = 50 * time.Millisecond
	for _, rest := range []time.Duration{0, CheckRefusedRest} {
		qt := newQueueTest(t)
		qt.q.rest = rest
		qt.ask(addrA, 0)
		first := qt.next() // the slot was free
		for n := 1; n < CheckQueuePerAddress+1; n++ {
			qt.ask(addrA, n) // the flood's next guesses wait
		}
		qt.clock.Advance(took / 2)
		asked := qt.clock.Now()
		qt.ask(addrB, 0)
		qt.none("while the slot checks A's guess")
		qt.check(first, true, took/2)
		g := qt.next()
		if g.addr != addrB {
			t.Fatalf("rest %d: after A's check the slot went to request %d of %v, want B's first", rest, g.n, g.addr)
		}
		if waited := g.at.Sub(asked); waited > took {
			t.Errorf("rest %d: B waited %v, more than a check (%v)", rest, waited, took)
		}
		qt.check(g, false, took)
		if rest == 0 {
			// No rest: A's next guess is served right after B's.
			if g := qt.next(); g.addr != addrA || !g.granted {
				t.Fatalf("then: request %d of %v (granted %v), want A's", g.n, g.addr, g.granted)
			}
		}
	}
}

// An address that was refused waits CheckRefusedRest times the check's
// duration before its next check, while the slot is free: a flood from
// one address holds a fifth of the slot's time.
func TestCheckQueueRestsARefusedAddress(t *testing.T) {
	const took = 40 * time.Millisecond
	qt := newQueueTest(t)
	qt.ask(addrA, 0)
	g := qt.next()
	qt.ask(addrA, 1)
	qt.check(g, true, took)
	qt.none("during A's rest")
	qt.clock.Advance(CheckRefusedRest*took - time.Millisecond)
	qt.none("a millisecond before A's rest ends")
	qt.clock.Advance(time.Millisecond)
	g = qt.next()
	if g.n != 1 || !g.granted {
		t.Fatalf("after the rest: request %d granted %v", g.n, g.granted)
	}
	// Checks that pass make no rest.
	qt.ask(addrA, 2)
	qt.check(g, false, took)
	if g := qt.next(); g.n != 2 || !g.granted {
		t.Fatalf("after a check that passed: request %d granted %v", g.n, g.granted)
	}
}

// A request waits at most the wait bound for its turn, then has none.
func TestCheckQueueWaitIsBounded(t *testing.T) {
	qt := newQueueTest(t)
	qt.ask(addrA, 0)
	held := qt.next()
	qt.ask(addrB, 0)
	qt.clock.Advance(CheckMaxWait - time.Millisecond)
	qt.none("before the wait bound")
	qt.clock.Advance(time.Millisecond)
	if g := qt.next(); g.addr != addrB || g.granted {
		t.Fatalf("at the wait bound: request %d of %v granted %v, want B's refused", g.n, g.addr, g.granted)
	}
	if n := qt.waiting(addrB); n != 0 {
		t.Errorf("%d turns of B still queued", n)
	}
	// The slot, freed later, serves whoever waits then.
	qt.ask(addrC, 0)
	qt.check(held, false, time.Millisecond)
	if g := qt.next(); g.addr != addrC || !g.granted {
		t.Fatalf("then: request %d of %v granted %v, want C's", g.n, g.addr, g.granted)
	}
}

// An address may have CheckQueuePerAddress checks waiting, and the table
// may hold maxAddrs addresses: beyond them a request is refused at once,
// without waiting, and others still queue.
func TestCheckQueueBounds(t *testing.T) {
	qt := newQueueTest(t)
	qt.q.maxAddrs = 2
	qt.ask(addrA, 0)
	held := qt.next()
	for n := 1; n <= CheckQueuePerAddress; n++ {
		qt.ask(addrA, n)
	}
	qt.none("within A's queue")
	qt.ask(addrA, CheckQueuePerAddress+1)
	if g := qt.next(); g.n != CheckQueuePerAddress+1 || g.granted {
		t.Fatalf("beyond A's queue: request %d granted %v, want refused at once", g.n, g.granted)
	}
	qt.ask(addrB, 0)
	qt.none("B, the table's second address")
	qt.ask(addrC, 0)
	if g := qt.next(); g.addr != addrC || g.granted {
		t.Fatalf("a third address: %v granted %v, want refused at once", g.addr, g.granted)
	}
	// The waits end at their bound; a resting address with nothing
	// waiting then gives its room up to a new one.
	qt.clock.Advance(CheckMaxWait)
	for range CheckQueuePerAddress + 1 {
		if g := qt.next(); g.granted {
			t.Fatalf("request %d of %v granted while the slot is held", g.n, g.addr)
		}
	}
	qt.check(held, true, time.Millisecond) // A rests, nothing waiting
	qt.ask(addrB, 1)
	if g := qt.next(); g.addr != addrB || !g.granted {
		t.Fatalf("B after A's refusal: granted %v", g.granted)
	}
	qt.ask(addrC, 1) // the table holds A (resting) and B (checking)
	qt.none("C, queued while B checks")
	qt.clock.Advance(CheckMaxWait)
	if g := qt.next(); g.addr != addrC || g.granted {
		t.Fatalf("C at the wait bound: granted %v", g.granted)
	}
}

// IPv6 clients queue by their /64, IPv4-mapped ones as IPv4.
func TestClientKey(t *testing.T) {
	for in, want := range map[string]string{
		"2001:db8:1:2:3:4:5:6": "2001:db8:1:2::",
		"::ffff:10.0.0.1":      "10.0.0.1",
		"127.0.0.2":            "127.0.0.2",
		"::1":                  "::",
	} {
		if got := clientKey(netip.MustParseAddr(in)); got != netip.MustParseAddr(want) {
			t.Errorf("%s: %v, want %s", in, got, want)
		}
	}
}
