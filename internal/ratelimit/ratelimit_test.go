package ratelimit

import (
	"testing"
	"time"
)

const second = int64(time.Second)

// A burst of 5 passes at once, then one each 100 ms (10/s).
func TestBurstThenRate(t *testing.T) {
	for _, single := range []bool{false, true} {
		l := New(second/10, 5, 0)
		allow := func(now int64) Decision {
			if single {
				return l.Single(now)
			}
			return l.Allow(7, now)
		}
		now := 1000 * second
		for i := range 5 {
			d := allow(now)
			if !d.Allowed || d.Remaining != 4-i {
				t.Fatalf("single %v: request %d of the burst: %+v", single, i, d)
			}
		}
		d := allow(now)
		if d.Allowed || d.RetryAfter != second/10 {
			t.Fatalf("single %v: past the burst: %+v, want refused for 100ms", single, d)
		}
		// A flood every millisecond for 10 s passes 10 a second.
		passed := 0
		for ms := int64(1); ms <= 10_000; ms++ {
			if allow(now + ms*int64(time.Millisecond)).Allowed {
				passed++
			}
		}
		if passed != 100 {
			t.Fatalf("single %v: a 10 s flood passed %d, want 100", single, passed)
		}
	}
}

// Keys are apart: one key's flood leaves another's burst whole.
func TestKeysApart(t *testing.T) {
	l := New(second, 2, 0)
	for range 10 {
		l.Allow(1, 0)
	}
	if d := l.Allow(2, 0); !d.Allowed || d.Remaining != 1 {
		t.Fatalf("key 2 after key 1's flood: %+v", d)
	}
}

// A full limiter drops its idle keys first, and holds at most its bound.
func TestBoundedKeys(t *testing.T) {
	l := New(second, 1, shards) // one key a shard
	for k := range uint64(10 * shards) {
		l.Allow(k, 0)
	}
	if n := l.Keys(); n > shards {
		t.Fatalf("%d keys held, bound %d", n, shards)
	}
	// Key 0 is refused at 0 (if still held) but idle at 2 s: a new key
	// of its shard then drops it, and it starts full.
	l = New(second, 1, shards)
	l.Allow(0, 0)
	if l.Allow(0, 0).Allowed {
		t.Fatal("key 0's second request at once passed")
	}
	l.Allow(shards, 2*second) // same shard, full: key 0 is idle
	if n := l.Keys(); n != 1 {
		t.Fatalf("%d keys held, want 1 (key 0 dropped as idle)", n)
	}
}

// A new key in a full shard whose keys are all busy (none idle) drops an
// eighth of them, not one: a flood of new keys (a header's values, say)
// then scans the shard once every eighth of it, where it scanned it at
// each key (some 200 µs a request under the shard's lock with max_keys
// 1,000,000).
func TestBusyShardDropsAnEighth(t *testing.T) {
	const perShard = 64
	l := New(3600*second, 1, perShard*shards)
	for k := range uint64(perShard) {
		l.Allow(k*shards, 0) // all in shard 0, each busy for an hour
	}
	l.Allow(perShard*shards, 0) // shard 0 full, none idle
	if n, want := l.Keys(), perShard-perShard/8+1; n != want {
		t.Fatalf("%d keys held, want %d", n, want)
	}
	for k := range uint64(perShard/8 - 1) {
		l.Allow((perShard+1+k)*shards, 0) // room made: no key dropped
	}
	if n := l.Keys(); n != perShard {
		t.Fatalf("%d keys held after filling the room, want %d", n, perShard)
	}
}

func BenchmarkAllow(b *testing.B) {
	l := New(1, 1<<30, 0)
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		k := uint64(0)
		for pb.Next() {
			k++
			l.Allow(k%1000, 1)
		}
	})
}
