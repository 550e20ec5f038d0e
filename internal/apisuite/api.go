// Package apisuite is the REST API test suite that every host of the
// registry must pass: the net/http and fasthttp front doors, and Caddy's
// eureka_server handler. Each test starts a fresh registry through the
// host's Starter and talks to it over loopback HTTP.
package apisuite

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/eurekagate/eurekagate/eureka"
	"github.com/eurekagate/eurekagate/internal/testkit"
	"github.com/eurekagate/eurekagate/registry"
	"github.com/eurekagate/eurekagate/registry/httpapi"
	"github.com/eurekagate/eurekagate/registry/replication"
)

type reply struct {
	status int
	header http.Header
	body   string
}

func call(t *testing.T, method, url string, body []byte, headers ...string) reply {
	t.Helper()
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequest(method, url, rd)
	if err != nil {
		t.Fatal(err)
	}
	testkit.SetHeaders(req, headers...)
	resp, got := testkit.Do(t, client, req)
	return reply{resp.StatusCode, resp.Header, got}
}

const jsonCT = "application/json"

func regBody(app, id string) []byte {
	return eureka.AppendInstanceJSON(nil, testkit.Inst(app, id))
}

func register(t *testing.T, base, app, id string) {
	t.Helper()
	r := call(t, "POST", base+"/eureka/apps/"+app, regBody(app, id), "Content-Type", jsonCT)
	if r.status != 204 || r.body != "" {
		t.Fatalf("register %s/%s: %d %q", app, id, r.status, r.body)
	}
}

func registerAndRead(t *testing.T, start Starter) {
	base, _ := start(t, registry.Config{}, httpapi.APIConfig{})
	register(t, base, "orders", "h1:orders:8080")

	// XML registration, as fargo sends by default.
	xmlBody := []byte(fargoXML)
	r := call(t, "POST", base+"/eureka/v2/apps/ORDERS", xmlBody, "Content-Type", "application/xml")
	testkit.Want(t, "xml register", r.status, 204)

	// Every read reflects the registrations at once.
	r = call(t, "GET", base+"/eureka/apps/", nil, "Accept", jsonCT)
	testkit.Want(t, "full status", r.status, 200)
	testkit.Want(t, "full content type", r.header.Get("Content-Type"), jsonCT)
	apps, err := eureka.DecodeApplicationsJSON([]byte(r.body))
	if err != nil {
		t.Fatal(err)
	}
	testkit.Want(t, "hash", apps.AppsHashcode, "UP_2_")
	testkit.Want(t, "version", apps.VersionsDelta, int64(1))

	r = call(t, "GET", base+"/eureka/apps", nil)
	testkit.Want(t, "default is XML", r.header.Get("Content-Type"), "application/xml")
	if !strings.HasPrefix(r.body, "<applications>") {
		t.Errorf("xml body: %.80s", r.body)
	}

	r = call(t, "GET", base+"/eureka/apps/Orders", nil, "Accept", "application/json")
	testkit.Want(t, "app", r.status, 200)
	app, err := eureka.DecodeApplicationJSON([]byte(r.body))
	if err != nil || len(app.Instances) != 2 {
		t.Fatalf("app: %v %s", err, r.body)
	}
	r = call(t, "GET", base+"/eureka/apps/NOPE", nil)
	testkit.Want(t, "unknown app", r.status, 404)
	testkit.Want(t, "unknown app body", r.body, "")

	r = call(t, "GET", base+"/eureka/apps/ORDERS/h1:orders:8080", nil, "Accept", jsonCT)
	testkit.Want(t, "instance", r.status, 200)
	i, err := eureka.DecodeInstanceJSON([]byte(r.body))
	if err != nil || i.InstanceID != "h1:orders:8080" {
		t.Fatalf("instance: %v %s", err, r.body)
	}
	r = call(t, "GET", base+"/eureka/apps/ORDERS/h1%3Aorders%3A8080", nil, "Accept", jsonCT)
	testkit.Want(t, "escaped id", r.status, 200)
	r = call(t, "GET", base+"/eureka/instances/host1", nil)
	testkit.Want(t, "instances/{id}", r.status, 200)
	if !strings.HasPrefix(r.body, "<instance>") {
		t.Errorf("instances/{id} xml: %.40s", r.body)
	}
	r = call(t, "GET", base+"/eureka/instances/nope", nil)
	testkit.Want(t, "instances/{unknown}", r.status, 404)

	r = call(t, "GET", base+"/eureka/vips/orders-vip", nil, "Accept", jsonCT)
	vip, _ := eureka.DecodeApplicationsJSON([]byte(r.body))
	if r.status != 200 || vip == nil || vip.VersionsDelta != -1 || len(vip.Applications) != 1 {
		t.Errorf("vip: %d %s", r.status, r.body)
	}
	r = call(t, "GET", base+"/eureka/svips/none", nil, "Accept", jsonCT)
	testkit.Want(t, "empty svip", r.body, `{"applications":{"versions__delta":"-1","apps__hashcode":"","application":[]}}`)
}

