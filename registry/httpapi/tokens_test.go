package httpapi

import (
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/eurekagate/eurekagate/eureka"
	"github.com/eurekagate/eurekagate/internal/testkit"
	"github.com/eurekagate/eurekagate/registry"
)

var updateTokens = flag.Bool("update-tokens", false, "rewrite testdata/tokens.golden")

// Every version token a client may hold, from a read without regions or
// with them, of this node, of another epoch or garbage, gets the answer
// and body the server gave before the remote regions and the local
// registry shared one token (registry.Version): the golden file is that
// server's transcript (tokens.golden, made at the commit before issue
// 48's restructure), the epoch written E, and the run must match it byte
// for byte. -update-tokens writes it again.
func TestTokensAnswerAsBefore(t *testing.T) {
	s, clock := newTestStore(t, registry.Config{RemoteRegions: []registry.RemoteRegion{{Name: "eu-west"}}})
	mustRegister(t, s, inst("A", "x"), false)
	mustRegister(t, s, inst("A", "y"), false)
	remote := inst("B", "z")
	remote.App = "B"
	if err := updateRegion(s, "eu-west", &eureka.Applications{Applications: []*eureka.Application{{Name: "B", Instances: []*eureka.InstanceInfo{remote}}}}, clock.Now()); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(NewHTTPHandler(NewAPI(s, APIConfig{})))
	defer srv.Close()

	e := strconv.FormatUint(s.Epoch(), 16)
	v := s.Version()
	tok := func(parts ...any) string {
		var b strings.Builder
		for n, p := range parts {
			if n > 0 {
				b.WriteByte('.')
			}
			fmt.Fprint(&b, p)
		}
		return b.String()
	}
	foreign := strconv.FormatUint(s.Epoch()+1, 16)
	tokens := []string{
		tok(e, v-1), tok(e, v), tok(e, v+100), // local: behind, current, ahead
		tok(e, v-1, 0), tok(e, v, 1), tok(e, v, 999), tok(e, v+100, 0), // with regions
		tok(foreign, v-1), tok(foreign, v-1, 0), // another epoch
		strings.ToUpper(e) + "." + strconv.FormatUint(v-1, 10), // the epoch's hex in capitals
		"", ".", "x", e, e + ".", e + ".x", e + ".-1", e + ".+1", e + ".1.", e + "..1", e + ".1.x", e + ".1.2.3", "." + strconv.FormatUint(v, 10), "0x" + e + ".1",
	}
	var out strings.Builder
	record := func(path, query string) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodGet, srv.URL+"/eureka/"+path+"?"+query, nil)
		req.Header.Set("Accept", "application/json")
		resp, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&out, "GET %s?%s\n%d %s\nversion: %s\n%s\n\n", path, query, resp.StatusCode, resp.Header.Get("Content-Type"), resp.Header.Get(HeaderVersion), body)
	}
	for _, regions := range []string{"", "&regions=eu-west"} {
		record("apps", strings.TrimPrefix(regions, "&"))
		record("apps/delta", strings.TrimPrefix(regions, "&"))
		for _, token := range tokens {
			record("apps/delta", "wait=0s&watch="+url.QueryEscape(token)+regions)
		}
	}
	got := strings.ReplaceAll(out.String(), e, "E")
	got = strings.ReplaceAll(got, strings.ToUpper(e), "E")
	got = strings.ReplaceAll(got, foreign, "F")
	testkit.Golden(t, filepath.Join("testdata", "tokens.golden"), got, *updateTokens)
}
