package eureka

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func decodeFile(t *testing.T, name string) *InstanceInfo {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "register", name))
	if err != nil {
		t.Fatal(err)
	}
	var i *InstanceInfo
	if strings.HasSuffix(name, ".xml") {
		i, err = DecodeInstanceXML(data)
	} else {
		i, err = DecodeInstanceJSON(data)
	}
	if err != nil {
		t.Fatalf("decode %s: %v", name, err)
	}
	return i
}

func TestDecodeRegistrationBodies(t *testing.T) {
	cases := []struct {
		file  string
		check func(t *testing.T, i *InstanceInfo)
	}{
		{"spring.json", func(t *testing.T, i *InstanceInfo) {
			want(t, "id", i.ID(), "host1:orders:8080")
			want(t, "lastDirty", i.LastDirtyTimestamp, int64(1718000000050))
			want(t, "appGroupName", i.AppGroupName, "")
			want(t, "secureHealthCheckUrl", i.SecureHealthCheckURL, "")
			want(t, "actionType", i.ActionType, ActionNone)
			want(t, "metadata", i.Metadata, map[string]string{"management.port": "8080"})
			want(t, "port", i.Port, Port{8080, true})
			want(t, "securePort", i.SecurePort, Port{443, false})
		}},
		{"java-legacy.json", func(t *testing.T, i *InstanceInfo) {
			want(t, "id", i.ID(), "host1:orders:8080")
			want(t, "lastDirty", i.LastDirtyTimestamp, int64(1718000000050))
			want(t, "lastUpdated", i.LastUpdatedTimestamp, int64(1718000000040))
			want(t, "metadata", i.Metadata, map[string]string{})
			want(t, "lease", i.LeaseInfo.Duration(), 90)
		}},
		{"fargo.json", func(t *testing.T, i *InstanceInfo) {
			want(t, "hasInstanceId", i.HasInstanceID, true)
			want(t, "id", i.ID(), "host1")
			want(t, "app", i.App, "ORDERS")
			want(t, "overridden", i.OverriddenStatus, StatusUnknown)
			want(t, "port", i.Port, Port{8080, true})
			want(t, "securePort", i.SecurePort, Port{443, false})
			want(t, "countryId", i.CountryID, 0)
			want(t, "dataCenter", i.DataCenterInfo.Name, DataCenterMyOwn)
			want(t, "lease", i.LeaseInfo.Duration(), 90)
			want(t, "lastDirty", i.LastDirtyTimestamp, int64(0))
		}},
		{"fargo.xml", func(t *testing.T, i *InstanceInfo) {
			want(t, "hasInstanceId", i.HasInstanceID, true)
			want(t, "id", i.ID(), "host1")
			want(t, "app", i.App, "ORDERS")
			want(t, "status", i.Status, StatusUp)
			want(t, "overridden", i.OverriddenStatus, StatusUnknown)
			want(t, "port", i.Port, Port{8080, true})
			want(t, "securePort", i.SecurePort, Port{443, false})
			want(t, "metadata", i.Metadata, map[string]string{"management_port": "8080"})
			want(t, "vip", i.VIPAddress, "orders")
		}},
		{"handwritten-bare-port.json", func(t *testing.T, i *InstanceInfo) {
			want(t, "app", i.App, "JQSERVICE")
			want(t, "id", i.ID(), "localhost")
			want(t, "hasInstanceId", i.HasInstanceID, false)
			want(t, "port", i.Port, Port{8080, true})
			want(t, "securePort", i.SecurePort, Port{DefaultSecurePort, false})
		}},
		{"handwritten-bool-enabled.json", func(t *testing.T, i *InstanceInfo) {
			want(t, "port", i.Port, Port{8080, true})
			want(t, "securePort", i.SecurePort, Port{8443, true})
		}},
		{"handwritten-no-class.json", func(t *testing.T, i *InstanceInfo) {
			want(t, "dataCenter", i.DataCenterInfo.Name, DataCenterMyOwn)
			want(t, "status", i.Status, StatusUp)
		}},
		{"handwritten-amazon.json", func(t *testing.T, i *InstanceInfo) {
			want(t, "id", i.ID(), "i-0abc")
			want(t, "amazon", i.DataCenterInfo.IsAmazon(), true)
			want(t, "launch index", i.DataCenterInfo.Metadata["ami-launch-index"], "0")
			want(t, "status default", i.Status, StatusUp)
			want(t, "port", i.Port, Port{8080, true})
		}},
	}
	for _, c := range cases {
		t.Run(c.file, func(t *testing.T) { c.check(t, decodeFile(t, c.file)) })
	}
}

