package registry

import (
	"fmt"
	"testing"
	"time"

	"github.com/eurekagate/eurekagate/eureka"
	"github.com/eurekagate/eurekagate/internal/testkit"
)

// Every kind of write records exactly one change, in order, with versions
// that increase by one; writes that alter nothing record none.
func TestChangeStreamOneChangePerWriteKind(t *testing.T) {
	s, clock := newTestStore(t, Config{DisableSelfPreservation: true})
	var got []Change
	unsubscribe := s.Subscribe(func(c Change) { got = append(got, c) })
	defer unsubscribe()

	steps := []struct {
		name string
		do   func()
		want []ChangeKind
	}{
		{"register", func() { mustRegister(t, s, inst("A", "x"), false) }, []ChangeKind{Registered}},
		{"heartbeat", func() { s.Renew("A", "x", RenewRequest{}) }, nil},
		{"re-register", func() { mustRegister(t, s, inst("A", "x"), false) }, []ChangeKind{Registered}},
		{"status override", func() { s.SetStatus("A", "x", eureka.StatusOutOfService, 0, false) }, []ChangeKind{StatusSet}},
		{"same status again", func() { s.SetStatus("A", "x", eureka.StatusOutOfService, 0, false) }, nil},
		{"delete override", func() { s.DeleteStatusOverride("A", "x", eureka.StatusUp, 0, false) }, []ChangeKind{OverrideDeleted}},
		{"delete absent override", func() { s.DeleteStatusOverride("A", "x", eureka.StatusUp, 0, false) }, nil},
		{"metadata", func() { s.UpdateMetadata("A", "x", map[string]string{"k": "v"}) }, []ChangeKind{MetadataUpdated}},
		{"heartbeat applying an override", func() {
			s.mu.Lock()
			s.setOverride("x", eureka.StatusDown, s.nowMillis())
			s.mu.Unlock()
			s.Renew("A", "x", RenewRequest{})
		}, []ChangeKind{Renewed}},
		{"replicated heartbeat carrying a newer override", func() {
			s.Renew("A", "x", RenewRequest{LastDirtyTimestamp: 9999, OverriddenStatus: eureka.StatusOutOfService, Replication: true})
		}, []ChangeKind{OverrideAdopted}},
		{"cancel", func() { s.Cancel("A", "x", false) }, []ChangeKind{Cancelled}},
		{"cancel unknown", func() { s.Cancel("A", "x", false) }, nil},
		{"replicated register", func() { mustRegister(t, s, inst("B", "y"), true) }, []ChangeKind{Registered}},
		{"eviction", func() { clock.Advance(91 * time.Second); s.Evict() }, []ChangeKind{Evicted}},
	}
	for _, st := range steps {
		before := len(got)
		st.do()
		var kinds []ChangeKind
		for _, c := range got[before:] {
			kinds = append(kinds, c.Kind)
		}
		testkit.Want(t, st.name, kinds, st.want)
	}
	for n, c := range got {
		if c.Version != uint64(n+1) {
			t.Errorf("change %d (%v) has version %d", n, c.Kind, c.Version)
		}
	}
	if s.Version() != uint64(len(got)) {
		t.Errorf("Version() = %d after %d changes", s.Version(), len(got))
	}
	testkit.Want(t, "new flags", []bool{got[0].New, got[1].New}, []bool{true, false})
	testkit.Want(t, "replicated register", got[len(got)-2].Replicated, true)
	testkit.Want(t, "cancel's instance", got[len(got)-3].Instance.ActionType, eureka.ActionDeleted)

	// The log holds the same changes.
	logged, ok := s.changesSince(0)
	if !ok || len(logged) != len(got) {
		t.Fatalf("ChangesSince(0) = %d changes, %v; want %d", len(logged), ok, len(got))
	}
	for n := range logged {
		if logged[n].Version != got[n].Version || logged[n].Kind != got[n].Kind {
			t.Errorf("log entry %d = %v@%d, stream said %v@%d", n, logged[n].Kind, logged[n].Version, got[n].Kind, got[n].Version)
		}
	}
	if tail, ok := s.changesSince(uint64(len(got) - 2)); !ok || len(tail) != 2 {
		t.Errorf("ChangesSince(last-2) = %d changes, %v", len(tail), ok)
	}
}

// Readers of the views during a stream of changes see whole views, each
// sorted, and the last change once the writes return.
func TestViewsUnderConcurrentChanges(t *testing.T) {
	s, _ := newTestStore(t, Config{})
	stop := testkit.Loop(4, func(int) {
		list := s.Instances("A")
		for k := 1; k < len(list) && !t.Failed(); k++ {
			if list[k-1].ID() >= list[k].ID() {
				t.Errorf("view not sorted: %s before %s", list[k-1].ID(), list[k].ID())
			}
		}
	})
	for n := range 2000 {
		id := fmt.Sprintf("i%04d", n%300)
		if n%3 == 2 {
			s.Cancel("A", id, false)
		} else {
			mustRegister(t, s, inst("A", id), false)
		}
	}
	stop()
	testkit.Want(t, "view after the writes", len(s.AllInstances("A")), len(s.Applications().Applications[0].Instances))
}

// Changed's channel is closed by the next change delivered after the
// call, and not by a write that changes nothing (a heartbeat): the
// notify.Notifier the gateways' sweepers wait on.
func TestChangedClosedAtNextChange(t *testing.T) {
	s, _ := newTestStore(t, Config{DisableSelfPreservation: true})
	closed := func(ch <-chan struct{}) bool {
		select {
		case <-ch:
			return true
		default:
			return false
		}
	}
	ch := s.Changed()
	if closed(ch) {
		t.Fatal("closed before any change")
	}
	mustRegister(t, s, inst("A", "x"), false)
	if !closed(ch) {
		t.Fatal("not closed by a registration")
	}
	next := s.Changed()
	if closed(next) {
		t.Fatal("the next channel is closed by the change before it was taken")
	}
	s.Renew("A", "x", RenewRequest{})
	if closed(next) {
		t.Error("closed by a heartbeat, which changes nothing")
	}
	s.Cancel("A", "x", false)
	if !closed(next) {
		t.Error("not closed by a cancel")
	}
}
