package discovery

import (
	"strconv"
	"testing"

	"github.com/eurekagate/eurekagate/eureka"
	"github.com/eurekagate/eurekagate/internal/testkit"
)

// BenchmarkApplyDelta applies a delta of 10 changes (ADDED, MODIFIED and
// DELETED) to a cache of 10,000 instances in 500 apps, including the hash
// check and the publication of the new snapshot.
func BenchmarkApplyDelta(b *testing.B) {
	full := &eureka.Applications{VersionsDelta: 1}
	byApp := map[string]*eureka.Application{}
	for n := range 10000 {
		i := testkit.SampleInstance(n)
		a := byApp[i.App]
		if a == nil {
			a = &eureka.Application{Name: i.App}
			byApp[i.App] = a
			full.Applications = append(full.Applications, a)
		}
		a.Instances = append(a.Instances, i)
	}
	full.AppsHashcode = eureka.ReconcileHash(full.Applications)
	c := newCache(nil)
	c.replace(full)

	deltas := make([]*eureka.Applications, 2)
	for k := range deltas {
		d := &eureka.Applications{VersionsDelta: int64(2 + k)}
		for n := range 10 {
			i := testkit.SampleInstance(n * 997).Clone()
			i.ActionType = eureka.ActionModified
			if k == 0 {
				i.Status = eureka.StatusDown
			}
			d.Applications = append(d.Applications, &eureka.Application{Name: i.App, Instances: []*eureka.InstanceInfo{i}})
		}
		extra := testkit.SampleInstance(20000 + k)
		extra.ActionType = eureka.ActionAdded
		if k == 1 {
			extra = testkit.SampleInstance(20000)
			extra.ActionType = eureka.ActionDeleted
		}
		d.Applications = append(d.Applications, &eureka.Application{Name: extra.App, Instances: []*eureka.InstanceInfo{extra}})
		deltas[k] = d
	}
	deltas[0].AppsHashcode = "DOWN_10_UP_" + strconv.Itoa(10000-10+1) + "_"
	deltas[1].AppsHashcode = "UP_10000_"
	b.ReportAllocs()
	b.ResetTimer()
	for n := range b.N {
		if _, ok := c.applyDelta(deltas[n%2]); !ok {
			b.Fatal("hash mismatch")
		}
	}
}