func paths(t *testing.T, start Starter) {
	base, _ := start(t, registry.Config{}, httpapi.APIConfig{Prefix: "/registry"})
	register(t, base, "A", "x")
	for _, p := range []string{"/eureka/apps", "/eureka/apps/", "/eureka/v2/apps", "/eureka/v2/apps/",
		"/eureka//apps", "//eureka/apps//", "/eureka/v1/apps/", "/registry/apps", "/registry/v2/apps/A"} {
		if r := call(t, "GET", base+p, nil); r.status != 200 {
			t.Errorf("GET %s = %d", p, r.status)
		}
	}
	for _, p := range []string{"/apps", "/other/apps", "/eureka", "/eureka/v2/v2/apps", "/eureka/apps/A/x/y/z"} {
		if r := call(t, "GET", base+p, nil); r.status != 404 {
			t.Errorf("GET %s = %d, want 404", p, r.status)
		}
	}
	if r := call(t, "PATCH", base+"/eureka/apps", nil); r.status != 405 {
		t.Errorf("PATCH apps = %d", r.status)
	}
}

func gzipOnlyWhenAsked(t *testing.T, start Starter) {
	base, s := start(t, registry.Config{}, httpapi.APIConfig{})
	register(t, base, "A", "x")
	r := call(t, "GET", base+"/eureka/apps/", nil, "Accept", jsonCT)
	if r.header.Get("Content-Encoding") != "" {
		t.Fatal("gzip without Accept-Encoding")
	}
	plain := r.body
	r = call(t, "GET", base+"/eureka/apps/", nil, "Accept", jsonCT, "Accept-Encoding", "gzip, deflate")
	testkit.Want(t, "encoding", r.header.Get("Content-Encoding"), "gzip")
	zr, err := gzip.NewReader(strings.NewReader(r.body))
	if err != nil {
		t.Fatal(err)
	}
	unzipped, _ := io.ReadAll(zr)
	testkit.Want(t, "gunzipped", string(unzipped), plain)

	// Gzip request bodies are accepted.
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	zw.Write(regBody("A", "y"))
	zw.Close()
	r = call(t, "POST", base+"/eureka/apps/A", buf.Bytes(), "Content-Type", jsonCT, "Content-Encoding", "gzip")
	testkit.Want(t, "gzip register", r.status, 204)
	if _, ok := s.Get("A", "y"); !ok {
		t.Error("gzip registration not stored")
	}
}

