package registry

import (
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/eurekagate/eurekagate/eureka"
	"github.com/eurekagate/eurekagate/internal/testkit"
)

func TestRegisterFillsServerFields(t *testing.T) {
	s, clock := newTestStore(t, Config{})
	in := inst("orders", "a")
	in.LastDirtyTimestamp = 0
	mustRegister(t, s, in, false)
	got := mustGet(t, s, "ORDERS", "a")
	now := clock.Now().UnixMilli()
	if got.App != "ORDERS" || got.ActionType != eureka.ActionAdded || got.LastUpdatedTimestamp != now {
		t.Errorf("app %q action %v updated %d", got.App, got.ActionType, got.LastUpdatedTimestamp)
	}
	if got.LastDirtyTimestamp != now {
		t.Errorf("missing lastDirtyTimestamp should default to now, got %d", got.LastDirtyTimestamp)
	}
	l := got.LeaseInfo
	if l.RegistrationTimestamp != now || l.LastRenewalTimestamp != now || l.ServiceUpTimestamp != now || l.DurationInSecs != 90 || l.RenewalIntervalInSecs != 30 {
		t.Errorf("leaseInfo %+v", l)
	}
	if in.App != "orders" {
		t.Error("Register modified its argument")
	}
}

func TestRegisterKeepsServiceUpAcrossReregistration(t *testing.T) {
	s, clock := newTestStore(t, Config{})
	mustRegister(t, s, inst("A", "x"), false)
	up := mustGet(t, s, "A", "x").LeaseInfo.ServiceUpTimestamp
	clock.Advance(time.Minute)
	mustRegister(t, s, inst("A", "x"), false)
	got := mustGet(t, s, "A", "x").LeaseInfo
	if got.ServiceUpTimestamp != up || got.RegistrationTimestamp != clock.Now().UnixMilli() {
		t.Errorf("serviceUp %d (want %d), registration %d", got.ServiceUpTimestamp, up, got.RegistrationTimestamp)
	}
}

func TestValidateMessages(t *testing.T) {
	cases := []struct {
		edit func(*eureka.InstanceInfo)
		want string
	}{
		{func(i *eureka.InstanceInfo) { i.InstanceID, i.HostName = "", "" }, "Missing instanceId"},
		{func(i *eureka.InstanceInfo) { i.HostName = " " }, "Missing hostname"},
		{func(i *eureka.InstanceInfo) { i.IPAddr = "" }, "Missing ip address"},
		{func(i *eureka.InstanceInfo) { i.App = "" }, "Missing appName"},
		{func(i *eureka.InstanceInfo) { i.App = "other" }, "Mismatched appName, expecting ORDERS but was OTHER"},
		{func(i *eureka.InstanceInfo) { i.DataCenterInfo = eureka.DataCenterInfo{} }, "Missing dataCenterInfo"},
		{func(i *eureka.InstanceInfo) { i.DataCenterInfo.Name = "  " }, "Missing dataCenterInfo Name"},
		{func(i *eureka.InstanceInfo) { i.Port.Number = 70000 }, "Invalid port, expecting 0 to 65535 but was 70000"},
		{func(i *eureka.InstanceInfo) { i.Port.Number = -1 }, "Invalid port, expecting 0 to 65535 but was -1"},
		{func(i *eureka.InstanceInfo) { i.SecurePort.Number = 65536 }, "Invalid securePort, expecting 0 to 65535 but was 65536"},
		{func(i *eureka.InstanceInfo) { i.LeaseInfo.DurationInSecs = 9_200_000_000_000_000 },
			"Invalid leaseInfo.durationInSecs, expecting at most 2147483647 but was 9200000000000000"},
		{func(i *eureka.InstanceInfo) { i.LeaseInfo.RenewalIntervalInSecs = 1 << 31 },
			"Invalid leaseInfo.renewalIntervalInSecs, expecting at most 2147483647 but was 2147483648"},
	}
	for _, c := range cases {
		i := inst("ORDERS", "a")
		c.edit(i)
		err := Validate(i, "orders")
		if err == nil || err.Error() != c.want {
			t.Errorf("Validate = %v, want %q", err, c.want)
		}
	}
	if err := Validate(inst("ORDERS", "a"), "orders"); err != nil {
		t.Errorf("valid instance refused: %v", err)
	}
	// The bounds themselves, and values that mean the defaults.
	edge := inst("ORDERS", "a")
	edge.Port.Number, edge.SecurePort.Number = 65535, 0
	edge.LeaseInfo.DurationInSecs, edge.LeaseInfo.RenewalIntervalInSecs = MaxLeaseSecs, -1
	if err := Validate(edge, "orders"); err != nil {
		t.Errorf("instance at the bounds refused: %v", err)
	}
}

