package httpapi

import (
	"encoding/json"
	"encoding/xml"
	"errors"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/eurekagate/eurekagate/eureka"
	"github.com/eurekagate/eurekagate/registry"
	"github.com/eurekagate/eurekagate/registry/regions"
)

// getStatus serves GET /eureka/status in JSON or XML.
func getStatus(t *testing.T, api *API, accept string) []byte {
	t.Helper()
	var resp Response
	api.Serve(&Request{Method: http.MethodGet, Path: "/eureka/status", Accept: accept, Query: urlArgs{}}, &resp)
	if resp.Status != http.StatusOK {
		t.Fatalf("GET /eureka/status (%s): %d %s", accept, resp.Status, resp.Body)
	}
	return resp.Body
}

// xmlStats reads the XML status document, whose stats are elements of
// statusInfo (both maps' keys, each map's sorted, after isHeathly): the
// elements' names in order and their text. It fails on a document that is
// not well-formed.
func xmlStats(t *testing.T, body []byte) (names []string, text map[string]string) {
	t.Helper()
	text = map[string]string{}
	d := xml.NewDecoder(strings.NewReader(string(body)))
	depth := 0
	var b strings.Builder
	for {
		tok, err := d.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("XML status: %v: %s", err, body)
		}
		switch tok := tok.(type) {
		case xml.StartElement:
			depth++
			if depth == 1 && tok.Name.Local != "statusInfo" {
				t.Fatalf("XML root %q", tok.Name.Local)
			}
			if depth == 2 {
				names = append(names, tok.Name.Local)
				b.Reset()
			}
		case xml.CharData:
			b.Write(tok)
		case xml.EndElement:
			if depth == 2 {
				text[tok.Name.Local] = b.String()
			}
			depth--
		}
	}
	return names, text
}

// Without remote regions the status document is what it was before them:
// the same top-level fields, the same keys in both maps, in JSON and in
// XML, whatever this node's region is called.
func TestStatusWithoutRemoteRegionsUnchanged(t *testing.T) {
	for _, cfg := range []registry.Config{{}, {Region: "eu-central"}} {
		s, _ := newTestStore(t, cfg)
		mustRegister(t, s, inst("ORDERS", "o-1"), false)
		api := NewAPI(s, APIConfig{})

		body := getStatus(t, api, "application/json")
		var doc map[string]json.RawMessage
		if err := json.Unmarshal(body, &doc); err != nil {
			t.Fatal(err)
		}
		if keys := sortedKeys(doc); !slices.Equal(keys, []string{"applicationStats", "generalStats", "isHeathly"}) {
			t.Errorf("region %q: top-level fields %v", cfg.Region, keys)
		}
		var info StatusInfo
		if err := json.Unmarshal(body, &info); err != nil {
			t.Fatal(err)
		}
		wantGeneral := []string{"current-memory-usage", "environment", "num-of-cpus", "server-uptime", "total-avail-memory", "version"}
		wantApp := []string{"available-replicas", "expected-renew-client", "registered-instances", "registered-replicas",
			"renew-threshold", "renews-last-minute", "self-preservation-on", "unavailable-replicas"}
		if keys := sortedKeys(info.GeneralStats); !slices.Equal(keys, wantGeneral) {
			t.Errorf("generalStats keys %v, want %v", keys, wantGeneral)
		}
		if keys := sortedKeys(info.ApplicationStats); !slices.Equal(keys, wantApp) {
			t.Errorf("applicationStats keys %v, want %v", keys, wantApp)
		}

		body = getStatus(t, api, "application/xml")
		names, _ := xmlStats(t, body)
		if want := slices.Concat([]string{"isHeathly"}, wantGeneral, wantApp); !slices.Equal(names, want) {
			t.Errorf("XML elements %v, want %v: %s", names, want, body)
		}
		if strings.Contains(string(body), "region") {
			t.Errorf("XML status names a region: %s", body)
		}
	}
}

