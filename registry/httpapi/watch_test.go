package httpapi

import (
	"net/http"
	"testing"
	"time"

	"github.com/eurekagate/eurekagate/registry"
)

// The REST watch follows the Store's one long-poll rule (registry.ParseWait,
// registry.Poll) and keeps its own answers: a wait as seconds or as a
// duration, none given is the default wait, MaxWatchWait bounds it, 400
// for a malformed wait, and 410 for a stale version (of another Store,
// newer than this one's, or older than its change log), at once.
func TestWatchFollowsThePollRule(t *testing.T) {
	s, clock := newTestStore(t, registry.Config{})
	mustRegister(t, s, inst("A", "x"), false)
	api := NewAPI(s, APIConfig{MaxWatchWait: 100 * time.Millisecond})
	defer api.Close()
	serve := func(query string) (Response, time.Duration) {
		t.Helper()
		q, err := parseQuery(query)
		if err != nil {
			t.Fatal(err)
		}
		var resp Response
		start := time.Now()
		api.Serve(&Request{Method: "GET", Path: "/eureka/apps/delta", Query: q, Accept: "application/json"}, &resp)
		return resp, time.Since(start)
	}
	now := s.Token(registry.Version{Local: 1})
	for _, query := range []string{"watch=" + now, "watch=" + now + "&wait=0.05", "watch=" + now + "&wait=50ms", "watch=" + now + "&wait=1m"} {
		resp, took := serve(query)
		if resp.Status != http.StatusOK || resp.Version != now {
			t.Errorf("%s: %d at %q", query, resp.Status, resp.Version)
		}
		if took < 40*time.Millisecond || took > 10*time.Second {
			t.Errorf("%s: answered after %v", query, took)
		}
	}
	for _, query := range []string{"watch=" + now + "&wait=-1s", "watch=" + now + "&wait=soon", "watch=" + now + "&wait=Inf"} {
		if resp, _ := serve(query); resp.Status != http.StatusBadRequest {
			t.Errorf("%s: %d, want 400", query, resp.Status)
		}
	}
	stale := []string{s.Token(registry.Version{Local: 5}), "1.1"}
	clock.Advance(4 * time.Minute)
	s.PurgeDeltas()
	mustRegister(t, s, inst("A", "y"), false)
	stale = append(stale, s.Token(registry.Version{Local: 0})) // its successor, version 1, was purged
	for _, token := range stale {
		if resp, took := serve("watch=" + token + "&wait=1m"); resp.Status != http.StatusGone || took > 5*time.Second {
			t.Errorf("watch=%s: %d after %v, want 410 at once", token, resp.Status, took)
		}
	}
}