func TestDecodeLeniency(t *testing.T) {
	i, err := DecodeInstanceJSON([]byte(`{"hostName":"h","app":"a","ipAddr":"1.2.3.4","status":"weird",
		"overriddenStatus":null,"port":{"$":"81","@enabled":"TRUE"},"countryId":"3",
		"leaseInfo":{"durationInSecs":"30","renewalTimestamp":"5"},"lastDirtyTimestamp":"12",
		"isCoordinatingDiscoveryServer":"true","metadata":{"n":1,"b":true,"s":"x","z":null}}`))
	if err != nil {
		t.Fatal(err)
	}
	want(t, "unwrapped app", i.App, "A")
	want(t, "unknown status", i.Status, StatusUnknown)
	want(t, "port", i.Port, Port{81, true})
	want(t, "countryId", i.CountryID, 3)
	want(t, "duration", i.LeaseInfo.DurationInSecs, 30)
	want(t, "renewalTimestamp alias", i.LeaseInfo.LastRenewalTimestamp, int64(5))
	want(t, "lastDirty", i.LastDirtyTimestamp, int64(12))
	want(t, "coordinating", i.IsCoordinatingDiscoveryServer, true)
	want(t, "metadata", i.Metadata, map[string]string{"n": "1", "b": "true", "s": "x"})

	x, err := DecodeInstanceXML([]byte(`<instance><hostName>h</hostName><app>a</app><ipAddr>i</ipAddr>
		<status>out_of_service</status><overriddenStatus>down</overriddenStatus>
		<securePort enabled="yes">443</securePort><metadata class="java.util.Collections$EmptyMap"/></instance>`))
	if err != nil {
		t.Fatal(err)
	}
	want(t, "xml status upper-cased", x.Status, StatusOutOfService)
	want(t, "xml overriddenStatus camel", x.OverriddenStatus, StatusDown)
	want(t, "xml secure port only if true", x.SecurePort, Port{443, false})
	want(t, "xml empty metadata", len(x.Metadata), 0)

	for _, bad := range []string{`{"instance":`, `[1,2]`, `{"instance":{"port":{"$":"eighty"}}}`,
		`{"instance":{"hostName":{"a":1}}}`, `{"instance":"x"}`} {
		if _, err := DecodeInstanceJSON([]byte(bad)); err != ErrCannotParse {
			t.Errorf("DecodeInstanceJSON(%s) = %v, want ErrCannotParse", bad, err)
		}
	}
	for _, bad := range []string{`<instance>`, `<instance><port>x</port></instance>`, `not xml`} {
		if _, err := DecodeInstanceXML([]byte(bad)); err != ErrCannotParse {
			t.Errorf("DecodeInstanceXML(%s) = %v, want ErrCannotParse", bad, err)
		}
	}
}

func TestDecodeApplicationsDialects(t *testing.T) {
	// Single objects instead of arrays, as XStream-JSON servers wrote them,
	// and a numeric versions__delta.
	apps, err := DecodeApplicationsJSON([]byte(`{"applications":{"versions__delta":7,"apps__hashcode":"UP_1_",
		"application":{"name":"orders","instance":{"hostName":"h","app":"ORDERS","ipAddr":"i","status":"UP",
		"actionType":"DELETED"}}}}`))
	if err != nil {
		t.Fatal(err)
	}
	want(t, "version", apps.VersionsDelta, int64(7))
	want(t, "apps", len(apps.Applications), 1)
	want(t, "name", apps.Applications[0].Name, "ORDERS")
	want(t, "action", apps.Applications[0].Instances[0].ActionType, ActionDeleted)

	none, err := DecodeApplicationsJSON([]byte(`{"applications":{"apps__hashcode":""}}`))
	if err != nil {
		t.Fatal(err)
	}
	want(t, "missing version", none.VersionsDelta, int64(-1))
}

func want[T any](t *testing.T, what string, got, wantV T) {
	t.Helper()
	if !reflect.DeepEqual(got, wantV) {
		t.Errorf("%s = %#v, want %#v", what, got, wantV)
	}
}
