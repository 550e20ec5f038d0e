package regions

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/eurekagate/eurekagate/eureka"
	"github.com/eurekagate/eurekagate/internal/testkit"
	"github.com/eurekagate/eurekagate/registry"
	"github.com/eurekagate/eurekagate/registry/document"
)

func TestMain(m *testing.M) { testkit.VerifyTestMain(m) }

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
	i := testkit.Inst(app, id)
	i.App = strings.ToUpper(app)
	i.Status = st
	i.ActionType = eureka.ActionAdded // as a fetched registry has it
	return i
}

// regionStore is a Store of cfg (with the remote region eu-west unless
// cfg names others) on a fake clock, and its Mirror.
func regionStore(t *testing.T, cfg registry.Config) (*registry.Store, *Mirror, *testkit.FakeClock) {
	if cfg.RemoteRegions == nil {
		cfg.RemoteRegions = []registry.RemoteRegion{{Name: "EU-West"}}
	}
	clock := testkit.NewFakeClock()
	cfg.Clock = clock
	s := registry.New(cfg)
	return s, MirrorOf(s), clock
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
	s, m, clock := regionStore(t, registry.Config{})
	testkit.MustRegister(t, s, testkit.Inst("orders", "local-1"), false)
	if _, err := m.Parse("eu-west"); !errors.Is(err, ErrRegionNotReady) {
		t.Fatalf("before the first read: %v, want ErrRegionNotReady", err)
	}
	if got, err := m.Parse("nowhere"); err != nil || len(got) != 0 {
		t.Fatalf("an unknown region is ignored, as Eureka does: %v %v", got, err)
	}
	err := m.Update("eu-west", remoteDoc(map[string][]*eureka.InstanceInfo{
		"ORDERS":  {remoteInst("orders", "eu-1", eureka.StatusUp)},
		"BILLING": {remoteInst("billing", "eu-2", eureka.StatusDown)},
	}), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	regions, err := m.Parse(" EU-WEST ,eu-west")
	if err != nil || len(regions) != 1 || regions[0] != "eu-west" {
		t.Fatalf("ParseRegions = %v, %v", regions, err)
	}
	full := decodeJSON(t, m.Payload(regions, false, eureka.FormatJSON))
	testkit.Want(t, "merged full", idsOf(full), map[string][]string{
		"BILLING": {"eu-2:DOWN:ADDED"},
		"ORDERS":  {"eu-1:UP:ADDED", "local-1:UP:ADDED"},
	})
	testkit.Want(t, "hash", full.AppsHashcode, "DOWN_1_UP_2_")
	if local := decodeJSON(t, s.Documents().Full(eureka.FormatJSON)); local.AppsHashcode != "UP_1_" || len(local.Applications) != 1 {
		t.Errorf("the local read changed: %+v", local)
	}

	// The delta carries the region's changes, the hash the whole of it.
	delta := decodeJSON(t, m.Payload(regions, true, eureka.FormatJSON))
	testkit.Want(t, "delta", idsOf(delta), map[string][]string{
		"ORDERS":  {"local-1:UP:ADDED", "eu-1:UP:ADDED"},
		"BILLING": {"eu-2:DOWN:ADDED"},
	})
	testkit.Want(t, "delta hash", delta.AppsHashcode, "DOWN_1_UP_2_")

	// A second read: eu-1 gone, eu-2 up. Each shows once, latest state.
	clock.Advance(time.Second)
	m.Update("eu-west", remoteDoc(map[string][]*eureka.InstanceInfo{
		"BILLING": {remoteInst("billing", "eu-2", eureka.StatusUp)},
	}), time.Now())
	delta = decodeJSON(t, m.Payload(regions, true, eureka.FormatJSON))
	testkit.Want(t, "delta after", idsOf(delta), map[string][]string{
		"ORDERS":  {"local-1:UP:ADDED", "eu-1:UP:DELETED"},
		"BILLING": {"eu-2:UP:MODIFIED"},
	})
	testkit.Want(t, "delta hash after", delta.AppsHashcode, "UP_2_")
	if got := m.InstancesIn("BILLING", "eu-west"); len(got) != 1 || got[0].ID() != "eu-2" {
		t.Errorf("InstancesIn = %v", got)
	}
	if got := m.InstancesIn("ORDERS", ""); len(got) != 1 || got[0].ID() != "local-1" {
		t.Errorf("InstancesIn local = %v", got)
	}
	if got := m.InstancesIn("ORDERS", "eu-west"); len(got) != 0 {
		t.Errorf("a deleted remote instance is still routable: %v", got)
	}
	// Nothing remote is a lease: not replicated, not evicted, not counted.
	if s.Len() != 1 {
		t.Errorf("Len = %d: remote instances became leases", s.Len())
	}
}

func TestRegionWhitelistAndFallback(t *testing.T) {
	_, m, _ := regionStore(t, registry.Config{
		RemoteRegions:            []registry.RemoteRegion{{Name: "eu-west"}, {Name: "ap-south", AppWhitelist: []string{"billing"}}},
		RemoteRegionAppWhitelist: []string{"orders"},
	})
	doc := remoteDoc(map[string][]*eureka.InstanceInfo{
		"ORDERS":  {remoteInst("orders", "o", eureka.StatusUp)},
		"BILLING": {remoteInst("billing", "b", eureka.StatusUp)},
	})
	m.Update("eu-west", doc, time.Now())
	m.Update("ap-south", doc, time.Now())
	eu := decodeJSON(t, m.Payload([]string{"eu-west"}, false, eureka.FormatJSON))
	testkit.Want(t, "global whitelist", idsOf(eu), map[string][]string{"ORDERS": {"o:UP:ADDED"}})
	ap := decodeJSON(t, m.Payload([]string{"ap-south"}, false, eureka.FormatJSON))
	testkit.Want(t, "region whitelist", idsOf(ap), map[string][]string{"BILLING": {"b:UP:ADDED"}})
	testkit.Want(t, "region whitelist hash", ap.AppsHashcode, "UP_1_")

	// Fallback answers the first region holding the app, as Eureka.
	p, ok := m.AppPayload("BILLING", eureka.FormatJSON)
	if !ok || !strings.Contains(string(p.Bytes()), `"b"`) {
		t.Errorf("fallback: %v %s", ok, p.Bytes())
	}
	_, off, _ := regionStore(t, registry.Config{DisableTransparentFallback: true})
	off.Update("eu-west", doc, time.Now())
	if _, ok := off.AppPayload("BILLING", eureka.FormatJSON); ok {
		t.Error("fallback answered with DisableTransparentFallback")
	}
}

func TestRegionDroppedAfterRetention(t *testing.T) {
	s, m, clock := regionStore(t, registry.Config{RemoteRegionRetention: time.Minute})
	m.Update("eu-west", remoteDoc(map[string][]*eureka.InstanceInfo{
		"ORDERS": {remoteInst("orders", "o", eureka.StatusUp)},
	}), clock.Now())
	clock.Advance(30 * time.Second)
	m.Failed("eu-west", clock.Now(), errors.New("connection refused"))
	m.DropStale()
	if got := m.InstancesIn("ORDERS", "eu-west"); len(got) != 1 {
		t.Fatalf("dropped within the retention: %v", got)
	}
	clock.Advance(31 * time.Second)
	s.PurgeDeltas()
	if got := m.InstancesIn("ORDERS", "eu-west"); len(got) != 0 {
		t.Fatalf("kept after the retention: %v", got)
	}
	st := m.States()[0]
	if !st.Dropped || !st.Ready || st.Instances != 0 || st.Failures != 1 || st.LastError != "connection refused" {
		t.Errorf("state %+v", st)
	}
	// Still ready: reads answer without the region, not 403.
	if _, err := m.Parse("eu-west"); err != nil {
		t.Errorf("a dropped region refuses reads: %v", err)
	}
	full := decodeJSON(t, m.Payload([]string{"eu-west"}, false, eureka.FormatJSON))
	if len(full.Applications) != 0 {
		t.Errorf("full after drop: %v", idsOf(full))
	}
}

func TestPollWithRegionsWakesOnRegionChange(t *testing.T) {
	s, m, _ := regionStore(t, registry.Config{})
	m.Update("eu-west", remoteDoc(nil), time.Now())
	p := m.Payload([]string{"eu-west"}, false, eureka.FormatJSON)
	token := s.Token(registry.Version{Local: p.Version(), Remote: p.RemoteVersion(), Regions: true})
	since, ok := s.ParseToken(token)
	if !ok || since.Local != p.Version() || since.Remote != p.RemoteVersion() || !since.Regions {
		t.Fatalf("token %q parsed as %+v %v", token, since, ok)
	}
	if local, ok := s.ParseToken(s.Token(registry.Version{Local: since.Local})); !ok || local.Regions {
		t.Error("a local token was taken for a regions token")
	}
	done := make(chan registry.Polled, 1)
	go func() {
		done <- s.Poll(context.Background(), registry.Poll{Since: since, Remote: m, Regions: []string{"eu-west"}, Wait: 10 * time.Second})
	}()
	// Held before the change, so that the change is what wakes it.
	testkit.Eventually(t, 5*time.Second, "the poll waits", func() bool { return s.Stats().Totals().WatchesHeld == 1 })
	select {
	case got := <-done:
		t.Fatalf("answered before any change: %+v", got)
	default:
	}
	m.Update("eu-west", remoteDoc(map[string][]*eureka.InstanceInfo{
		"ORDERS": {remoteInst("orders", "o", eureka.StatusUp)},
	}), time.Now())
	select {
	case got := <-done:
		if len(got.RemoteChanges) != 1 || got.RemoteChanges[0].Instances[0].ActionType != eureka.ActionAdded || got.Hash != "UP_1_" {
			t.Errorf("polled %+v", got)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("a region change did not end the poll")
	}
}

func TestUpdateRegionUnchangedRecordsNothing(t *testing.T) {
	_, m, _ := regionStore(t, registry.Config{})
	doc := remoteDoc(map[string][]*eureka.InstanceInfo{"ORDERS": {remoteInst("orders", "o", eureka.StatusUp)}})
	m.Update("eu-west", doc, time.Now())
	v := m.version.Load()
	same := remoteDoc(map[string][]*eureka.InstanceInfo{"ORDERS": {remoteInst("orders", "o", eureka.StatusUp)}})
	m.Update("eu-west", same, time.Now())
	if m.version.Load() != v {
		t.Error("an equal registry recorded changes")
	}
	if err := m.Update("mars", doc, time.Now()); err == nil {
		t.Error("an unconfigured region was accepted")
	}
}

// Regions take the same bounds, and the configured ones among the names
// are kept.
func TestParseRegionsBounds(t *testing.T) {
	_, m, _ := regionStore(t, registry.Config{RemoteRegions: []registry.RemoteRegion{{Name: "eu-west"}}})
	if _, err := m.Parse(testkit.NameList("a", registry.MaxQueryListNames+1) + ",eu-west"); err == nil || !strings.Contains(err.Error(), "regions: more than 4096 names") {
		t.Errorf("ParseRegions over the bound: %v", err)
	}
	got, err := m.Parse("EU-West," + testkit.NameList("a", 100) + ",eu-west")
	if !errors.Is(err, ErrRegionNotReady) || !slices.Equal(got, []string{"eu-west"}) {
		t.Errorf("ParseRegions = %v, %v; want [eu-west] not ready", got, err)
	}
}