func renewCancelStatus(t *testing.T, start Starter) {
	base, s := start(t, registry.Config{}, httpapi.APIConfig{})
	register(t, base, "A", "x")
	url := base + "/eureka/apps/A/x"
	dirty := "1000"

	r := call(t, "PUT", url+"?status=UP&lastDirtyTimestamp="+dirty, nil, "Content-Type", jsonCT, "Accept", jsonCT)
	if r.status != 200 || r.body != "" || r.header.Get("Content-Type") != "" {
		t.Errorf("renew: %d %q %q", r.status, r.body, r.header.Get("Content-Type"))
	}
	r = call(t, "PUT", url, nil) // fargo and js send no parameters
	testkit.Want(t, "bare renew", r.status, 200)
	r = call(t, "PUT", url+"?lastDirtyTimestamp=2000", nil)
	if r.status != 404 || r.body != "" {
		t.Errorf("newer client data: %d %q", r.status, r.body)
	}
	r = call(t, "PUT", url+"?lastDirtyTimestamp=500", nil)
	testkit.Want(t, "older client data", r.status, 200)
	r = call(t, "PUT", url+"?lastDirtyTimestamp=500", nil, "x-netflix-discovery-replication", "true", "Accept", jsonCT)
	testkit.Want(t, "replicated older", r.status, 409)
	if i, err := eureka.DecodeInstanceJSON([]byte(r.body)); err != nil || i.ID() != "x" {
		t.Errorf("409 body: %v %s", err, r.body)
	}
	r = call(t, "PUT", url+"?lastDirtyTimestamp=abc", nil)
	testkit.Want(t, "bad timestamp", r.status, 400)
	r = call(t, "PUT", base+"/eureka/apps/A/nope", nil)
	if r.status != 404 || r.body != "" {
		t.Errorf("unknown renew: %d %q", r.status, r.body)
	}

	r = call(t, "PUT", url+"/status?value=OUT_OF_SERVICE", nil)
	testkit.Want(t, "override", r.status, 200)
	testkit.Want(t, "override body", r.body, "")
	if got := testkit.MustGet(t, s, "A", "x"); got.Status != eureka.StatusOutOfService {
		t.Errorf("status after override: %v", got.Status)
	}
	r = call(t, "GET", base+"/eureka/serverinfo/statusoverrides", nil)
	testkit.Want(t, "statusoverrides", r.body, `{"x":"OUT_OF_SERVICE"}`)
	r = call(t, "PUT", url+"/status?value=out_of_service", nil)
	testkit.Want(t, "lower-case value", r.status, 500)
	r = call(t, "PUT", url+"/status", nil)
	testkit.Want(t, "missing value", r.status, 500)
	r = call(t, "PUT", base+"/eureka/apps/A/nope/status?value=UP", nil)
	testkit.Want(t, "override unknown", r.status, 404)
	r = call(t, "DELETE", url+"/status?value=UP", nil)
	testkit.Want(t, "delete override", r.status, 200)
	if got := testkit.MustGet(t, s, "A", "x"); got.Status != eureka.StatusUp || got.OverriddenStatus != eureka.StatusUnknown {
		t.Errorf("after delete override: %v/%v", got.Status, got.OverriddenStatus)
	}
	r = call(t, "DELETE", url+"/status?value=BOGUS", nil)
	testkit.Want(t, "delete override bad value", r.status, 500)

	r = call(t, "PUT", url+"/metadata?zone=z1&weight=3", nil)
	testkit.Want(t, "metadata", r.status, 200)
	testkit.Want(t, "metadata stored", testkit.MustGet(t, s, "A", "x").Metadata["zone"], "z1")
	r = call(t, "PUT", base+"/eureka/apps/A/nope/metadata?a=b", nil)
	testkit.Want(t, "metadata unknown", r.status, 404)

	r = call(t, "DELETE", url, nil)
	if r.status != 200 || r.body != "" {
		t.Errorf("cancel: %d %q", r.status, r.body)
	}
	r = call(t, "DELETE", url, nil)
	testkit.Want(t, "cancel again", r.status, 404)

	r = call(t, "GET", base+"/eureka/apps/delta", nil, "Accept", jsonCT)
	d, err := eureka.DecodeApplicationsJSON([]byte(r.body))
	if err != nil || len(d.Applications) != 1 || d.Applications[0].Instances[0].ActionType != eureka.ActionDeleted {
		t.Errorf("delta after cancel: %v %s", err, r.body)
	}
	r = call(t, "GET", base+"/eureka/status", nil, "Accept", jsonCT)
	var st map[string]any
	if r.status != 200 || json.Unmarshal([]byte(r.body), &st) != nil || st["isHeathly"] != true {
		t.Errorf("status: %d %s", r.status, r.body)
	}
	r = call(t, "GET", base+"/eureka/status", nil)
	if r.status != 200 || !strings.HasPrefix(r.body, "<statusInfo>") {
		t.Errorf("status xml: %d %s", r.status, r.body)
	}
}

func disableDelta(t *testing.T, start Starter) {
	base, _ := start(t, registry.Config{DisableDelta: true}, httpapi.APIConfig{})
	if r := call(t, "GET", base+"/eureka/apps/delta", nil); r.status != 403 {
		t.Errorf("disabled delta: %d", r.status)
	}
}

