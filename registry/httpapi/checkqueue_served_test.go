package httpapi

import (
	"net/netip"
	"testing"
	"time"
)

// An address that was served keeps its place behind new ones after its
// rest ends or its wait runs out with nothing left waiting: it does not
// come back as a new address. Else a flood from many addresses, whose
// waits run out while the slot serves the others (or that waits out each
// rest before its next guess), is new again at each guess, and a client
// never seen waits behind all of it: 0.9 s for a check of 60 ms against
// 49 addresses of 127.0.0.0/8, where the bound is one check.
func TestCheckQueueServedAddressIsNotNewAgain(t *testing.T) {
	const took = 10 * time.Millisecond
	addrL := netip.MustParseAddr("127.0.1.1") // a client never seen
	for _, how := range []string{"rest ended", "wait ran out"} {
		t.Run(how, func(t *testing.T) {
			qt := newQueueTest(t)
			qt.ask(addrA, 0)
			a := qt.next()
			qt.check(a, true, took) // A refused: it rests
			qt.ask(addrB, 0)
			b := qt.next() // B holds the slot from here on
			if how == "rest ended" {
				qt.clock.Advance(CheckRefusedRest * took)
				qt.ask(addrA, 1) // A's next guess, once its rest is over
			} else {
				qt.ask(addrA, 1)
				qt.clock.Advance(CheckMaxWait)
				if g := qt.next(); g.addr != addrA || g.granted {
					t.Fatalf("A's guess at the wait bound: %v granted %v", g.addr, g.granted)
				}
				qt.ask(addrA, 2) // and the one after
			}
			qt.ask(addrL, 0)
			qt.check(b, false, took)
			if g := qt.next(); g.addr != addrL || !g.granted {
				t.Fatalf("after B's check the slot went to request %d of %v, want the new client's first", g.n, g.addr)
			}
		})
	}
}
