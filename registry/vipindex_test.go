package registry

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/eurekagate/eurekagate/eureka"
	"github.com/eurekagate/eurekagate/internal/testkit"
)

// The VIP index, and the status counts, answer exactly what a scan of the registry would, through
// registrations, VIP changes on re-registration, cancels and evictions.
func TestVIPIndexMatchesAScan(t *testing.T) {
	s, _ := newTestStore(t, Config{})
	rnd := rand.New(rand.NewPCG(7, 9))
	vipLists := []string{"a", "b", "a,b", "c,a", "", "b,b"}
	scan := func(vip string, secure bool) []string {
		var out []string
		for _, a := range s.Applications().Applications {
			for _, i := range a.Instances {
				list := i.VIPAddress
				if secure {
					list = i.SecureVIPAddress
				}
				if eureka.HasVIP(list, vip) {
					out = append(out, i.ID())
				}
			}
		}
		return out
	}
	indexed := func(vip string, secure bool) []string {
		var out []string
		for _, a := range s.vip(vip, secure).Applications {
			for _, i := range a.Instances {
				out = append(out, i.ID())
			}
		}
		return out
	}
	for step := range 300 {
		app := fmt.Sprintf("APP%d", rnd.IntN(4))
		id := fmt.Sprintf("i%d", rnd.IntN(12))
		switch rnd.IntN(6) {
		case 0:
			s.Cancel(app, id, false)
		case 1:
			s.SetStatus(app, id, []eureka.Status{eureka.StatusOutOfService, eureka.StatusDown, eureka.StatusUp}[rnd.IntN(3)], 0, false)
		case 2:
			s.DeleteStatusOverride(app, id, eureka.StatusUnknown, 0, false)
		default:
			i := inst(app, id)
			i.VIPAddress, i.SecureVIPAddress = vipLists[rnd.IntN(len(vipLists))], vipLists[rnd.IntN(len(vipLists))]
			mustRegister(t, s, i, false)
		}
		for _, vip := range []string{"a", "b", "c", "d"} {
			for _, secure := range []bool{false, true} {
				testkit.Want(t, fmt.Sprintf("step %d vip %s secure %v", step, vip, secure), indexed(vip, secure), scan(vip, secure))
			}
		}
		// The status counts kept by the writes give the hash a scan gives.
		s.mu.RLock()
		kept := s.hashLocked()
		s.mu.RUnlock()
		testkit.Want(t, fmt.Sprintf("step %d hash", step), kept, eureka.ReconcileHash(s.Applications().Applications))
	}
}
