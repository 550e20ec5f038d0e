package regions

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/eurekagate/eurekagate/eureka"
	"github.com/eurekagate/eurekagate/internal/testkit"
	"github.com/eurekagate/eurekagate/registry"
)

// The Store's delta retention ages the Mirror it holds as it aged its
// own regions before they were a package of their own: a remote change
// older than DeltaRetention leaves the regions' log, so that a watch
// from before it must read the whole registry (Stale), and the delta
// with regions no longer holds it.
func TestPurgeDeltasAgesTheMirror(t *testing.T) {
	s, m, clock := regionStore(t, registry.Config{DeltaRetention: time.Minute})
	m.Update("eu-west", remoteDoc(nil), clock.Now())
	before := m.Payload([]string{"eu-west"}, false, eureka.FormatJSON)
	since := registry.Version{Local: before.Version(), Remote: before.RemoteVersion(), Regions: true}
	m.Update("eu-west", remoteDoc(map[string][]*eureka.InstanceInfo{
		"ORDERS": {remoteInst("orders", "o", eureka.StatusUp)},
	}), clock.Now())
	poll := registry.Poll{Since: since, Remote: m, Regions: []string{"eu-west"}}
	if got := s.Poll(context.Background(), poll); got.Stale || len(got.RemoteChanges) != 1 {
		t.Fatalf("within the retention: %+v", got)
	}
	clock.Advance(2 * time.Minute)
	s.PurgeDeltas()
	if got := s.Poll(context.Background(), poll); !got.Stale {
		t.Errorf("a watch from before a purged remote change is not stale: %+v", got)
	}
	if delta := decodeJSON(t, m.Payload([]string{"eu-west"}, true, eureka.FormatJSON)); len(delta.Applications) != 0 {
		t.Errorf("the delta with regions holds a purged change: %v", idsOf(delta))
	}
}

// The Store's loops, once started, drop a region that stopped answering
// for RemoteRegionRetention within a tenth of it, without a delta
// cleanup (DeltaRetentionCleanupInterval an hour here): through the
// Mirror the Store holds.
func TestStartedStoreDropsStaleRegions(t *testing.T) {
	s, m, clock := regionStore(t, registry.Config{RemoteRegionRetention: time.Second, DeltaRetentionCleanupInterval: time.Hour})
	m.Update("eu-west", remoteDoc(map[string][]*eureka.InstanceInfo{
		"ORDERS": {remoteInst("orders", "o", eureka.StatusUp)},
	}), clock.Now())
	clock.Advance(2 * time.Second)
	m.Failed("eu-west", clock.Now(), errors.New("connection refused"))
	s.Start()
	defer s.Stop()
	testkit.Eventually(t, 5*time.Second, "the stale region dropped", func() bool { return m.States()[0].Dropped })
	if got := m.InstancesIn("ORDERS", "eu-west"); len(got) != 0 {
		t.Errorf("kept after the retention: %v", got)
	}
}
