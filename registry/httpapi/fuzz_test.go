package httpapi

import (
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/eurekagate/eurekagate/eureka"
	"github.com/eurekagate/eurekagate/internal/testkit"
	"github.com/eurekagate/eurekagate/registry"
)

// documented is every status the API core answers (front doors add 408,
// 413 and 431 of their own).
var documented = map[int]bool{200: true, 204: true, 400: true, 401: true, 403: true, 404: true, 405: true,
	409: true, 410: true, 413: true, 415: true, 500: true, 503: true}

// fuzzHeaders reads the fuzzer's "Name: value" lines as request headers,
// names matched case-insensitively as the front doors match them; a later
// line replaces an earlier one of the same name.
func fuzzHeaders(lines string) http.Header {
	h := http.Header{}
	for _, line := range strings.Split(lines, "\n") {
		name, value, _ := strings.Cut(line, ":")
		h.Set(strings.TrimSpace(name), strings.TrimSpace(value))
	}
	return h
}

// simpleType reports whether a Content-Type is one an HTML form or a fetch
// without a preflight may send.
func simpleType(ct string) bool {
	mt, _, _ := strings.Cut(ct, ";")
	switch strings.ToLower(strings.TrimSpace(mt)) {
	case "", "application/x-www-form-urlencoded", "multipart/form-data", "text/plain":
		return true
	}
	return false
}

// FuzzAPI sends arbitrary requests (method, path and query, headers as
// "Name: value" lines, body; with basic auth on or off) through the whole
// request path of the API core. It asserts that the core never panics,
// answers a documented status, never changes the registry on a read or on
// a refused request, and never lets through a write that another site's
// page could make a browser send: a CORS-simple one (POST with a form,
// text/plain or no type), or one from a browser without HeaderCSRF.
func FuzzAPI(f *testing.F) {
	seeds, _ := filepath.Glob("../../eureka/testdata/register/*")
	for _, name := range seeds {
		body, _ := os.ReadFile(name)
		f.Add("POST", "/eureka/apps/ORDERS", "Content-Type: application/json", body, false)
		f.Add("POST", "/eureka/v2/apps/orders/", "Content-Type: application/xml", body, false)
		f.Add("POST", "/eureka/apps/ORDERS", "Content-Type: text/plain", body, false)
		f.Add("POST", "/eureka/apps/ORDERS", "Content-Type: application/json\nAuthorization: Basic b3BzOnMzY3JldA==", body, true)
	}
	batch, _ := os.ReadFile("../replication/testdata/batch-request.json")
	f.Add("POST", "/eureka/peerreplication/batch", "Content-Type: application/json", batch, false)
	f.Add("POST", "/eureka/peerreplication/batch", "Content-Type: text/plain;charset=UTF-8\nOrigin: http://evil", batch, false)
	f.Add("POST", "/eureka/peerreplication/batch", "Content-Type: application/json\nContent-Encoding: gzip", batch, false)
	for _, p := range []string{"/eureka/apps/A/x", "/eureka/apps/A/x/status?value=UP", "//eureka//v2/apps/A/x/metadata?k=v",
		"/eureka/apps/%zz", "/eureka/instances/x", "/eureka/vips/a-vip", "/eureka/apps/delta", "/eureka/apps/A/x?lastDirtyTimestamp=9"} {
		for _, m := range []string{"GET", "PUT", "DELETE", "POST", "OPTIONS"} {
			f.Add(m, p, "", []byte(nil), false)
		}
		f.Add("PUT", p, "Sec-Fetch-Site: cross-site", []byte(nil), false)
		f.Add("DELETE", p, "Origin: http://localhost:8761\nEurekagate-CSRF: 1\nAuthorization: basic b3BzOnMzY3JldA==", []byte(nil), true)
		f.Add("PUT", p, "Content-Type: application/x-www-form-urlencoded\nx-netflix-discovery-replication: true", []byte("a=b"), false)
	}
	hash := testkit.PasswordHash(f, "s3cret")
	f.Fuzz(func(t *testing.T, method, path, headers string, body []byte, auth bool) {
		s, _ := newTestStore(t, registry.Config{})
		mustRegister(t, s, inst("A", "x"), false)
		before := s.Version()
		full := string(s.Documents().Full(eureka.FormatJSON).Bytes())
		// Watches end at once: nothing changes while they wait.
		cfg := APIConfig{MaxBodyBytes: 1 << 16, MaxBatchBytes: 1 << 16, MaxWatchWait: time.Millisecond}
		if auth {
			cfg.Auth = AuthConfig{Users: []Account{{Username: "ops", PasswordHash: hash}}}
		}
		api := NewAPI(s, cfg)
		rawPath, rawQuery, _ := strings.Cut(path, "?")
		q, _ := parseQuery(rawQuery)
		req := &Request{Method: method, Path: rawPath, Query: q, Body: body}
		readHeaders(req, fuzzHeaders(headers))
		var resp Response
		api.Serve(req, &resp)
		if !documented[resp.Status] {
			t.Fatalf("%s %s answered %d, not a documented status", method, path, resp.Status)
		}
		changed := s.Version() != before || string(s.Documents().Full(eureka.FormatJSON).Bytes()) != full
		read := method == http.MethodGet || method == http.MethodHead
		forgeable := (method == http.MethodPost && simpleType(req.ContentType)) || ((req.Origin != "" || req.FetchSite != "") && req.CSRF == "")
		switch {
		case changed && (resp.Status >= 400 || read):
			t.Fatalf("%s %s answered %d but changed the registry", method, path, resp.Status)
		case !read && forgeable && resp.Status < 300:
			t.Fatalf("%s %s with %q, forgeable by another site, answered %d", method, path, headers, resp.Status)
		case !read && auth && resp.Status < 300 && req.Authorization == "":
			t.Fatalf("%s %s without credentials answered %d", method, path, resp.Status)
		case resp.Status == http.StatusOK && len(resp.Body) > 0 && resp.ContentType == "":
			t.Fatal("body without content type")
		}
	})
}

// FuzzRoute checks the path router alone: no panic, and an accepted path
// names a known endpoint.
func FuzzRoute(f *testing.F) {
	for _, p := range []string{"/eureka/apps", "/eureka/v2/apps/A/b%3Ac/status", "//eureka///apps//", "/x/eureka/apps", "/eureka/serverinfo/statusoverrides"} {
		f.Add(p)
	}
	prefixes := [][]string{{"eureka"}, {"registry", "v1"}}
	f.Fuzz(func(t *testing.T, path string) {
		var r route
		if parseRoute(path, prefixes, &r) && r.ep == epNone {
			t.Fatalf("%q accepted without an endpoint", path)
		}
	})
}

// parseQuery parses a raw query string into Args.
func parseQuery(raw string) (Args, error) {
	v, err := url.ParseQuery(raw)
	return urlArgs(v), err
}
