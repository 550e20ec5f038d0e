package httpapi

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/eurekagate/eurekagate/eureka"
	"github.com/eurekagate/eurekagate/internal/testkit"
	"github.com/eurekagate/eurekagate/registry"
	"github.com/eurekagate/eurekagate/registry/regions"
)

// Reads with regions=: 403 until the region is ready, the merged registry
// and a token with the remote version once it is, the transparent fallback, and a watch
// with regions that a remote change ends.
func TestRegionsReadsThroughTheAPI(t *testing.T) {
	s, _ := newTestStore(t, registry.Config{RemoteRegions: []registry.RemoteRegion{{Name: "eu-west"}}})
	mustRegister(t, s, inst("A", "x"), false)
	api := NewAPI(s, APIConfig{})
	defer api.Close()
	serve := func(path, query string) Response {
		t.Helper()
		q, err := parseQuery(query)
		if err != nil {
			t.Fatal(err)
		}
		var resp Response
		api.Serve(&Request{Method: "GET", Path: path, Query: q, Accept: "application/json"}, &resp)
		return resp
	}
	body := func(r Response) string {
		if r.Payload != nil {
			return string(r.Payload.Bytes())
		}
		return string(r.Body)
	}
	for _, path := range []string{"/eureka/apps", "/eureka/apps/delta"} {
		if r := serve(path, "regions=eu-west"); r.Status != http.StatusForbidden {
			t.Errorf("%s before the region is ready: %d, want 403", path, r.Status)
		}
		if r := serve(path, "regions=mars"); r.Status != http.StatusOK {
			t.Errorf("%s with an unknown region: %d, want 200 (ignored)", path, r.Status)
		}
	}
	remote := inst("B", "y")
	remote.App = "B"
	regions.MirrorOf(s).Update("eu-west", &eureka.Applications{Applications: []*eureka.Application{{Name: "B", Instances: []*eureka.InstanceInfo{remote}}}}, time.Now())
	full := serve("/eureka/apps", "regions=eu-west")
	if full.Status != 200 || !strings.Contains(body(full), `"B"`) || !strings.Contains(body(full), `"apps__hashcode":"UP_2_"`) {
		t.Fatalf("merged full: %d %s", full.Status, body(full))
	}
	if v, ok := s.ParseToken(full.Version); !ok || !v.Regions {
		t.Errorf("full fetch with regions carries %q, not a regions token", full.Version)
	}
	if local := serve("/eureka/apps", ""); strings.Contains(body(local), `"B"`) {
		t.Errorf("a plain read holds the remote region: %s", body(local))
	}
	if r := serve("/eureka/apps/B", ""); r.Status != 200 || !strings.Contains(body(r), `"y"`) {
		t.Errorf("fallback: %d %s", r.Status, body(r))
	}

	done := make(chan Response, 1)
	go func() { done <- serve("/eureka/apps/delta", "regions=eu-west&wait=10s&watch="+full.Version) }()
	// Held before the change, so that the change is what wakes it.
	testkit.Eventually(t, 5*time.Second, "the watch is held", func() bool { return s.Stats().Totals().WatchesHeld == 1 })
	moved := *remote
	moved.Status = eureka.StatusDown
	moved.LastUpdatedTimestamp++
	regions.MirrorOf(s).Update("eu-west", &eureka.Applications{Applications: []*eureka.Application{{Name: "B", Instances: []*eureka.InstanceInfo{&moved}}}}, time.Now())
	select {
	case r := <-done:
		if r.Status != 200 || !strings.Contains(body(r), `"DOWN"`) || !strings.Contains(body(r), `"apps__hashcode":"DOWN_1_UP_1_"`) {
			t.Errorf("watch answer: %d %s", r.Status, body(r))
		}
	case <-time.After(5 * time.Second):
		t.Fatal("a remote change did not end the watch")
	}
	if r := serve("/eureka/apps/delta", "regions=eu-west&wait=1s&watch="+s.Token(registry.Version{Local: 1})); r.Status != http.StatusGone {
		t.Errorf("a local token with regions: %d, want 410", r.Status)
	}
}