// Bad input gets Eureka's error and leaves the registry as it was.
func badInputChangesNothing(t *testing.T, start Starter) {
	base, s := start(t, registry.Config{}, httpapi.APIConfig{MaxBodyBytes: 4096})
	register(t, base, "A", "x")
	before := s.Version()
	full := string(s.Documents().Full(eureka.FormatJSON).Bytes())

	missingHost := testkit.Inst("A", "y")
	missingHost.HostName = ""
	badPort := testkit.Inst("A", "y")
	badPort.Port.Number = 70000
	negativePort := testkit.Inst("A", "y")
	negativePort.SecurePort.Number = -1
	longLease := testkit.Inst("A", "y")
	longLease.LeaseInfo.DurationInSecs = 9_200_000_000_000_000
	cases := []struct {
		name        string
		ct          string
		body        []byte
		status      int
		contentType string
		msg         string
	}{
		{"json garbage", jsonCT, []byte(`{"instance":{`), 400, jsonCT, `{"error": "cannot parse request body"}`},
		{"xml garbage", "application/xml", []byte(`<instance><port>x</port></instance>`), 400, "application/xml",
			`<error><message>cannot parse request body</message></error>`},
		{"missing hostname", jsonCT, eureka.AppendInstanceJSON(nil, missingHost), 400, "text/plain; charset=utf-8", "Missing hostname"},
		{"mismatched app", jsonCT, regBody("B", "y"), 400, "text/plain; charset=utf-8", "Mismatched appName, expecting A but was B"},
		{"no ip", jsonCT, []byte(`{"instance":{"hostName":"h","app":"A","dataCenterInfo":{"name":"MyOwn"}}}`), 400, "text/plain; charset=utf-8", "Missing ip address"},
		{"no datacenter", jsonCT, []byte(`{"instance":{"hostName":"h","app":"A","ipAddr":"1"}}`), 400, "text/plain; charset=utf-8", "Missing dataCenterInfo"},
		{"port out of range", jsonCT, eureka.AppendInstanceJSON(nil, badPort), 400, "text/plain; charset=utf-8",
			"Invalid port, expecting 0 to 65535 but was 70000"},
		{"negative secure port", "application/xml", eureka.AppendInstanceXML(nil, negativePort), 400, "text/plain; charset=utf-8",
			"Invalid securePort, expecting 0 to 65535 but was -1"},
		{"lease overflowing milliseconds", jsonCT, eureka.AppendInstanceJSON(nil, longLease), 400, "text/plain; charset=utf-8",
			"Invalid leaseInfo.durationInSecs, expecting at most 2147483647 but was 9200000000000000"},
		{"unsupported type", "text/plain", regBody("A", "y"), 415, "", ""},
		{"too large", jsonCT, bytes.Repeat([]byte(" "), 5000), 413, "", ""},
	}
	for _, c := range cases {
		r := call(t, "POST", base+"/eureka/apps/A", c.body, "Content-Type", c.ct)
		if r.status != c.status {
			t.Errorf("%s: status %d, want %d (%s)", c.name, r.status, c.status, r.body)
		}
		if c.msg != "" && (r.body != c.msg || r.header.Get("Content-Type") != c.contentType) {
			t.Errorf("%s: %q %q, want %q %q", c.name, r.header.Get("Content-Type"), r.body, c.contentType, c.msg)
		}
	}
	// A gzip bomb over the limit after decompression.
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	zw.Write(bytes.Repeat([]byte(" "), 100000))
	zw.Close()
	if r := call(t, "POST", base+"/eureka/apps/A", buf.Bytes(), "Content-Type", jsonCT, "Content-Encoding", "gzip"); r.status != 413 {
		t.Errorf("gzip over limit: %d", r.status)
	}
	if r := call(t, "POST", base+"/eureka/apps/A", []byte("not gzip"), "Content-Type", jsonCT, "Content-Encoding", "gzip"); r.status != 400 {
		t.Errorf("bad gzip: %d", r.status)
	}
	if s.Version() != before || string(s.Documents().Full(eureka.FormatJSON).Bytes()) != full {
		t.Error("bad input changed the registry")
	}
}

func replicationBatch(t *testing.T, start Starter) {
	base, s := start(t, registry.Config{}, httpapi.APIConfig{})
	body := []byte(javaBatch)
	r := call(t, "POST", base+"/eureka/peerreplication/batch/", body, "Content-Type", jsonCT, "Accept", jsonCT)
	testkit.Want(t, "batch", r.status, 200)
	results, err := replication.DecodeResults([]byte(r.body))
	if err != nil {
		t.Fatal(err)
	}
	codes := make([]int, len(results))
	for n, res := range results {
		codes[n] = res.StatusCode
	}
	// Register, Heartbeat, Heartbeat (older: 409), StatusUpdate,
	// DeleteStatusOverride without timestamp (500), Cancel of an unknown
	// instance (404), Register, Cancel.
	testkit.Want(t, "codes", codes, []int{200, 200, 409, 200, 500, 404, 200, 200})
	if results[2].Instance == nil || results[2].Instance.ID() != "h1:orders:8080" {
		t.Errorf("409 without the receiver's instance")
	}
	got := testkit.MustGet(t, s, "ORDERS", "h1:orders:8080")
	testkit.Want(t, "status", got.Status, eureka.StatusOutOfService)
	if _, ok := s.Get("ORDERS", "h2:orders:8080"); ok {
		t.Error("replicated cancel not applied")
	}
	r = call(t, "POST", base+"/eureka/peerreplication/batch", []byte("{"), "Content-Type", jsonCT)
	testkit.Want(t, "bad batch", r.status, 400)
}