func TestAmazonEmptyInstanceIDGetsDerivedID(t *testing.T) {
	s, _ := newTestStore(t, Config{})
	i := inst("A", "x")
	i.DataCenterInfo = eureka.DataCenterInfo{Name: eureka.DataCenterAmazon, Metadata: map[string]string{"availability-zone": "z"}}
	mustRegister(t, s, i, false)
	if got := mustGet(t, s, "A", "x").DataCenterInfo.Metadata["instance-id"]; got != "x" {
		t.Errorf("instance-id = %q", got)
	}
}

func TestRenewAndLeaseExpiry(t *testing.T) {
	s, clock := newTestStore(t, Config{DisableSelfPreservation: true})
	mustRegister(t, s, inst("A", "x"), false)
	clock.Advance(60 * time.Second)
	if res, _ := s.Renew("A", "x", RenewRequest{}); res != RenewOK {
		t.Fatalf("renew = %v", res)
	}
	// Expiry is exactly durationInSecs (90 s) after the last renew.
	clock.Advance(90 * time.Second)
	if ev := s.Evict(); len(ev) != 0 {
		t.Fatalf("evicted at exactly 90 s: %v", ev)
	}
	clock.Advance(time.Millisecond)
	if ev := s.Evict(); len(ev) != 1 || ev[0] != "x" {
		t.Fatalf("want x evicted 90 s after its last renew, got %v", ev)
	}
	if res, _ := s.Renew("A", "x", RenewRequest{}); res != RenewNotFound {
		t.Errorf("renew after eviction = %v, want not found", res)
	}
}

func TestLegacyLeaseExpiryDoublesTimeout(t *testing.T) {
	s, clock := newTestStore(t, Config{DisableSelfPreservation: true, LegacyLeaseExpiry: true})
	mustRegister(t, s, inst("A", "never"), false)
	mustRegister(t, s, inst("A", "renewed"), false)
	s.Renew("A", "renewed", RenewRequest{})
	renewedAt := clock.Now().UnixMilli()
	if got := mustGet(t, s, "A", "renewed").LeaseInfo.LastRenewalTimestamp; got != renewedAt+90000 {
		t.Errorf("legacy lastRenewalTimestamp = %d, want renew + 90 s = %d", got, renewedAt+90000)
	}
	clock.Advance(90*time.Second + time.Millisecond)
	if ev := s.Evict(); len(ev) != 1 || ev[0] != "never" {
		t.Fatalf("a never-renewed lease expires after 1 x duration; evicted %v", ev)
	}
	clock.Advance(60 * time.Second)
	if ev := s.Evict(); len(ev) != 0 {
		t.Fatalf("a renewed lease evicted 150 s after its renew: %v", ev)
	}
	clock.Advance(30 * time.Second)
	if ev := s.Evict(); len(ev) != 1 || ev[0] != "renewed" {
		t.Fatalf("a renewed lease expires 2 x duration after its renew; evicted %v", ev)
	}
}

func TestExpiredLeaseHiddenFromSingleLookupsButInFullFetch(t *testing.T) {
	s, clock := newTestStore(t, Config{DisableSelfPreservation: true})
	mustRegister(t, s, inst("A", "x"), false)
	clock.Advance(91 * time.Second)
	if _, ok := s.Get("A", "x"); ok {
		t.Error("an expired lease is visible to GET apps/{app}/{id}")
	}
	if s.Applications().Applications[0].Instances[0].ID() != "x" {
		t.Error("the full registry hides an expired but not evicted lease")
	}
}

func TestCancel(t *testing.T) {
	s, _ := newTestStore(t, Config{})
	mustRegister(t, s, inst("A", "x"), false)
	if err := s.SetStatus("A", "x", eureka.StatusOutOfService, 0, false); err != nil {
		t.Fatal(err)
	}
	if !s.Cancel("A", "x", false) {
		t.Fatal("cancel of a registered instance failed")
	}
	if s.Cancel("A", "x", false) {
		t.Error("second cancel succeeded")
	}
	if len(s.Overrides()) != 0 {
		t.Error("cancel kept the override")
	}
	if s.Len() != 0 || len(s.Applications().Applications) != 0 {
		t.Error("cancelled instance still listed")
	}
}

func TestRenewAppliesOverrideWithDeltaEntry(t *testing.T) {
	s, _ := newTestStore(t, Config{})
	mustRegister(t, s, inst("A", "x"), false)
	// An override arriving by replication of a register from a peer
	// leaves the holder UP until the next renew applies rule 2.
	s.mu.Lock()
	s.setOverride("x", eureka.StatusOutOfService, s.nowMillis())
	s.mu.Unlock()
	v := s.Version()
	if res, _ := s.Renew("A", "x", RenewRequest{}); res != RenewOK {
		t.Fatal(res)
	}
	if got := mustGet(t, s, "A", "x"); got.Status != eureka.StatusOutOfService {
		t.Errorf("renew did not apply the override: %v", got.Status)
	}
	if s.Version() == v {
		t.Error("a status change by renew left no change for deltas")
	}
}

