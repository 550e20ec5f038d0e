package eureka

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"
)

var update = flag.Bool("update", false, "rewrite golden files")

// sampleInstance is the instance of protocol doc 3.5, as a server holds it.
func sampleInstance() *InstanceInfo {
	return &InstanceInfo{
		InstanceID: "host1.example.com:orders:8080", HasInstanceID: true,
		HostName: "host1.example.com", App: "ORDERS", IPAddr: "10.0.0.12", SID: "na",
		Status: StatusUp, OverriddenStatus: StatusUnknown,
		Port: Port{8080, true}, SecurePort: Port{443, false}, CountryID: 1,
		DataCenterInfo: DataCenterInfo{Name: DataCenterMyOwn},
		LeaseInfo: LeaseInfo{RenewalIntervalInSecs: 30, DurationInSecs: 90,
			RegistrationTimestamp: 1718000000123, LastRenewalTimestamp: 1718000120456,
			ServiceUpTimestamp: 1718000000100},
		Metadata:       map[string]string{"management.port": "8080", "zone": "zone1", "management_port": "8080"},
		HomePageURL:    "http://host1.example.com:8080/",
		StatusPageURL:  "http://host1.example.com:8080/actuator/info",
		HealthCheckURL: "http://host1.example.com:8080/actuator/health",
		VIPAddress:     "orders", SecureVIPAddress: "orders",
		LastUpdatedTimestamp: 1718000000123, LastDirtyTimestamp: 1718000000050,
		ActionType: ActionAdded,
	}
}

func sampleApps() *Applications {
	up2 := sampleInstance()
	up2.InstanceID, up2.HostName, up2.IPAddr = "host2.example.com:orders:8080", "host2.example.com", "10.0.0.13"
	up2.Metadata = nil
	down := sampleInstance()
	down.InstanceID, down.HostName, down.App = "b7:billing:9000", "b7", "BILLING"
	down.Status, down.OverriddenStatus = StatusOutOfService, StatusOutOfService
	down.ActionType = ActionModified
	down.DataCenterInfo = DataCenterInfo{Name: DataCenterAmazon, Metadata: map[string]string{
		"instance-id": "i-123", "availability-zone": "us-east-1c"}}
	empty := &Application{Name: "EMPTY"}
	apps := []*Application{
		{Name: "ORDERS", Instances: []*InstanceInfo{sampleInstance(), up2}},
		{Name: "BILLING", Instances: []*InstanceInfo{down}},
		empty,
	}
	return &Applications{VersionsDelta: 1, AppsHashcode: ReconcileHash(apps), Applications: apps}
}

func checkGolden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", "golden", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./eureka -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from golden file:\ngot:\n%s\nwant:\n%s", name, got, want)
	}
}

func TestGoldenDocuments(t *testing.T) {
	apps := sampleApps()
	delta := sampleApps()
	delta.VersionsDelta = 57
	delta.Applications[0].Instances = delta.Applications[0].Instances[:1]
	deleted := delta.Applications[1].Instances[0]
	deleted.ActionType, deleted.LeaseInfo.EvictionTimestamp = ActionDeleted, 1718000300000
	vip := sampleApps()
	vip.Applications = vip.Applications[:1]
	vip.VersionsDelta, vip.AppsHashcode = -1, ReconcileHash(vip.Applications)

	docs := []struct {
		name      string
		json, xml []byte
	}{
		{"instance", AppendInstanceJSON(nil, sampleInstance()), AppendInstanceXML(nil, sampleInstance())},
		{"application", AppendApplicationJSON(nil, apps.Applications[0]), AppendApplicationXML(nil, apps.Applications[0])},
		{"full", AppendApplicationsJSON(nil, apps), AppendApplicationsXML(nil, apps)},
		{"delta", AppendApplicationsJSON(nil, delta), AppendApplicationsXML(nil, delta)},
		{"vip", AppendApplicationsJSON(nil, vip), AppendApplicationsXML(nil, vip)},
		{"empty", AppendApplicationsJSON(nil, &Applications{VersionsDelta: 1}), AppendApplicationsXML(nil, &Applications{VersionsDelta: 1})},
	}
	for _, d := range docs {
		t.Run(d.name, func(t *testing.T) {
			if !json.Valid(d.json) {
				t.Fatalf("invalid JSON: %s", d.json)
			}
			checkGolden(t, d.name+".json", d.json)
			checkGolden(t, d.name+".xml", d.xml)
		})
	}
}

func TestReconcileHash(t *testing.T) {
	mk := func(statuses ...Status) []*Application {
		a := &Application{Name: "A"}
		for _, s := range statuses {
			a.Instances = append(a.Instances, &InstanceInfo{Status: s})
		}
		return []*Application{a}
	}
	cases := []struct {
		apps []*Application
		want string
	}{
		{mk(StatusUp, StatusUp, StatusDown, StatusUp), "DOWN_1_UP_3_"},
		{nil, ""},
		{mk(StatusOutOfService, StatusUp, StatusStarting, StatusUp, StatusOutOfService, StatusUp, StatusUp, StatusUp),
			"OUT_OF_SERVICE_2_STARTING_1_UP_5_"},
		{mk(StatusUnknown), "UNKNOWN_1_"},
		// Every status: Java's TreeMap puts UNKNOWN between STARTING and UP.
		{mk(StatusUp, StatusUnknown, StatusDown, StatusUp, StatusStarting, StatusOutOfService, StatusUp, StatusUp, StatusUp),
			"DOWN_1_OUT_OF_SERVICE_1_STARTING_1_UNKNOWN_1_UP_5_"},
		{mk(StatusUnknown, StatusDown, StatusUp, StatusUp, StatusUp, StatusUp, StatusUp), "DOWN_1_UNKNOWN_1_UP_5_"},
	}
	for _, c := range cases {
		if got := ReconcileHash(c.apps); got != c.want {
			t.Errorf("ReconcileHash = %q, want %q", got, c.want)
		}
	}
}

