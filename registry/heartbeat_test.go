package registry

import (
	"testing"

	"github.com/eurekagate/eurekagate/internal/testkit"
)

// Every listener hears every heartbeat that found its lease, in the
// order they came; stopping one stops it alone; with none left no
// Heartbeat is built.
func TestHeartbeatListeners(t *testing.T) {
	s, _ := newTestStore(t, Config{})
	inst := testkit.Inst("ORDERS", "a")
	mustRegister(t, s, inst, false)
	var order []int
	heard := make([]int, 3)
	stops := make([]func(), 3)
	for n := range 3 {
		stops[n] = s.OnHeartbeat(func(hb Heartbeat) {
			if hb.App != "ORDERS" || hb.ID != "a" {
				t.Errorf("listener %d heard %+v", n, hb)
			}
			heard[n]++
			order = append(order, n)
		})
	}
	renew := func() {
		t.Helper()
		if res, _ := s.Renew("ORDERS", "a", RenewRequest{}); res != RenewOK {
			t.Fatal(res)
		}
	}
	renew()
	renew()
	if heard[0] != 2 || heard[1] != 2 || heard[2] != 2 || order[0] != 0 || order[1] != 1 || order[2] != 2 {
		t.Errorf("heard %v in order %v", heard, order)
	}
	stops[1]()
	renew()
	if heard[0] != 3 || heard[1] != 2 || heard[2] != 3 {
		t.Errorf("after one stopped: heard %v", heard)
	}
	if res, _ := s.Renew("ORDERS", "missing", RenewRequest{}); res == RenewOK {
		t.Fatal("a heartbeat without a lease renewed")
	}
	if heard[0] != 3 {
		t.Errorf("a heartbeat without a lease was heard: %v", heard)
	}
	stops[0]()
	stops[2]()
	s.mu.RLock()
	_, listened := s.heartbeatOf("ORDERS", "a", s.apps["ORDERS"].leases["a"], RenewRequest{}, 0)
	s.mu.RUnlock()
	if listened {
		t.Error("a Heartbeat was built with no listener")
	}
}