func TestUpdateMetadata(t *testing.T) {
	s, _ := newTestStore(t, Config{})
	i := inst("A", "x")
	i.Metadata = map[string]string{"keep": "1", "over": "old"}
	i.LastDirtyTimestamp = 4242
	mustRegister(t, s, i, false)
	if err := s.UpdateMetadata("A", "x", map[string]string{"over": "new", "add": "2"}); err != nil {
		t.Fatal(err)
	}
	got := mustGet(t, s, "A", "x")
	testkit.Want(t, "metadata", got.Metadata, map[string]string{"keep": "1", "over": "new", "add": "2"})
	testkit.Want(t, "lastDirty", got.LastDirtyTimestamp, int64(4242))
	testkit.Want(t, "action", got.ActionType, eureka.ActionAdded)
	if i.Metadata["over"] != "old" {
		t.Error("UpdateMetadata modified the caller's map")
	}
}

func TestDeltaRetentionAndDedupe(t *testing.T) {
	s, clock := newTestStore(t, Config{})
	mustRegister(t, s, inst("A", "x"), false)
	mustRegister(t, s, inst("A", "y"), false)
	s.SetStatus("A", "y", eureka.StatusOutOfService, 0, false)
	mustRegister(t, s, inst("B", "z"), false)
	s.Cancel("B", "z", false) // registered then cancelled: once, DELETED

	d := s.delta()
	got := map[string]eureka.ActionType{}
	n := 0
	for _, a := range d.Applications {
		for _, i := range a.Instances {
			got[a.Name+"/"+i.ID()] = i.ActionType
			n++
		}
	}
	testkit.Want(t, "delta", got, map[string]eureka.ActionType{"A/x": eureka.ActionAdded, "A/y": eureka.ActionModified, "B/z": eureka.ActionDeleted})
	testkit.Want(t, "entries", n, 3)
	testkit.Want(t, "delta hash is the full registry's", d.AppsHashcode, "OUT_OF_SERVICE_1_UP_1_")
	if z := d.Applications[1].Instances[0]; z.LeaseInfo.EvictionTimestamp == 0 {
		t.Error("DELETED record without evictionTimestamp")
	}

	// Cancelled then re-registered: once, as ADDED.
	s.Cancel("A", "x", false)
	mustRegister(t, s, inst("A", "x"), false)
	for _, i := range s.delta().Applications[0].Instances {
		if i.ID() == "x" && i.ActionType != eureka.ActionAdded {
			t.Errorf("cancel + register shows %v", i.ActionType)
		}
	}

	clock.Advance(179 * time.Second)
	s.PurgeDeltas()
	if len(s.delta().Applications) == 0 {
		t.Fatal("changes dropped before 180 s")
	}
	clock.Advance(2 * time.Second)
	s.PurgeDeltas()
	if d := s.delta(); len(d.Applications) != 0 || d.AppsHashcode != "OUT_OF_SERVICE_1_UP_1_" {
		t.Fatalf("after retention: %d apps, hash %q", len(d.Applications), d.AppsHashcode)
	}
}

func TestPayloadsRebuiltOnlyAfterChange(t *testing.T) {
	s, _ := newTestStore(t, Config{})
	mustRegister(t, s, inst("A", "x"), false)
	p1 := s.Documents().Full(eureka.FormatJSON)
	s.Renew("A", "x", RenewRequest{})
	p2 := s.Documents().Full(eureka.FormatJSON)
	if p1 != p2 || s.payloads.builds.Load() != 1 {
		t.Fatalf("unchanged registry re-serialized (%d builds)", s.payloads.builds.Load())
	}
	if !strings.Contains(string(p1.Bytes()), `"versions__delta":"1"`) {
		t.Errorf("full payload: %s", p1.Bytes())
	}
	mustRegister(t, s, inst("A", "y"), false)
	if p3 := s.Documents().Full(eureka.FormatJSON); p3 == p2 || !strings.Contains(string(p3.Bytes()), `"instanceId":"y"`) {
		t.Fatal("a registration is not visible in the next full fetch")
	}
	a1, _ := s.Documents().App("A", eureka.FormatXML)
	mustRegister(t, s, inst("B", "z"), false)
	a2, _ := s.Documents().App("A", eureka.FormatXML)
	if a1 != a2 {
		t.Error("a change to B rebuilt A's payload")
	}
	d1 := s.Documents().Delta(eureka.FormatJSON)
	d2 := s.Documents().Delta(eureka.FormatXML)
	if d1 != s.Documents().Delta(eureka.FormatJSON) {
		t.Error("an unchanged delta was rebuilt")
	}
	if !strings.Contains(string(d1.Bytes()), `"versions__delta":"1"`) || !strings.Contains(string(d2.Bytes()), "<versions__delta>1</") {
		t.Errorf("both formats of one delta must carry the same version:\n%s\n%s", d1.Bytes(), d2.Bytes())
	}
	mustRegister(t, s, inst("B", "w"), false)
	if d3 := s.Documents().Delta(eureka.FormatJSON); !strings.Contains(string(d3.Bytes()), `"versions__delta":"2"`) {
		t.Errorf("regenerated delta version: %s", d3.Bytes())
	}
}

