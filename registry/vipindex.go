package registry

import (
	"slices"
	"strings"
	"sync"

	"github.com/eurekagate/eurekagate/eureka"
)

// vipIndex maps each VIP address (and secure VIP address) to the apps with
// instances that list it, with a count per app. The change stream keeps it,
// so a VIP query reads only the apps that can match instead of scanning
// the registry.
type vipIndex struct {
	mu    sync.RWMutex
	byVIP [2]map[string]map[string]int // [secure][vip][app] = instances
}

// update moves app's counts from old's VIP lists to cur's; either may be
// nil (a registration, a removal).
func (x *vipIndex) update(app string, old, cur *eureka.InstanceInfo) {
	lists := func(i *eureka.InstanceInfo) [2]string {
		if i == nil {
			return [2]string{}
		}
		return [2]string{i.VIPAddress, i.SecureVIPAddress}
	}
	before, after := lists(old), lists(cur)
	if before == after {
		return
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	for secure := range 2 {
		if before[secure] == after[secure] {
			continue
		}
		if x.byVIP[secure] == nil {
			x.byVIP[secure] = map[string]map[string]int{}
		}
		m := x.byVIP[secure]
		eachVIP(before[secure], func(vip string) {
			if apps := m[vip]; apps != nil {
				if apps[app]--; apps[app] <= 0 {
					delete(apps, app)
				}
				if len(apps) == 0 {
					delete(m, vip)
				}
			}
		})
		eachVIP(after[secure], func(vip string) {
			apps := m[vip]
			if apps == nil {
				apps = map[string]int{}
				m[vip] = apps
			}
			apps[app]++
		})
	}
}

// eachVIP calls f for each distinct entry of a comma-separated VIP list,
// as eureka.HasVIP matches them.
func eachVIP(list string, f func(string)) {
	var seen []string
	for list != "" {
		var vip string
		vip, list, _ = strings.Cut(list, ",")
		if !slices.Contains(seen, vip) {
			seen = append(seen, vip)
			f(vip)
		}
	}
}

// apps returns the apps with an instance listing vip, sorted.
func (x *vipIndex) apps(vip string, secure bool) []string {
	k := 0
	if secure {
		k = 1
	}
	x.mu.RLock()
	defer x.mu.RUnlock()
	out := make([]string, 0, len(x.byVIP[k][vip]))
	for app := range x.byVIP[k][vip] {
		out = append(out, app)
	}
	slices.Sort(out)
	return out
}

// vip returns the instances whose VIP list (or secure VIP list) holds vip
// exactly, with versions__delta -1 as Eureka's VIP queries report. It reads
// only the apps the VIP index names.
func (s *Store) vip(vip string, secure bool) *eureka.Applications {
	apps := s.views.vips.apps(vip, secure)
	keep := func(i *eureka.InstanceInfo) bool {
		if secure {
			return eureka.HasVIP(i.SecureVIPAddress, vip)
		}
		return eureka.HasVIP(i.VIPAddress, vip)
	}
	out := &eureka.Applications{VersionsDelta: -1, Applications: make([]*eureka.Application, 0, len(apps))}
	s.mu.RLock()
	for _, name := range apps {
		if a := s.apps[name]; a != nil {
			if app := s.appSnapshotLocked(name, a, keep); len(app.Instances) > 0 {
				out.Applications = append(out.Applications, app)
			}
		}
	}
	s.mu.RUnlock()
	out.AppsHashcode = eureka.ReconcileHash(out.Applications)
	return out
}
