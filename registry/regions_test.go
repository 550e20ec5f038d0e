package registry

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/eurekagate/eurekagate/eureka"
	"github.com/eurekagate/eurekagate/internal/testkit"
	"github.com/eurekagate/eurekagate/registry/document"
)

func remoteDoc(apps map[string][]*eureka.InstanceInfo) *eureka.Applications {
	doc := &eureka.Applications{VersionsDelta: 1}
	for name, list := range apps {
		doc.Applications = append(doc.Applications, &eureka.Application{Name: name, Instances: list})
	}
	eureka.SortByName(doc.Applications)
	doc.AppsHashcode = eureka.ReconcileHash(doc.Applications)
	return doc
}

func remoteInst(app, id string, st eureka.Status) *eureka.InstanceInfo {
	i := inst(app, id)
	i.App = strings.ToUpper(app)
	i.Status = st
	i.ActionType = eureka.ActionAdded // as a fetched registry has it
	return i
}

func regionStore(t *testing.T, cfg Config) (*Store, interface{ Advance(time.Duration) }) {
	if cfg.RemoteRegions == nil {
		cfg.RemoteRegions = []RemoteRegion{{Name: "EU-West"}}
	}
	s, clock := newTestStore(t, cfg)
	return s, clock
}

func decodeJSON(t *testing.T, p *document.Payload) *eureka.Applications {
	t.Helper()
	doc, err := eureka.DecodeApplicationsJSON(p.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	return doc
}

func idsOf(doc *eureka.Applications) map[string][]string {
	out := map[string][]string{}
	for _, a := range doc.Applications {
		for _, i := range a.Instances {
			out[a.Name] = append(out[a.Name], i.ID()+":"+i.Status.String()+":"+i.ActionType.String())
		}
	}
	return out
}

func TestRegionReadsMergeAndHash(t *testing.T) {
	s, clock := regionStore(t, Config{})
	mustRegister(t, s, inst("orders", "local-1"), false)
	if _, err := s.ParseRegions("eu-west"); !errors.Is(err, ErrRegionNotReady) {
		t.Fatalf("before the first read: %v, want ErrRegionNotReady", err)
	}
	if got, err := s.ParseRegions("nowhere"); err != nil || len(got) != 0 {
		t.Fatalf("an unknown region is ignored, as Eureka does: %v %v", got, err)
	}
	err := s.UpdateRegion("eu-west", remoteDoc(map[string][]*eureka.InstanceInfo{
		"ORDERS":  {remoteInst("orders", "eu-1", eureka.StatusUp)},
		"BILLING": {remoteInst("billing", "eu-2", eureka.StatusDown)},
	}), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	regions, err := s.ParseRegions(" EU-WEST ,eu-west")
	if err != nil || len(regions) != 1 || regions[0] != "eu-west" {
		t.Fatalf("ParseRegions = %v, %v", regions, err)
	}
	full := decodeJSON(t, s.FullPayloadIn(regions, eureka.FormatJSON))
	testkit.Want(t, "merged full", idsOf(full), map[string][]string{
		"BILLING": {"eu-2:DOWN:ADDED"},
		"ORDERS":  {"eu-1:UP:ADDED", "local-1:UP:ADDED"},
	})
	testkit.Want(t, "hash", full.AppsHashcode, "DOWN_1_UP_2_")
	if local := decodeJSON(t, s.Documents().Full(eureka.FormatJSON)); local.AppsHashcode != "UP_1_" || len(local.Applications) != 1 {
		t.Errorf("the local read changed: %+v", local)
	}

	// The delta carries the region's changes, the hash the whole of it.
	delta := decodeJSON(t, s.DeltaPayloadIn(regions, eureka.FormatJSON))
	testkit.Want(t, "delta", idsOf(delta), map[string][]string{
		"ORDERS":  {"local-1:UP:ADDED", "eu-1:UP:ADDED"},
		"BILLING": {"eu-2:DOWN:ADDED"},
	})
	testkit.Want(t, "delta hash", delta.AppsHashcode, "DOWN_1_UP_2_")

	// A second read: eu-1 gone, eu-2 up. Each shows once, latest state.
	clock.Advance(time.Second)
	s.UpdateRegion("eu-west", remoteDoc(map[string][]*eureka.InstanceInfo{
		"BILLING": {remoteInst("billing", "eu-2", eureka.StatusUp)},
	}), time.Now())
	delta = decodeJSON(t, s.DeltaPayloadIn(regions, eureka.FormatJSON))
	testkit.Want(t, "delta after", idsOf(delta), map[string][]string{
		"ORDERS":  {"local-1:UP:ADDED", "eu-1:UP:DELETED"},
		"BILLING": {"eu-2:UP:MODIFIED"},
	})
	testkit.Want(t, "delta hash after", delta.AppsHashcode, "UP_2_")
	if got := s.InstancesIn("BILLING", "eu-west"); len(got) != 1 || got[0].ID() != "eu-2" {
		t.Errorf("InstancesIn = %v", got)
	}
	if got := s.InstancesIn("ORDERS", ""); len(got) != 1 || got[0].ID() != "local-1" {
		t.Errorf("InstancesIn local = %v", got)
	}
	if got := s.InstancesIn("ORDERS", "eu-west"); len(got) != 0 {
		t.Errorf("a deleted remote instance is still routable: %v", got)
	}
	// Nothing remote is a lease: not replicated, not evicted, not counted.
	if s.Len() != 1 {
		t.Errorf("Len = %d: remote instances became leases", s.Len())
	}
}

func TestRegionWhitelistAndFallback(t *testing.T) {
	s, _ := regionStore(t, Config{
		RemoteRegions:            []RemoteRegion{{Name: "eu-west"}, {Name: "ap-south", AppWhitelist: []string{"billing"}}},
		RemoteRegionAppWhitelist: []string{"orders"},
	})
	doc := remoteDoc(map[string][]*eureka.InstanceInfo{
		"ORDERS":  {remoteInst("orders", "o", eureka.StatusUp)},
		"BILLING": {remoteInst("billing", "b", eureka.StatusUp)},
	})
	s.UpdateRegion("eu-west", doc, time.Now())
	s.UpdateRegion("ap-south", doc, time.Now())
	eu := decodeJSON(t, s.FullPayloadIn([]string{"eu-west"}, eureka.FormatJSON))
	testkit.Want(t, "global whitelist", idsOf(eu), map[string][]string{"ORDERS": {"o:UP:ADDED"}})
	ap := decodeJSON(t, s.FullPayloadIn([]string{"ap-south"}, eureka.FormatJSON))
	testkit.Want(t, "region whitelist", idsOf(ap), map[string][]string{"BILLING": {"b:UP:ADDED"}})
	testkit.Want(t, "region whitelist hash", ap.AppsHashcode, "UP_1_")

	// Fallback answers the first region holding the app, as Eureka.
	p, ok := s.RemoteAppPayload("BILLING", eureka.FormatJSON)
	if !ok || !strings.Contains(string(p.Bytes()), `"b"`) {
		t.Errorf("fallback: %v %s", ok, p.Bytes())
	}
	off, _ := regionStore(t, Config{DisableTransparentFallback: true})
	off.UpdateRegion("eu-west", doc, time.Now())
	if _, ok := off.RemoteAppPayload("BILLING", eureka.FormatJSON); ok {
		t.Error("fallback answered with DisableTransparentFallback")
	}
}

func TestRegionDroppedAfterRetention(t *testing.T) {
	s, clock := regionStore(t, Config{RemoteRegionRetention: time.Minute})
	s.UpdateRegion("eu-west", remoteDoc(map[string][]*eureka.InstanceInfo{
		"ORDERS": {remoteInst("orders", "o", eureka.StatusUp)},
	}), s.clock.Now())
	clock.Advance(30 * time.Second)
	s.RegionFailed("eu-west", s.clock.Now(), errors.New("connection refused"))
	s.DropStaleRegions()
	if got := s.InstancesIn("ORDERS", "eu-west"); len(got) != 1 {
		t.Fatalf("dropped within the retention: %v", got)
	}
	clock.Advance(31 * time.Second)
	s.PurgeDeltas()
	if got := s.InstancesIn("ORDERS", "eu-west"); len(got) != 0 {
		t.Fatalf("kept after the retention: %v", got)
	}
	st := s.RegionStates()[0]
	if !st.Dropped || !st.Ready || st.Instances != 0 || st.Failures != 1 || st.LastError != "connection refused" {
		t.Errorf("state %+v", st)
	}
	// Still ready: reads answer without the region, not 403.
	if _, err := s.ParseRegions("eu-west"); err != nil {
		t.Errorf("a dropped region refuses reads: %v", err)
	}
	full := decodeJSON(t, s.FullPayloadIn([]string{"eu-west"}, eureka.FormatJSON))
	if len(full.Applications) != 0 {
		t.Errorf("full after drop: %v", idsOf(full))
	}
}

func TestPollWithRegionsWakesOnRegionChange(t *testing.T) {
	s, _ := regionStore(t, Config{})
	s.UpdateRegion("eu-west", remoteDoc(nil), time.Now())
	p := s.FullPayloadIn([]string{"eu-west"}, eureka.FormatJSON)
	token := s.RegionsToken(p.Version(), p.RegionVersion())
	v, rv, ok := s.ParseRegionsToken(token)
	if !ok || v != p.Version() || rv != p.RegionVersion() {
		t.Fatalf("token %q parsed as %d %d %v", token, v, rv, ok)
	}
	if _, _, ok := s.ParseRegionsToken(s.VersionToken(v)); ok {
		t.Error("a local token was taken for a regions token")
	}
	done := make(chan Polled, 1)
	go func() {
		done <- s.Poll(context.Background(), Poll{Since: v, SinceRegions: rv, Regions: []string{"eu-west"}, Wait: 10 * time.Second})
	}()
	select {
	case got := <-done:
		t.Fatalf("answered before any change: %+v", got)
	case <-time.After(50 * time.Millisecond):
	}
	s.UpdateRegion("eu-west", remoteDoc(map[string][]*eureka.InstanceInfo{
		"ORDERS": {remoteInst("orders", "o", eureka.StatusUp)},
	}), time.Now())
	select {
	case got := <-done:
		if len(got.RegionChanges) != 1 || got.RegionChanges[0].Instances[0].ActionType != eureka.ActionAdded || got.Hash != "UP_1_" {
			t.Errorf("polled %+v", got)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("a region change did not end the poll")
	}
}

func TestUpdateRegionUnchangedRecordsNothing(t *testing.T) {
	s, _ := regionStore(t, Config{})
	doc := remoteDoc(map[string][]*eureka.InstanceInfo{"ORDERS": {remoteInst("orders", "o", eureka.StatusUp)}})
	s.UpdateRegion("eu-west", doc, time.Now())
	v := s.regions.version.Load()
	same := remoteDoc(map[string][]*eureka.InstanceInfo{"ORDERS": {remoteInst("orders", "o", eureka.StatusUp)}})
	s.UpdateRegion("eu-west", same, time.Now())
	if s.regions.version.Load() != v {
		t.Error("an equal registry recorded changes")
	}
	if err := s.UpdateRegion("mars", doc, time.Now()); err == nil {
		t.Error("an unconfigured region was accepted")
	}
}