func TestVIPQuery(t *testing.T) {
	s, _ := newTestStore(t, Config{})
	a := inst("A", "x")
	a.VIPAddress, a.SecureVIPAddress = "orders,orders-v2", "secure-orders"
	mustRegister(t, s, a, false)
	mustRegister(t, s, inst("B", "y"), false)
	if got := s.vip("orders-v2", false); len(got.Applications) != 1 || got.VersionsDelta != -1 || got.AppsHashcode != "UP_1_" {
		t.Errorf("vip: %+v", got)
	}
	if got := s.vip("ORDERS", false); len(got.Applications) != 0 {
		t.Error("VIP lookups are case-sensitive")
	}
	if got := s.vip("secure-orders", true); len(got.Applications) != 1 {
		t.Error("svip lookup failed")
	}
}

// TestStartStopLoops checks that Start runs each background loop (the
// renewal threshold's recount, the prebuild, eviction, the delta's
// retention) on its own, the clock moved by the test and the loops ticking
// every millisecond, and that Stop ends them all: no goroutine is left.
// Start and Stop may be called twice.
func TestStartStopLoops(t *testing.T) {
	leaks := goleak.IgnoreCurrent()
	const prebuildDelay = 20 * time.Millisecond
	s, clock := newTestStore(t, Config{EvictionInterval: time.Millisecond, DeltaRetentionCleanupInterval: time.Millisecond,
		RenewalThresholdUpdateInterval: time.Millisecond, PrebuildDelay: prebuildDelay, DisableSelfPreservation: true})
	mustRegister(t, s, inst("A", "a"), false)
	mustRegister(t, s, inst("A", "b"), false)
	s.SetExpectedRenewingClients(10)
	full, delta := builds(s)
	s.Start()
	s.Start()

	testkit.Eventually(t, 10*time.Second, "the threshold loop recounts the renewing clients (10 expected, 2 registered)", func() bool {
		return s.Stats().SelfPreservation().ExpectedRenewingClients == 2
	})
	clock.Advance(prebuildDelay)
	testkit.Eventually(t, 10*time.Second, "the prebuild loop builds the full registry and the delta once the registry is quiet", func() bool {
		f, d := builds(s)
		return f > full && d > delta
	})
	// Past both leases (90 s) and the
	// delta's retention (3 min): eviction drops the instances, the
	// retention loop their registrations.
	clock.Advance(4 * time.Minute)
	testkit.Eventually(t, 10*time.Second, "the eviction loop evicts the expired instances", func() bool { return s.Len() == 0 })
	testkit.Eventually(t, 10*time.Second, "the retention loop purges the registrations from the change log", func() bool {
		_, ok := s.changesSince(0)
		return !ok
	})

	s.Stop()
	s.Stop()
	goleak.VerifyNone(t, append([]goleak.Option{leaks}, testkit.Ignored...)...)
}

func TestInstancesViewFollowsChanges(t *testing.T) {
	s, _ := newTestStore(t, Config{})
	mustRegister(t, s, inst("A", "b"), false)
	mustRegister(t, s, inst("A", "a"), false)
	ids := func(list []*eureka.InstanceInfo) []string {
		out := []string{}
		for _, i := range list {
			out = append(out, i.ID())
		}
		return out
	}
	testkit.Want(t, "up", ids(s.Instances("A")), []string{"a", "b"})
	s.SetStatus("A", "a", eureka.StatusOutOfService, 0, false)
	testkit.Want(t, "up after override", ids(s.Instances("A")), []string{"b"})
	testkit.Want(t, "all after override", ids(s.AllInstances("A")), []string{"a", "b"})
	s.DeleteStatusOverride("A", "a", eureka.StatusUp, 0, false)
	testkit.Want(t, "up after delete", ids(s.Instances("A")), []string{"a", "b"})
	s.Cancel("A", "b", false)
	testkit.Want(t, "up after cancel", ids(s.Instances("A")), []string{"a"})
	s.Cancel("A", "a", false)
	if s.Instances("A") != nil {
		t.Error("view of an empty app")
	}
	if testing.AllocsPerRun(100, func() { s.Instances("A") }) != 0 {
		t.Error("Instances allocates")
	}
}
