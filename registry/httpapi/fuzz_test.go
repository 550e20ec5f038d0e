package httpapi

import (
	"bytes"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"testing"

	"github.com/eurekagate/eurekagate/eureka"
	"github.com/eurekagate/eurekagate/registry"
)

// FuzzAPI sends arbitrary requests to the API core: it never panics, and a
// request answered with an error leaves the registry exactly as it was.
func FuzzAPI(f *testing.F) {
	seeds, _ := filepath.Glob("../../eureka/testdata/register/*")
	for _, name := range seeds {
		body, _ := os.ReadFile(name)
		f.Add("POST", "/eureka/apps/ORDERS", "application/json", body)
		f.Add("POST", "/eureka/v2/apps/orders/", "application/xml", body)
	}
	batch, _ := os.ReadFile("../replication/testdata/batch-request.json")
	f.Add("POST", "/eureka/peerreplication/batch", "application/json", batch)
	for _, p := range []string{"/eureka/apps/A/x", "/eureka/apps/A/x/status?value=UP", "//eureka//v2/apps/A/x/metadata",
		"/eureka/apps/%zz", "/eureka/instances/x", "/eureka/vips/a-vip", "/eureka/apps/delta", "/eureka/apps/A/x?lastDirtyTimestamp=9"} {
		for _, m := range []string{"GET", "PUT", "DELETE", "POST"} {
			f.Add(m, p, "", []byte(nil))
		}
	}
	f.Fuzz(func(t *testing.T, method, path, contentType string, body []byte) {
		s, _ := newTestStore(t, registry.Config{})
		mustRegister(t, s, inst("A", "x"), false)
		before := s.Version()
		full := string(s.FullPayload(eureka.FormatJSON).Bytes())
		api := NewAPI(s, APIConfig{MaxBodyBytes: 1 << 16})
		rawPath, rawQuery, _ := bytes.Cut([]byte(path), []byte("?"))
		q, _ := parseQuery(string(rawQuery))
		var resp Response
		api.Serve(&Request{Method: method, Path: string(rawPath), Query: q, ContentType: contentType, Body: body}, &resp)
		if resp.Status == 0 {
			t.Fatal("no status")
		}
		if resp.Status >= 400 && (s.Version() != before || string(s.FullPayload(eureka.FormatJSON).Bytes()) != full) {
			t.Fatalf("%s %s answered %d but changed the registry", method, path, resp.Status)
		}
		if method == http.MethodPut && resp.Status == http.StatusOK && len(resp.Body) > 0 && resp.ContentType == "" {
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
