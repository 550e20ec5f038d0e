package apisuite

import (
	"testing"

	"github.com/eurekagate/eurekagate/eureka"
	"github.com/eurekagate/eurekagate/registry"
	"github.com/eurekagate/eurekagate/registry/httpapi"
)

// Writes a web page could make a browser send (forms, text/plain, bodies
// without a type, anything from a browser without the custom header) are
// refused and change nothing; the requests real Eureka clients send go
// through.
func noForgedWrites(t *testing.T, start Starter) {
	base, s := start(t, registry.Config{}, httpapi.APIConfig{})
	register(t, base, "A", "x")
	before := s.Version()
	full := string(s.Documents().Full(eureka.FormatJSON).Bytes())
	batch := []byte(`{"replicationList":[{"action":"Cancel","appName":"A","id":"x"}]}`)
	app, inst, batchURL := base+"/eureka/apps/A", base+"/eureka/apps/A/x", base+"/eureka/peerreplication/batch/"

	refused := []struct {
		name, method, url string
		body              []byte
		status            int
		headers           []string
	}{
		{"register without a type", "POST", app, regBody("A", "y"), 415, nil},
		{"register as text/plain", "POST", app, regBody("A", "y"), 415, []string{"Content-Type", "text/plain"}},
		{"register as a form", "POST", app, regBody("A", "y"), 415, []string{"Content-Type", "application/x-www-form-urlencoded"}},
		{"register as multipart", "POST", app, regBody("A", "y"), 415, []string{"Content-Type", "multipart/form-data; boundary=x"}},
		{"register as text/plain with a json parameter", "POST", app, regBody("A", "y"), 415, []string{"Content-Type", "text/plain; x=json"}},
		{"batch as text/plain", "POST", batchURL, batch, 415, []string{"Content-Type", "text/plain;charset=UTF-8"}},
		{"batch without a type", "POST", batchURL, batch, 415, nil},
		{"batch as xml", "POST", batchURL, batch, 415, []string{"Content-Type", "application/xml"}},
		{"cancel as a form", "DELETE", inst, nil, 415, []string{"Content-Type", "application/x-www-form-urlencoded"}},
		{"status as text/plain", "PUT", inst + "/status?value=OUT_OF_SERVICE", nil, 415, []string{"Content-Type", "text/plain"}},
		{"heartbeat with an untyped body", "PUT", inst, []byte("x"), 415, nil},
		{"cancel from another origin", "DELETE", inst, nil, 403, []string{"Origin", "http://evil.example"}},
		{"status from a browser", "PUT", inst + "/status?value=OUT_OF_SERVICE", nil, 403, []string{"Sec-Fetch-Site", "same-site"}},
		{"register from a browser", "POST", app, regBody("A", "y"), 403, []string{"Content-Type", jsonCT, "Origin", "http://evil.example", "Sec-Fetch-Site", "cross-site"}},
		{"register deflated", "POST", app, regBody("A", "y"), 415, []string{"Content-Type", jsonCT, "Content-Encoding", "deflate"}},
		{"register in brotli", "POST", app, regBody("A", "y"), 415, []string{"Content-Type", jsonCT, "Content-Encoding", "br"}},
		{"register in two encodings", "POST", app, regBody("A", "y"), 415, []string{"Content-Type", jsonCT, "Content-Encoding", "gzip, deflate"}},
	}
	for _, c := range refused {
		if r := call(t, c.method, c.url, c.body, c.headers...); r.status != c.status {
			t.Errorf("%s: %d %q, want %d", c.name, r.status, r.body, c.status)
		}
	}
	if s.Version() != before || string(s.Documents().Full(eureka.FormatJSON).Bytes()) != full {
		t.Fatal("a refused write changed the registry")
	}
	// A preflight is never approved.
	r := call(t, "OPTIONS", inst, nil, "Origin", "http://evil.example", "Access-Control-Request-Method", "DELETE",
		"Access-Control-Request-Headers", httpapi.HeaderCSRF)
	if r.header.Get("Access-Control-Allow-Origin") != "" || r.header.Get("Access-Control-Allow-Headers") != "" || r.status < 400 {
		t.Errorf("preflight: %d %v", r.status, r.header)
	}

	// What Eureka clients send.
	accepted := []struct {
		name, method, url string
		body              []byte
		status            int
		headers           []string
	}{
		{"heartbeat without a type (Java, fargo, eureka-js-client)", "PUT", inst + "?status=UP&lastDirtyTimestamp=1000", nil, 200, nil},
		{"heartbeat as json (Spring)", "PUT", inst, nil, 200, []string{"Content-Type", jsonCT, "Accept", jsonCT}},
		{"status without a type", "PUT", inst + "/status?value=OUT_OF_SERVICE", nil, 200, nil},
		{"delete override as xml", "DELETE", inst + "/status", nil, 200, []string{"Content-Type", "application/xml"}},
		{"metadata", "PUT", inst + "/metadata?zone=z1", nil, 200, nil},
		{"register with a charset", "POST", app, regBody("A", "y"), 204, []string{"Content-Type", "application/json; charset=UTF-8"}},
		{"register as a +json type", "POST", app, regBody("A", "z"), 204, []string{"Content-Type", "application/vnd.eureka+json"}},
		{"register as text/xml", "POST", base + "/eureka/apps/ORDERS", []byte(fargoXML), 204, []string{"Content-Type", "text/xml"}},
		{"register, identity encoding", "POST", app, regBody("A", "w"), 204, []string{"Content-Type", jsonCT, "Content-Encoding", "identity"}},
		{"a browser write with the header (the dashboard)", "PUT", inst + "/status?value=UP", nil, 200,
			[]string{"Origin", base, "Sec-Fetch-Site", "same-origin", httpapi.HeaderCSRF, "1"}},
		{"cancel", "DELETE", inst, nil, 200, nil},
	}
	for _, c := range accepted {
		if r := call(t, c.method, c.url, c.body, c.headers...); r.status != c.status {
			t.Errorf("%s: %d %q, want %d", c.name, r.status, r.body, c.status)
		}
	}
	if _, ok := s.Get("A", "x"); ok || s.Len() != 4 {
		t.Errorf("after the accepted writes: %d instances, A/x present %v; want 4, cancelled", s.Len(), ok)
	}
}
