package redisrate

import (
	"errors"
	"testing"
	"time"
)

// leaseStore is a Store whose asks the test answers, on a clock it sets.
func leaseStore() (*Store, *int64) {
	now := new(int64)
	return newStore(Config{Now: func() int64 { return *now }}), now
}

// answer takes the one refill asked for and grants it granted requests
// (and retry, when fewer than it wanted).
func answer(t *testing.T, s *Store, granted int64, retry time.Duration, now int64) refill {
	t.Helper()
	select {
	case r := <-s.asks:
		r.l.apply(r, granted, int64(retry), false, now)
		return r
	default:
		t.Fatal("no refill asked for")
		return refill{}
	}
}

func noAsk(t *testing.T, s *Store) {
	t.Helper()
	if len(s.asks) != 0 {
		t.Fatalf("%d refills asked for, want none", len(s.asks))
	}
}

// A key new to the gateway passes on credit up to a lease while its
// refill is asked for; the grant pays the credit back first, and the key
// is refilled once half its lease is spent.
func TestLeaseCreditAndRefill(t *testing.T) {
	s, now := leaseStore()
	l := s.NewLimit("p:", int64(time.Millisecond), 100, 0, false) // 1000/s: a lease of 10 ms, 10
	if l.Lease() != 10 {
		t.Fatalf("lease %d, want 10", l.Lease())
	}
	for i := range 10 {
		if d, _ := l.Allow(7, *now); !d.Allowed {
			t.Fatalf("request %d on credit refused", i)
		}
	}
	if d, _ := l.Allow(7, *now); d.Allowed || d.RetryAfter != int64(time.Millisecond) {
		t.Fatalf("request past the credit: %+v, want refused, retry in one interval", d)
	}
	r := answer(t, s, 20, 0, *now)
	if r.want != 11 { // asked at the first request: the lease and its credit
		t.Fatalf("asked for %d, want 11", r.want)
	}
	noAsk(t, s)
	// 20 granted, 10 owed: 10 pass, and the 5th spent asks again.
	for i := range 10 {
		if d, _ := l.Allow(7, *now); !d.Allowed {
			t.Fatalf("request %d of the lease refused", i)
		}
		if want := i >= 4; (len(s.asks) == 1) != want {
			t.Fatalf("after request %d of the lease: refill asked %v, want %v", i, len(s.asks) == 1, want)
		}
	}
}

// Redis with no room: the key is refused until the time it named, with
// that time as its retry, and asks again only then.
func TestLeaseRefusedUntilRedisHasRoom(t *testing.T) {
	s, now := leaseStore()
	l := s.NewLimit("p:", int64(100*time.Millisecond), 4, 0, false) // 10/s burst 4: a lease of 1
	if d, _ := l.Allow(1, *now); !d.Allowed {
		t.Fatal("first request refused")
	}
	answer(t, s, 0, 300*time.Millisecond, *now) // the other gateways took the room
	*now += int64(100 * time.Millisecond)
	d, _ := l.Allow(1, *now)
	if d.Allowed || d.RetryAfter != int64(200*time.Millisecond) {
		t.Fatalf("during Redis's retry: %+v, want refused with 200ms left", d)
	}
	noAsk(t, s)
	*now += int64(200 * time.Millisecond)
	if d, _ := l.Allow(1, *now); d.Allowed {
		t.Fatal("a key still owing its credit passed again")
	}
	answer(t, s, 2, 0, *now) // pays the credit, one left
	if d, _ := l.Allow(1, *now); !d.Allowed {
		t.Fatal("the granted request refused")
	}
}

// A lease unused for longer than leaseTTL is dropped: the key asks anew.
func TestLeaseExpires(t *testing.T) {
	s, now := leaseStore()
	l := s.NewLimit("p:", int64(time.Millisecond), 100, 0, false)
	l.Allow(3, *now)
	answer(t, s, 11, 0, *now) // 10 left
	*now += leaseTTL + 1
	d, _ := l.Allow(3, *now)
	if !d.Allowed || d.Remaining != 0 {
		t.Fatalf("after the lease's time: %+v, want passed on credit (remaining 0)", d)
	}
	if r := answer(t, s, 0, time.Millisecond, *now); r.want != 11 {
		t.Fatalf("asked for %d, want 11", r.want)
	}
}

// Redis unreachable: a lease left is used; past it, a limit failing open
// passes, one failing closed answers unavailable; no refill is asked for
// until Redis answers again.
func TestLeaseRedisUnreachable(t *testing.T) {
	for _, closed := range []bool{false, true} {
		s, now := leaseStore()
		l := s.NewLimit("p:", int64(100*time.Millisecond), 4, 0, closed)
		l.Allow(1, *now)
		answer(t, s, 2, 0, *now) // one left
		s.failed(errors.New("dial tcp: connection refused"))
		if d, un := l.Allow(1, *now); !d.Allowed || un {
			t.Fatalf("closed %v: the lease left refused", closed)
		}
		for range 3 {
			d, un := l.Allow(1, *now)
			if d.Allowed == closed || un != closed {
				t.Fatalf("closed %v, Redis unreachable: allowed %v unavailable %v", closed, d.Allowed, un)
			}
		}
		noAsk(t, s)
		if s.Errors() != 1 || s.Up() {
			t.Fatalf("errors %d up %v, want 1 and down", s.Errors(), s.Up())
		}
		s.reachable()
		l.Allow(1, *now)
		answer(t, s, 1, 0, *now)
	}
}

// Keys are bounded: a full shard drops its idle keys first.
func TestLeaseKeysBounded(t *testing.T) {
	s, now := leaseStore()
	l := s.NewLimit("p:", int64(time.Millisecond), 100, shards, false) // one key a shard
	l.Allow(0, *now)
	<-s.asks
	*now += leaseTTL + 1
	l.Allow(shards, *now) // same shard
	if l.Keys() != 1 {
		t.Fatalf("%d keys, want 1", l.Keys())
	}
}

func TestRedact(t *testing.T) {
	raw := "redis://user:s3cret@127.0.0.1:6379/0"
	got := redact(`dial "redis://user:s3cret@127.0.0.1:6379/0": s3cret`, raw)
	if got != `dial "redis://user:xxxxx@127.0.0.1:6379/0": xxxxx` {
		t.Fatal(got)
	}
}
