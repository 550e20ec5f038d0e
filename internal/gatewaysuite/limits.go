package gatewaysuite

import (
	"context"
	"fmt"
	"math"
	"net"
	"net/http"
	"testing"
	"time"
)

// The cases in this file check the traffic rules' rate limits (the apps
// LIMIT-* of Rules) through both gateways: what passes, and the 429s'
// headers and counts.

// floodFor is how long limitFlood floods its app.
const floodFor = 3 * time.Second

// A limit of 10/s with a burst of 5, flooded by one client for floodFor:
// 5 + 10/s pass and the rest are answered 429 with the limit's headers;
// the metrics count them. The client measures the flood from before its
// first request to after its last answer (T) and the longest answer (g):
// the gateway decided every request within T, so a correct limiter
// passes at most 5 + ⌊10·T⌋; and since two decisions are at most 2g
// apart, every 100 ms slot but the last ones is taken, at least
// 5 + ⌊10·(T − 4g)⌋ − 1 (g at the start and the end, 2g between two
// decisions). Over 3 s that
// is 35 within a few requests, about the issue's ±5 %, on a loaded
// machine too: the bounds follow the measured times, not a guess.
func limitFlood(t *testing.T, start Starter) {
	base, store, m := start(t)
	versioned(t, store, "LIMIT-FLOOD", "1.0")
	c := keepAlive(t)
	before := m.read(t).sum("requests_limited_total", "app", "LIMIT-FLOOD")
	var passed, refused int
	var longest time.Duration
	var last reply
	begin := time.Now()
	for time.Since(begin) < floodFor {
		sent := time.Now()
		r, err := ask(c, base+"/limit-flood/x")
		if err != nil {
			t.Fatal(err)
		}
		longest = max(longest, time.Since(sent))
		switch r.status {
		case 200:
			passed++
		case 429:
			refused++
			last = r
		default:
			t.Fatalf("%d %q", r.status, r.body)
		}
	}
	T := time.Since(begin).Seconds()
	most := 5 + int(math.Floor(10*T))
	least := 5 + int(math.Floor(10*(T-4*longest.Seconds()))) - 1
	t.Logf("%d passed, %d refused in %.3fs (longest answer %v): bounds %d..%d", passed, refused, T, longest, least, most)
	if passed > most || passed < least {
		t.Errorf("%d passed in %.3fs, want %d..%d", passed, T, least, most)
	}
	if refused == 0 {
		t.Fatal("no request refused")
	}
	for k, v := range map[string]string{
		"Retry-After": "1", "RateLimit-Policy": `"app";q=10;w=1`, "RateLimit": `"app";r=0;t=1`,
		"X-RateLimit-Remaining": "0", "X-RateLimit-Replenish-Rate": "10", "X-RateLimit-Burst-Capacity": "5",
	} {
		if got := last.header.Get(k); got != v {
			t.Errorf("a 429's %s: %q, want %q", k, got, v)
		}
	}
	if want := "rate limit exceeded: 10/s, burst 5, by app\n"; last.body != want {
		t.Errorf("a 429's body: %q, want %q", last.body, want)
	}
	if got := m.read(t).sum("requests_limited_total", "app", "LIMIT-FLOOD") - before; got != float64(refused) {
		t.Errorf("requests_limited_total rose by %v, want %d", got, refused)
	}
}

// from returns a client whose connections come from the loopback address
// ip (127.0.0.2: another client to the gateway).
func from(t *testing.T, ip string) *http.Client {
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}}
	tr := &http.Transport{DisableCompression: true, DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
		return d.DialContext(ctx, network, addr)
	}}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Timeout: 20 * time.Second, Transport: tr}
}

// statuses sends n GETs and returns their statuses.
func statuses(t *testing.T, c *http.Client, url string, n int, headers ...string) []int {
	t.Helper()
	var out []int
	for range n {
		r, err := ask(c, url, headers...)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, r.status)
	}
	return out
}

func expectStatuses(t *testing.T, what string, got []int, want ...int) {
	t.Helper()
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("%s: %v, want %v", what, got, want)
	}
}

// A limit keyed by the client's address (burst 3 an hour): one client's
// flood leaves another's allowance whole.
func limitPerClient(t *testing.T, start Starter) {
	base, store, _ := start(t)
	versioned(t, store, "LIMIT-CLIENT", "1.0")
	a, b := from(t, "127.0.0.1"), from(t, "127.0.0.2")
	url := base + "/limit-client/x"
	expectStatuses(t, "client A's flood", statuses(t, a, url, 6), 200, 200, 200, 429, 429, 429)
	expectStatuses(t, "client B after A's flood", statuses(t, b, url, 4), 200, 200, 200, 429)
	expectStatuses(t, "client A again", statuses(t, a, url, 1), 429)
}

// A limit keyed by a header (burst 2 an hour): each value has its own
// bucket, and the requests without the header, whoever sends them,
// share one.
func limitHeaderAbsent(t *testing.T, start Starter) {
	base, store, _ := start(t)
	versioned(t, store, "LIMIT-HEADER", "1.0")
	a, b := from(t, "127.0.0.1"), from(t, "127.0.0.2")
	url := base + "/limit-header/x"
	expectStatuses(t, "key k1", statuses(t, a, url, 3, "X-Api-Key", "k1"), 200, 200, 429)
	expectStatuses(t, "no key, client A", statuses(t, a, url, 1), 200)
	expectStatuses(t, "no key, client B", statuses(t, b, url, 2), 200, 429)
	expectStatuses(t, "key k2, client B", statuses(t, b, url, 2, "X-Api-Key", "k2"), 200, 200)
}
