package httpapi_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/eurekagate/eurekagate/internal/testkit"
	"github.com/eurekagate/eurekagate/registry"
	"github.com/eurekagate/eurekagate/registry/httpapi"
)

// Query lists past their bounds are answered 400 with the bound they
// passed (or 431 when the request line is over the server's header
// bound), on the full fetch, the watch and for regions= alike; a list
// at the bound is served.
func TestQueryListBounds(t *testing.T) {
	for _, fd := range frontDoors {
		t.Run(fd.name, func(t *testing.T) {
			base, s := fd.start(t, registry.Config{RemoteRegions: []registry.RemoteRegion{{Name: "eu-west"}}}, httpapi.APIConfig{})
			testkit.MustRegister(t, s, testkit.Inst("A1", "x"), false)
			get := func(query string) (int, string) {
				t.Helper()
				return testkit.HTTPGet(t, base+"/eureka/apps/"+query)
			}
			full, err := http.Get(base + "/eureka/apps/")
			if err != nil {
				t.Fatal(err)
			}
			full.Body.Close()
			token := url.QueryEscape(full.Header.Get(httpapi.HeaderVersion))

			// The list: 15,000 names, 100 KB.
			status, body := get("?apps=" + testkit.NameList("A", 15000))
			if want := map[string]int{"fasthttp": 431, "net/http": 400}[fd.name]; status != want {
				t.Errorf("apps= of 15,000 names: %d %q, want %d", status, body, want)
			}
			tooMany := testkit.NameList("A", registry.MaxQueryListNames+1)
			for _, q := range []string{
				"?apps=" + tooMany,
				"delta?watch=" + token + "&wait=0&apps=" + tooMany,
			} {
				if status, body := get(q); status != 400 || body != "apps: more than 4096 names; a list may hold at most 4096 (ask for the whole registry instead)" {
					t.Errorf("%.40s… of %d names: %d %q, want 400 naming the bound", q, registry.MaxQueryListNames+1, status, body)
				}
			}
			for _, q := range []string{"?regions=" + strings.ToLower(tooMany), "delta?regions=" + strings.ToLower(tooMany)} {
				if status, body := get(q); status != 400 || !strings.HasPrefix(body, "regions: more than 4096 names") {
					t.Errorf("%.40s…: %d %q, want 400 naming the bound", q, status, body)
				}
			}
			long := strings.Repeat("B", registry.MaxQueryListBytes+1)
			if status, body := get("?apps=" + long); status != 400 || !strings.HasPrefix(body, "apps: 32769 bytes; a list may be at most 32768 bytes") {
				t.Errorf("apps= of %d bytes: %d %q, want 400 naming the bound", len(long), status, body)
			}
			if status, body := get("?apps=" + testkit.NameList("A", registry.MaxQueryListNames)); status != 200 || !strings.Contains(body, "<instanceId>x</instanceId>") {
				t.Errorf("apps= of %d names: %d %.200q, want 200 with A1's instance", registry.MaxQueryListNames, status, body)
			}
		})
	}
}