// The documents we write must read back to the same instances, in both
// formats.
func TestRoundTrip(t *testing.T) {
	apps := sampleApps()
	fromJSON, err := DecodeApplicationsJSON(AppendApplicationsJSON(nil, apps))
	if err != nil {
		t.Fatal(err)
	}
	fromXML, err := DecodeApplicationsXML(AppendApplicationsXML(nil, apps))
	if err != nil {
		t.Fatal(err)
	}
	for _, got := range []*Applications{fromJSON, fromXML} {
		if !bytes.Equal(AppendApplicationsJSON(nil, got), AppendApplicationsJSON(nil, apps)) {
			t.Errorf("round trip changed the document:\n%s\n%s", AppendApplicationsJSON(nil, got), AppendApplicationsJSON(nil, apps))
		}
	}
}

func TestJSONStringEscaping(t *testing.T) {
	got := string(AppendJSONString(nil, "a\"b\\c\n\x01</>&é\xff"))
	want := `"a\"b\\c\n\u0001</>&é` + "\ufffd" + `"`
	if got != want {
		t.Errorf("got %s, want %s", got, want)
	}
}

func TestXMLNameEscaping(t *testing.T) {
	for key, want := range map[string]string{"management_port": "management__port", "a$b": "a_-b", "x.y-z": "x.y-z"} {
		got, ok := EscapeXMLName(key)
		if !ok || got != want {
			t.Errorf("EscapeXMLName(%q) = %q, %v; want %q", key, got, ok, want)
		}
		if back := UnescapeXMLName(got); back != key {
			t.Errorf("UnescapeXMLName(%q) = %q, want %q", got, back, key)
		}
	}
	for _, bad := range []string{"", "1abc", "a b", "a<b", ":ns"} {
		if _, ok := EscapeXMLName(bad); ok {
			t.Errorf("EscapeXMLName(%q) accepted an invalid name", bad)
		}
	}
}

// A document assembled from pieces is the document written whole.
func TestApplicationsFromPieces(t *testing.T) {
	apps := &Applications{VersionsDelta: 3, AppsHashcode: "UP_2_"}
	for _, name := range []string{"A", "B"} {
		i := &InstanceInfo{InstanceID: name + "1", HostName: "h", App: name, Status: StatusUp,
			DataCenterInfo: DataCenterInfo{Name: DataCenterMyOwn}}
		apps.Applications = append(apps.Applications, &Application{Name: name, Instances: []*InstanceInfo{i}})
	}
	for _, f := range []Format{FormatJSON, FormatXML} {
		b := joinPieces(AppendApplicationsHead(nil, f, 3, "UP_2_"), ApplicationsSeparator(f), apps.Applications,
			func(b []byte, a *Application) []byte { return AppendApplicationsEntry(b, f, a) })
		b = AppendApplicationsTail(b, f)
		if whole := AppendApplications(nil, f, apps); string(b) != string(whole) {
			t.Errorf("format %v: pieces\n%s\nwhole\n%s", f, b, whole)
		}
		empty := AppendApplicationsTail(AppendApplicationsHead(nil, f, 1, ""), f)
		if whole := AppendApplications(nil, f, &Applications{VersionsDelta: 1}); string(empty) != string(whole) {
			t.Errorf("format %v: empty pieces %s, whole %s", f, empty, whole)
		}
	}
}

// An application entry assembled from its pieces is the entry written
// whole.
func TestEntryFromPieces(t *testing.T) {
	a := &Application{Name: "A"}
	for _, id := range []string{"a1", "a2", "a3"} {
		a.Instances = append(a.Instances, &InstanceInfo{InstanceID: id, HasInstanceID: true, HostName: "h", App: "A",
			Status: StatusUp, DataCenterInfo: DataCenterInfo{Name: DataCenterMyOwn}, Metadata: map[string]string{"k": id}})
	}
	for _, f := range []Format{FormatJSON, FormatXML} {
		b := joinPieces(AppendEntryHead(nil, f, a.Name), InstanceSeparator(f), a.Instances,
			func(b []byte, i *InstanceInfo) []byte { return AppendEntryInstance(b, f, i) })
		b = AppendEntryTail(b, f)
		if whole := AppendApplicationsEntry(nil, f, a); string(b) != string(whole) {
			t.Errorf("format %v: pieces\n%q\nwhole\n%q", f, b, whole)
		}
	}
}

// joinPieces appends to b each item's piece, with sep between them.
func joinPieces[T any](b, sep []byte, items []T, piece func([]byte, T) []byte) []byte {
	for n, item := range items {
		if n > 0 {
			b = append(b, sep...)
		}
		b = piece(b, item)
	}
	return b
}