// With remote regions, /status adds this node's region and each remote
// region's state: as typed JSON in remoteRegions, and as strings in the
// application stats (JSON and XML), the instances counted apart from the
// local registered-instances.
func TestStatusReportsRemoteRegions(t *testing.T) {
	s, clock := newTestStore(t, registry.Config{Region: "us-east-1", RemoteRegionRetention: time.Minute,
		RemoteRegions: []registry.RemoteRegion{{Name: "eu-west"}, {Name: "ap-south"}, {Name: "Odd Name"}}})
	mustRegister(t, s, inst("ORDERS", "o-1"), false)
	api := NewAPI(s, APIConfig{})

	synced := clock.Now()
	remote := &eureka.Applications{Applications: []*eureka.Application{
		{Name: "ORDERS", Instances: []*eureka.InstanceInfo{inst("ORDERS", "eu-1"), inst("ORDERS", "eu-2")}},
		{Name: "BILLING", Instances: []*eureka.InstanceInfo{inst("BILLING", "eu-3")}},
	}}
	if err := regions.MirrorOf(s).Update("eu-west", remote, synced); err != nil {
		t.Fatal(err)
	}
	clock.Advance(30 * time.Second)
	failed := clock.Now()
	regions.MirrorOf(s).Failed("eu-west", failed, errors.New("connection refused"))
	regions.MirrorOf(s).Failed("ap-south", failed, errors.New("timeout"))

	var info StatusInfo
	if err := json.Unmarshal(getStatus(t, api, "application/json"), &info); err != nil {
		t.Fatal(err)
	}
	if got := info.GeneralStats["region"]; got != "us-east-1" {
		t.Errorf("region %q", got)
	}
	if got := info.ApplicationStats["registered-instances"]; got != "1" {
		t.Errorf("registered-instances %q: the remote instances must not count", got)
	}
	if len(info.RemoteRegions) != 3 {
		t.Fatalf("remoteRegions %+v", info.RemoteRegions)
	}
	eu, ap := info.RemoteRegions[0], info.RemoteRegions[1]
	if eu.Name != "eu-west" || !eu.Ready || eu.Dropped || eu.Apps != 2 || eu.Instances != 3 || eu.Syncs != 1 || eu.Failures != 1 ||
		!eu.LastSync.Equal(synced) || !eu.LastAttempt.Equal(failed) || eu.LastError != "connection refused" {
		t.Errorf("eu-west %+v", eu)
	}
	if ap.Name != "ap-south" || ap.Ready || ap.Instances != 0 || ap.Syncs != 0 || ap.Failures != 1 ||
		!ap.LastSync.IsZero() || !ap.LastAttempt.Equal(failed) || ap.LastError != "timeout" {
		t.Errorf("ap-south %+v", ap)
	}
	// The JSON leaves out the times a region never had.
	var raw struct {
		RemoteRegions []map[string]any `json:"remoteRegions"`
	}
	json.Unmarshal(getStatus(t, api, "application/json"), &raw)
	if _, ok := raw.RemoteRegions[1]["last_sync"]; ok {
		t.Errorf("ap-south has a last_sync: %v", raw.RemoteRegions[1])
	}
	if _, ok := raw.RemoteRegions[2]["last_attempt"]; ok {
		t.Errorf("odd name has a last_attempt: %v", raw.RemoteRegions[2])
	}

	want := map[string]string{
		"remote-regions":                      "eu-west, ap-south, odd name",
		"available-remote-regions":            "eu-west",
		"unavailable-remote-regions":          "ap-south, odd name",
		"remote-region.eu-west.ready":         "true",
		"remote-region.eu-west.dropped":       "false",
		"remote-region.eu-west.apps":          "2",
		"remote-region.eu-west.instances":     "3",
		"remote-region.eu-west.last-sync":     synced.UTC().Format("2006-01-02T15:04:05.000Z07:00"),
		"remote-region.eu-west.last-attempt":  failed.UTC().Format("2006-01-02T15:04:05.000Z07:00"),
		"remote-region.eu-west.last-error":    "connection refused",
		"remote-region.eu-west.syncs":         "1",
		"remote-region.eu-west.failures":      "1",
		"remote-region.ap-south.ready":        "false",
		"remote-region.ap-south.last-sync":    "",
		"remote-region.ap-south.failures":     "1",
		"remote-region.odd_name.ready":        "false",
		"remote-region.odd_name.last-attempt": "",
		"registered-instances":                "1",
	}
	for k, v := range want {
		if got, ok := info.ApplicationStats[k]; !ok || got != v {
			t.Errorf("applicationStats[%q] = %q (%v), want %q", k, got, ok, v)
		}
	}
	for _, k := range sortedKeys(info.ApplicationStats) {
		if strings.HasPrefix(k, "remote-region.") && strings.Count(k, ".") != 2 {
			t.Errorf("key %q", k)
		}
	}

	// XML: the same strings, as elements of a well-formed document beside
	// the others (each map's keys sorted, as before).
	names, stats := xmlStats(t, getStatus(t, api, "application/xml"))
	if want := slices.Concat([]string{"isHeathly"}, sortedKeys(info.GeneralStats), sortedKeys(info.ApplicationStats)); !slices.Equal(names, want) {
		t.Errorf("XML elements %v, want %v", names, want)
	}
	if stats["region"] != "us-east-1" {
		t.Errorf("XML region %q", stats["region"])
	}
	for k, v := range want {
		if got, ok := stats[k]; !ok || got != v {
			t.Errorf("XML %s = %q (%v), want %q", k, got, ok, v)
		}
	}

	// A region silent for longer than the retention is dropped: listed
	// unavailable, with no instances.
	clock.Advance(time.Minute)
	regions.MirrorOf(s).DropStale()
	info = StatusInfo{}
	json.Unmarshal(getStatus(t, api, "application/json"), &info)
	if eu := info.RemoteRegions[0]; !eu.Dropped || eu.Instances != 0 || eu.Apps != 0 {
		t.Errorf("eu-west after the retention %+v", eu)
	}
	if got := info.ApplicationStats["unavailable-remote-regions"]; got != "eu-west, ap-south, odd name" {
		t.Errorf("unavailable-remote-regions %q", got)
	}
	if got := info.ApplicationStats["remote-region.eu-west.dropped"]; got != "true" {
		t.Errorf("eu-west dropped %q", got)
	}
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
