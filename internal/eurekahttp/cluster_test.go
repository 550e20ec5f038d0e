package eurekahttp

import (
	"context"
	"errors"
	"math/rand/v2"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/eurekagate/eurekagate/eureka"
	"github.com/eurekagate/eurekagate/internal/testkit"
)

func newCluster(t *testing.T, cfg Config, ccfg ClusterConfig, urls ...string) *Cluster {
	t.Helper()
	c, err := NewCluster(newClient(t, cfg), parseAll(t, urls...), ccfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func mustDo(t *testing.T, c *Cluster, r Request) Response {
	t.Helper()
	resp, err := c.Do(context.Background(), r)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

// newFakeServers starts n fake servers that answer status and body, and
// returns them with their base URLs.
func newFakeServers(t *testing.T, n, status int, body string) ([]*fakeServer, []string) {
	t.Helper()
	servers := make([]*fakeServer, n)
	urls := make([]string, n)
	for k := range servers {
		servers[k] = newFakeServer(t, status, body)
		urls[k] = servers[k].url()
	}
	return servers, urls
}

// mustBeAnsweredBy sends a GET of path with c and fails the test unless
// the server at base answered it.
func mustBeAnsweredBy(t *testing.T, c *Cluster, path, base string) {
	t.Helper()
	if resp := mustDo(t, c, Request{Path: path}); resp.Server.Base != base {
		t.Fatalf("GET %s answered by %s, want %s", path, resp.Server.Base, base)
	}
}

func TestFailoverOnServerError(t *testing.T) {
	bad := newFakeServer(t, http.StatusServiceUnavailable, "")
	good := newFakeServer(t, http.StatusOK, `{"ok":true}`)
	c := newCluster(t, Config{}, ClusterConfig{}, bad.url(), good.url())
	resp := mustDo(t, c, Request{Path: "apps/"})
	if resp.Status != 200 || string(resp.Body) != `{"ok":true}` || resp.Server.Base != good.url() {
		t.Fatalf("answer %d %q from %s", resp.Status, resp.Body, resp.Server.Base)
	}
	if bad.hits.Load() != 1 || good.hits.Load() != 1 {
		t.Errorf("hits: bad %d good %d", bad.hits.Load(), good.hits.Load())
	}
}

func TestFailoverOnConnectionRefused(t *testing.T) {
	good := newFakeServer(t, http.StatusOK, "{}")
	c := newCluster(t, Config{}, ClusterConfig{}, refusedURL(t), good.url())
	mustBeAnsweredBy(t, c, "apps/", good.url())
}

func TestFailoverOnTimeout(t *testing.T) {
	hung, _ := hungServer(t)
	good := newFakeServer(t, http.StatusOK, "{}")
	c := newCluster(t, Config{ReadTimeout: 100 * time.Millisecond}, ClusterConfig{}, hung, good.url())
	mustBeAnsweredBy(t, c, "apps/", good.url())
}

// Which statuses fail over depends on the request: a 403 is the answer to
// a delta, and a reason to try the next server for a full fetch.
func TestFailoverRules(t *testing.T) {
	forbidden := newFakeServer(t, http.StatusForbidden, "")
	good := newFakeServer(t, http.StatusOK, "{}")
	c := newCluster(t, Config{}, ClusterConfig{}, forbidden.url(), good.url())
	if resp := mustDo(t, c, Request{Path: "apps/delta", FailOver: FailOverDelta}); resp.Status != 403 {
		t.Fatalf("delta: %d, want the 403 itself", resp.Status)
	}
	if resp := mustDo(t, c, Request{Path: "apps/"}); resp.Status != 200 || resp.Server.Base != good.url() {
		t.Fatalf("full fetch: %d from %s", resp.Status, resp.Server.Base)
	}
}

// The rules are the Java client's legacy evaluator: 2xx and 302 are
// accepted by every request, 404 by registrations and heartbeats, 403 and
// 404 by deltas, anything by a cancel; every other status fails over.
func TestFailoverRulesAreJavas(t *testing.T) {
	rules := map[string]FailoverRule{"full fetch": FailOverUnlessOK, "register": FailOverRegistration,
		"delta": FailOverDelta, "cancel": FailOverNever}
	also := map[string][]int{"register": {404}, "delta": {403, 404}}
	for name, rule := range rules {
		for _, status := range []int{100, 200, 201, 204, 299, 301, 302, 304, 307, 308, 400, 401, 403, 404, 409, 410, 429, 500, 502, 503, 504} {
			ok := status >= 200 && status < 300 || status == 302 || slices.Contains(also[name], status)
			want := name != "cancel" && !ok
			if got := rule(status); got != want {
				t.Errorf("%s: status %d fails over %v, want %v", name, status, got, want)
			}
		}
	}
}

// A 307 (a Java server starting) and a 401 (credentials one node does not
// take) fail over, for every request but a cancel.
func TestFailoverOnRedirectAndUnauthorized(t *testing.T) {
	for _, status := range []int{http.StatusTemporaryRedirect, http.StatusUnauthorized} {
		bad := newFakeServer(t, status, "")
		good := newFakeServer(t, http.StatusOK, "{}")
		c := newCluster(t, Config{}, ClusterConfig{}, bad.url(), good.url())
		for _, r := range []Request{
			{Path: "apps/"},
			{Path: "apps/delta", FailOver: FailOverDelta},
			{Method: http.MethodPut, Path: "apps/A/1?status=UP", FailOver: FailOverRegistration},
		} {
			c.mu.Lock()
			c.current, c.quarantined = 0, map[int]time.Time{}
			c.mu.Unlock()
			if resp := mustDo(t, c, r); resp.Server.Base != good.url() {
				t.Errorf("%d to %s %s: answered by %s", status, r.method(), r.Path, resp.Server.Base)
			}
		}
		c.mu.Lock()
		c.current, c.quarantined = 0, map[int]time.Time{}
		c.mu.Unlock()
		if resp := mustDo(t, c, Request{Method: http.MethodDelete, Path: "apps/A/1", FailOver: FailOverNever}); resp.Status != status {
			t.Errorf("cancel: %d, want the first server's %d", resp.Status, status)
		}
	}
}

// The server that answered stays the first one tried until it fails, even
// when an earlier one recovers.
func TestStickyServer(t *testing.T) {
	a := newFakeServer(t, http.StatusInternalServerError, "")
	b := newFakeServer(t, http.StatusOK, "{}")
	c := newCluster(t, Config{}, ClusterConfig{}, a.url(), b.url())
	mustDo(t, c, Request{Path: "apps/"})
	a.status.Store(http.StatusOK)
	for range 3 {
		mustBeAnsweredBy(t, c, "apps/delta", b.url())
	}
	if a.hits.Load() != 1 {
		t.Errorf("the first server was tried %d times", a.hits.Load())
	}
	// b fails: the request moves on, wrapping around to a, which sticks.
	b.status.Store(http.StatusBadGateway)
	for range 2 {
		mustBeAnsweredBy(t, c, "apps/delta", a.url())
	}
	if b.hits.Load() != 5 {
		t.Errorf("b tried %d times, want 5", b.hits.Load())
	}
}

// A failed server is quarantined for QuarantineDuration, by the Cluster's
// clock; a success ends its quarantine early.
func TestQuarantine(t *testing.T) {
	a := newFakeServer(t, http.StatusServiceUnavailable, "")
	b := newFakeServer(t, http.StatusOK, "{}")
	clk := testkit.NewFakeClock()
	c := newCluster(t, Config{}, ClusterConfig{QuarantineDuration: 10 * time.Second, Now: clk.Now}, a.url(), b.url())
	mustDo(t, c, Request{Path: "apps/"})
	quarantined := func() []int {
		c.mu.Lock()
		defer c.mu.Unlock()
		var out []int
		for idx, until := range c.quarantined {
			if !clk.Now().After(until) {
				out = append(out, idx)
			}
		}
		return out
	}
	if q := quarantined(); len(q) != 1 || q[0] != 0 {
		t.Fatalf("quarantined %v, want the failed server 0", q)
	}
	clk.Advance(10 * time.Second)
	if q := quarantined(); len(q) != 1 {
		t.Fatalf("quarantine ended early: %v", q)
	}
	clk.Advance(time.Millisecond)
	if q := quarantined(); len(q) != 0 {
		t.Fatalf("still quarantined after the duration: %v", q)
	}
}

// With every server quarantined the quarantine is cleared: the next request
// tries them all again instead of giving up.
func TestQuarantineOfEveryServerIsCleared(t *testing.T) {
	a := newFakeServer(t, http.StatusServiceUnavailable, "")
	b := newFakeServer(t, http.StatusServiceUnavailable, "")
	c := newCluster(t, Config{}, ClusterConfig{Now: testkit.NewFakeClock().Now}, a.url(), b.url())
	if _, err := c.Do(context.Background(), Request{Path: "apps/"}); err == nil {
		t.Fatal("every server failing: no error")
	}
	b.status.Store(http.StatusOK)
	mustBeAnsweredBy(t, c, "apps/", b.url())
	if a.hits.Load() != 2 || b.hits.Load() != 2 {
		t.Errorf("hits a %d b %d, want both tried again", a.hits.Load(), b.hits.Load())
	}
}

// The quarantine is cleared once it covers 66% of the servers, as the
// Java client's; below that, quarantined servers are skipped.
func TestQuarantineClearedAtTwoThirds(t *testing.T) {
	for _, tc := range []struct{ servers, quarantined int }{
		{1, 1}, {2, 1}, {2, 2}, {3, 1}, {3, 2}, {4, 2}, {4, 3}, {10, 6}, {10, 7},
	} {
		var urls []string
		for n := range tc.servers {
			urls = append(urls, "http://s"+strconv.Itoa(n)+"/eureka/")
		}
		clk := testkit.NewFakeClock()
		c := newCluster(t, Config{}, ClusterConfig{Now: clk.Now}, urls...)
		for idx := range tc.quarantined {
			c.quarantined[idx] = clk.Now().Add(time.Minute)
		}
		server, _ := c.pick(0)
		wantCleared := 100*tc.quarantined >= 66*tc.servers
		if cleared := len(c.quarantined) == 0; cleared != wantCleared {
			t.Errorf("%d of %d servers quarantined: cleared %v, want %v", tc.quarantined, tc.servers, cleared, wantCleared)
		}
		if want := urls[tc.quarantined%tc.servers]; !wantCleared && server.Base != want {
			t.Errorf("%d of %d servers quarantined: picked %s, want %s", tc.quarantined, tc.servers, server.Base, want)
		}
	}
}

// With three servers, one that failed stays skipped while the others
// answer; when a second one fails, the quarantine (two of three) is
// cleared and the first is tried again.
func TestQuarantineOfTwoOfThreeIsCleared(t *testing.T) {
	a := newFakeServer(t, http.StatusServiceUnavailable, "")
	b := newFakeServer(t, http.StatusOK, "{}")
	d := newFakeServer(t, http.StatusOK, "{}")
	c := newCluster(t, Config{}, ClusterConfig{Now: testkit.NewFakeClock().Now}, a.url(), b.url(), d.url())
	mustDo(t, c, Request{Path: "apps/"}) // a fails, b answers
	a.status.Store(http.StatusOK)
	b.status.Store(http.StatusServiceUnavailable)
	mustBeAnsweredBy(t, c, "apps/", d.url())
	if len(c.quarantined) != 0 {
		t.Errorf("quarantine of two of three servers kept: %v", c.quarantined)
	}
	d.status.Store(http.StatusServiceUnavailable)
	mustBeAnsweredBy(t, c, "apps/", a.url())
}

// With Reorder, the Cluster takes a new order every 10 to 30 minutes (20
// minutes ± 50%) by its clock, and starts over with its first server; a
// quarantine follows its server into the new order.
func TestReshuffle(t *testing.T) {
	servers, urls := newFakeServers(t, 3, http.StatusOK, "{}")
	orders := 0
	clk := testkit.NewFakeClock()
	c := newCluster(t, Config{}, ClusterConfig{Now: clk.Now, QuarantineDuration: time.Hour, Reorder: func() []eureka.ServiceURL {
		orders++
		rotated := append(slices.Clone(urls[orders%3:]), urls[:orders%3]...)
		return parseAll(t, rotated...)
	}}, urls...)
	servers[0].status.Store(http.StatusServiceUnavailable)
	mustBeAnsweredBy(t, c, "apps/", urls[1])
	servers[0].status.Store(http.StatusOK)
	clk.Advance(10*time.Minute - time.Nanosecond)
	mustDo(t, c, Request{Path: "apps/"})
	if orders != 0 {
		t.Fatalf("reordered after less than 10 minutes")
	}
	clk.Advance(20 * time.Minute)
	// The new order is 1, 2, 0 and server 0 is still quarantined: server 1,
	// first of the new order, answers.
	if resp := mustDo(t, c, Request{Path: "apps/"}); orders != 1 || resp.Server.Base != urls[1] {
		t.Fatalf("after 30 minutes: %d reorders, answered by %s", orders, resp.Server.Base)
	}
	if got := c.Servers(); got[0].Base != urls[1] || got[2].Base != urls[0] {
		t.Fatalf("new order %v", got)
	}
	if _, q := c.quarantined[2]; !q || len(c.quarantined) != 1 {
		t.Errorf("quarantine after the reorder: %v, want the first server's at its new place", c.quarantined)
	}
	// The next period: order 2, 0, 1, and the quarantine has ended.
	clk.Advance(31 * time.Minute)
	if resp := mustDo(t, c, Request{Path: "apps/"}); orders != 2 || resp.Server.Base != urls[2] {
		t.Fatalf("second period: %d reorders, answered by %s", orders, resp.Server.Base)
	}
	// Each period is drawn anew within 10 to 30 minutes.
	now := clk.Now()
	lo, hi := time.Hour, time.Duration(0)
	for range 1000 {
		d := c.reshuffleAfter(now).Sub(now)
		lo, hi = min(lo, d), max(hi, d)
	}
	if lo < 10*time.Minute || hi > 30*time.Minute || hi-lo < 15*time.Minute {
		t.Errorf("periods within %v..%v, want spread over 10m..30m", lo, hi)
	}
}

// Without Reorder the order never changes.
func TestNoReorderKeepsTheOrder(t *testing.T) {
	clk := testkit.NewFakeClock()
	c := newCluster(t, Config{}, ClusterConfig{Now: clk.Now}, "http://a/eureka/", "http://b/eureka/", "http://a/eureka/")
	clk.Advance(24 * time.Hour)
	c.pick(0)
	if got := c.Servers(); len(got) != 2 || got[0].Base != "http://a/eureka/" || got[1].Base != "http://b/eureka/" {
		t.Errorf("servers %v", got)
	}
}

// At most three servers per request, and the error lists each attempt.
func TestAtMostThreeServersPerRequest(t *testing.T) {
	servers, urls := newFakeServers(t, 4, http.StatusServiceUnavailable, "")
	c := newCluster(t, Config{}, ClusterConfig{}, urls...)
	_, err := c.Do(context.Background(), Request{Method: http.MethodPut, Path: "apps/A/1?status=UP"})
	var ce *ClusterError
	if !errors.As(err, &ce) || len(ce.Attempts) != 3 {
		t.Fatalf("error %v", err)
	}
	for n, f := range servers {
		want := int32(1)
		if n == 3 {
			want = 0
		}
		if f.hits.Load() != want {
			t.Errorf("server %d tried %d times", n, f.hits.Load())
		}
	}
	msg := err.Error()
	for _, u := range urls[:3] {
		if !strings.Contains(msg, "PUT "+u+"apps/A/1?status=UP: status 503") {
			t.Errorf("error %q does not name %s", msg, u)
		}
	}
	var one *Error
	if !errors.As(err, &one) || one.Status != 503 {
		t.Errorf("errors.As *Error: %+v", one)
	}
}

func TestClusterErrorNamesCauses(t *testing.T) {
	refused := refusedURL(t)
	c := newCluster(t, Config{}, ClusterConfig{}, refused)
	_, err := c.Do(context.Background(), Request{Path: "apps/"})
	if err == nil || !strings.HasPrefix(err.Error(), "eurekahttp: GET "+refused+"apps/: ") || IsTimeout(err) {
		t.Fatalf("error %v", err)
	}
}

func TestClusterCredentialsNotInErrors(t *testing.T) {
	bad := newFakeServer(t, http.StatusServiceUnavailable, "")
	withUser := strings.Replace(bad.url(), "http://", "http://user:secret@", 1)
	c := newCluster(t, Config{}, ClusterConfig{}, withUser)
	_, err := c.Do(context.Background(), Request{Path: "apps/"})
	if err == nil || strings.Contains(err.Error(), "secret") {
		t.Fatalf("error %v", err)
	}
}

func TestClusterStopsWhenContextEnds(t *testing.T) {
	hung, _ := hungServer(t)
	good := newFakeServer(t, http.StatusOK, "{}")
	c := newCluster(t, Config{}, ClusterConfig{}, hung, good.url())
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	_, err := c.Do(ctx, Request{Path: "apps/"})
	if !errors.Is(err, context.DeadlineExceeded) || good.hits.Load() != 0 {
		t.Fatalf("error %v, later server tried %d times", err, good.hits.Load())
	}
	if len(c.quarantined) != 0 {
		t.Errorf("the caller's deadline quarantined %v", c.quarantined)
	}
}

func TestNewClusterNeedsServers(t *testing.T) {
	if _, err := NewCluster(NewClient(Config{}), nil, ClusterConfig{}); err == nil {
		t.Fatal("no servers accepted")
	}
}

func TestZoneOrder(t *testing.T) {
	z := ZonedServers{MyZone: "b", DefaultZone: []string{"http://d/eureka/"},
		Zones: map[string][]string{"a": {"http://a1/eureka"}, "b": {"http://b1/eureka/", "http://user:pw@b2/eureka/"}}}
	for seed := range uint64(20) {
		got, err := z.Order(rand.New(rand.NewPCG(seed, 7)))
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 4 || !strings.HasPrefix(got[0].Base, "http://b") || !strings.HasPrefix(got[1].Base, "http://b") {
			t.Fatalf("my zone first: %+v", got)
		}
		for _, u := range got {
			if u.Base == "http://b2/eureka/" && u.Authorization != "Basic dXNlcjpwdw==" {
				t.Errorf("credentials not taken from the URL: %+v", u)
			}
			if strings.Contains(u.Base, "@") || !strings.HasSuffix(u.Base, "/") {
				t.Errorf("base %q", u.Base)
			}
		}
	}
	// Each group is shuffled: over a few seeds both my-zone servers lead.
	leaders := map[string]bool{}
	for seed := range uint64(20) {
		got, _ := z.Order(rand.New(rand.NewPCG(seed, 7)))
		leaders[got[0].Base] = true
	}
	if len(leaders) != 2 {
		t.Errorf("my zone's servers not shuffled: leaders %v", leaders)
	}
	z.DisablePreferSameZone = true
	got, _ := z.Order(rand.New(rand.NewPCG(1, 2)))
	if strings.HasPrefix(got[0].Base, "http://b") || !strings.HasPrefix(got[2].Base, "http://b") {
		t.Errorf("same-zone preference off, still first: %+v", got)
	}
	// No zone of mine: the default zone's servers are mine.
	got, _ = ZonedServers{DefaultZone: []string{"http://d/eureka/"}, Zones: map[string][]string{"a": {"http://a1/eureka/"}}}.Order(nil)
	if got[0].Base != "http://d/eureka/" {
		t.Errorf("default zone not first: %+v", got)
	}
	if _, err := (ZonedServers{DefaultZone: []string{"ftp://x"}}).Order(nil); err == nil {
		t.Error("a bad service URL was accepted")
	}
}
