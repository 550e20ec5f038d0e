package registry

import (
	"errors"
	"testing"
	"time"

	"github.com/eurekagate/eurekagate/eureka"
)

// A cancel outranks replicated writes no newer than it, for as long as the
// delta log is kept; a client's own registration outranks the cancel.
func TestCancelOutranksOlderReplicatedWrites(t *testing.T) {
	s, clock := newTestStore(t, Config{DisableSelfPreservation: true})
	i := inst("A", "x") // lastDirtyTimestamp 1000
	mustRegister(t, s, i, false)
	s.Cancel("A", "x", false)

	if err := s.Register(i, true); !errors.Is(err, ErrCancelled) {
		t.Fatalf("a replicated registration as old as the cancel: %v", err)
	}
	if res, _ := s.Renew("A", "x", RenewRequest{LastDirtyTimestamp: 1000, Replication: true}); res != RenewCancelled {
		t.Fatalf("a replicated heartbeat as old as the cancel: %v", res)
	}
	if res, _ := s.Renew("A", "x", RenewRequest{LastDirtyTimestamp: 1000}); res != RenewNotFound {
		t.Fatalf("a client heartbeat after the cancel: %v, want 404 so it re-registers", res)
	}
	newer := inst("A", "x")
	newer.LastDirtyTimestamp = 2000
	if err := s.Register(newer, true); err != nil {
		t.Fatalf("a newer replicated registration: %v", err)
	}
	s.Cancel("A", "x", true) // a replicated cancel is remembered too
	if err := s.Register(newer, true); !errors.Is(err, ErrCancelled) {
		t.Fatalf("after a replicated cancel: %v", err)
	}

	// The client itself registers again with its old data: accepted, and
	// made newer than the cancel so that peers accept its replicas.
	mustRegister(t, s, i, false)
	if got := mustGet(t, s, "A", "x").LastDirtyTimestamp; got <= 2000 {
		t.Fatalf("re-registration after a cancel keeps lastDirtyTimestamp %d", got)
	}

	// Evictions are not remembered; cancels are forgotten with the delta.
	s.Cancel("A", "x", false)
	clock.Advance(4 * time.Minute)
	s.PurgeDeltas()
	if err := s.Register(i, true); err != nil {
		t.Fatalf("a cancel older than the delta log still refuses: %v", err)
	}
	clock.Advance(2 * time.Minute)
	s.Evict()
	if _, ok := s.Get("A", "x"); ok {
		t.Fatal("not evicted")
	}
	if err := s.Register(i, true); err != nil {
		t.Fatalf("an evicted instance cannot come back: %v", err)
	}
}

// Smaller differences from Eureka, now as Eureka does: the lease duration
// comes from the incoming registration even when the kept copy wins, and
// an expired override that was not swept yet counts as absent.
func TestReregisterDurationAndExpiredOverride(t *testing.T) {
	s, clock := newTestStore(t, Config{DisableSelfPreservation: true})
	kept := inst("A", "x")
	kept.LastDirtyTimestamp = 2000
	mustRegister(t, s, kept, false)
	older := inst("A", "x") // lastDirtyTimestamp 1000: the kept copy wins
	older.LeaseInfo.DurationInSecs = 10
	mustRegister(t, s, older, false)
	clock.Advance(11 * time.Second)
	if ev := s.Evict(); len(ev) != 1 {
		t.Fatalf("a 10 s lease (from the incoming body) was not evicted after 11 s: %v", ev)
	}

	mustRegister(t, s, inst("A", "y"), false)
	s.SetStatus("A", "y", eureka.StatusOutOfService, 0, false)
	clock.Advance(61 * time.Minute)
	s.Renew("A", "y", RenewRequest{})
	v := s.Version()
	s.DeleteStatusOverride("A", "y", eureka.StatusUp, 0, false)
	if s.Version() != v {
		t.Error("deleting an expired override recorded a change")
	}
}
