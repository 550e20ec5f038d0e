package gatewaysuite

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/eurekagate/eurekagate/internal/testkit"
)

// The cases in this file check the traffic both gateways record
// (package traffic) as their metrics show it (traffic/metrics.Traffic),
// and the trace context and request id an instance is sent.

// Metrics is how the suite reads the traffic metrics of the gateway a
// Starter started.
type Metrics struct {
	// Namespace is the prefix of their names, before "_gateway_":
	// "eureka" for the fasthttp gateway, "caddy_eureka" in Caddy.
	Namespace string
	// Scrape returns the metrics in Prometheus' text format, as a GET of
	// /metrics does; other metrics may come with them. It fails t if it
	// cannot.
	Scrape func(t *testing.T) string
}

// sample is one line of the text format: a series and its value.
type sample struct {
	name   string
	labels map[string]string
	value  float64
}

// scrape is the gateway's traffic metrics at one moment.
type scrape struct {
	prefix  string // <namespace>_gateway_
	samples []sample
}

// read scrapes m.
func (m Metrics) read(t *testing.T) scrape {
	t.Helper()
	if m.Scrape == nil {
		t.Fatal("the Starter gave no Metrics")
	}
	s := scrape{prefix: m.Namespace + "_gateway_"}
	for n, line := range strings.Split(m.Scrape(t), "\n") {
		if line = strings.TrimSpace(line); line == "" || line[0] == '#' {
			continue
		}
		smp, err := parseSample(line)
		if err != nil {
			t.Fatalf("metrics line %d: %v: %q", n+1, err, line)
		}
		if strings.HasPrefix(smp.name, s.prefix) {
			s.samples = append(s.samples, smp)
		}
	}
	return s
}

// parseSample parses a line of the text format: name, labels in braces
// if any (values quoted, with \\, \" and \n escaped), value, and a
// timestamp the suite ignores.
func parseSample(line string) (sample, error) {
	s := sample{labels: map[string]string{}}
	i := strings.IndexAny(line, "{ ")
	if i < 0 {
		return s, fmt.Errorf("no value")
	}
	s.name, line = line[:i], line[i:]
	if line[0] == '{' {
		line = line[1:]
		for {
			line = strings.TrimLeft(line, " ,")
			if strings.HasPrefix(line, "}") {
				line = line[1:]
				break
			}
			eq := strings.Index(line, "=\"")
			if eq < 0 {
				return s, fmt.Errorf("bad label")
			}
			name := strings.TrimSpace(line[:eq])
			line = line[eq+2:]
			var v strings.Builder
			for {
				if line == "" {
					return s, fmt.Errorf("unterminated label value")
				}
				c := line[0]
				line = line[1:]
				if c == '"' {
					break
				}
				if c == '\\' && line != "" {
					c, line = line[0], line[1:]
					if c == 'n' {
						c = '\n'
					}
				}
				v.WriteByte(c)
			}
			s.labels[name] = v.String()
		}
	}
	fields := strings.Fields(line)
	if len(fields) == 0 {
		return s, fmt.Errorf("no value")
	}
	v, err := strconv.ParseFloat(fields[0], 64)
	if err != nil {
		return s, err
	}
	s.value = v
	return s, nil
}

// sum adds up the values of the series of name (without the prefix)
// whose labels have the values match gives (name, value, ...).
func (s scrape) sum(name string, match ...string) float64 {
	var total float64
	for _, smp := range s.samples {
		if smp.name == s.prefix+name && smp.matches(match) {
			total += smp.value
		}
	}
	return total
}

func (s sample) matches(match []string) bool {
	for n := 0; n+1 < len(match); n += 2 {
		if s.labels[match[n]] != match[n+1] {
			return false
		}
	}
	return true
}

// apps returns the values of the app label of every series.
func (s scrape) apps() map[string]bool {
	out := map[string]bool{}
	for _, smp := range s.samples {
		if app, ok := smp.labels["app"]; ok {
			out[app] = true
		}
	}
	return out
}

// delta is how much the series of name matching match rose from before
// to after.
func delta(before, after scrape, name string, match ...string) float64 {
	return after.sum(name, match...) - before.sum(name, match...)
}

// expectDelta checks a delta, naming the series.
func expectDelta(t *testing.T, before, after scrape, want float64, name string, match ...string) {
	t.Helper()
	if got := delta(before, after, name, match...); got != want {
		t.Errorf("%s%s%v rose by %v, want %v", after.prefix, name, match, got, want)
	}
}

// Requests are counted per app by status class, whoever made the answer:
// 40 answered 200 and 5 answered 404 by one app's instance, 20 answered
// 500 by another's. The two apps' request counts rise by the 65
// requests, all GET and of no subset; their latency histograms count
// them; no attempt failed (an answer is not a failure, a 500 neither);
// nothing is in flight once they are answered.
func trafficCounts(t *testing.T, start Starter) {
	base, store, m := start(t)
	ok := newBackend(t, "ok", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/missing" {
			http.NotFound(w, r)
			return
		}
		w.Write([]byte("ok"))
	}))
	failing := newBackend(t, "failing", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "broken", http.StatusInternalServerError)
	}))
	register(t, store, instance("traffic-ok", "ok", ok.port))
	register(t, store, instance("traffic-fail", "failing", failing.port))
	c := keepAlive(t)
	before := m.read(t)
	const served, missing, failed = 40, 5, 20
	for _, r := range []struct {
		path   string
		n      int
		status int
	}{{"/traffic-ok/x", served, 200}, {"/traffic-fail/x", failed, 500}, {"/traffic-ok/missing", missing, 404}} {
		for range r.n {
			got, err := ask(c, base+r.path)
			if err != nil {
				t.Fatal(err)
			}
			if got.status != r.status {
				t.Fatalf("GET %s: %d %q, want %d", r.path, got.status, got.body, r.status)
			}
		}
	}
	after := m.read(t)
	const okApp, failApp = "TRAFFIC-OK", "TRAFFIC-FAIL"
	for _, e := range []struct {
		app, code string
		want      float64
	}{
		{okApp, "2xx", served}, {okApp, "4xx", missing}, {failApp, "5xx", failed},
		{okApp, "1xx", 0}, {okApp, "3xx", 0}, {okApp, "5xx", 0},
		{failApp, "1xx", 0}, {failApp, "2xx", 0}, {failApp, "3xx", 0}, {failApp, "4xx", 0},
	} {
		expectDelta(t, before, after, e.want, "requests_total", "app", e.app, "code", e.code)
	}
	total := delta(before, after, "requests_total", "app", okApp) + delta(before, after, "requests_total", "app", failApp)
	if total != served+missing+failed {
		t.Errorf("the apps' requests rose by %v, want %d", total, served+missing+failed)
	}
	for _, app := range []string{okApp, failApp} {
		expectDelta(t, before, after, delta(before, after, "requests_total", "app", app),
			"requests_total", "app", app, "method", "GET", "subset", "")
		expectDelta(t, before, after, delta(before, after, "requests_total", "app", app),
			"request_duration_seconds_count", "app", app)
		expectDelta(t, before, after, delta(before, after, "requests_total", "app", app),
			"request_duration_seconds_bucket", "app", app, "le", "+Inf")
		if d := delta(before, after, "request_duration_seconds_sum", "app", app); d <= 0 || d > 20 {
			t.Errorf("%s: request_duration_seconds_sum rose by %v s", app, d)
		}
		expectDelta(t, before, after, 0, "upstream_failures_total", "app", app)
		expectDelta(t, before, after, 0, "retries_total", "app", app)
		expect(t, app+" in flight", after.sum("requests_in_flight", "app", app), 0)
		expect(t, app+"'s instance in flight", after.sum("instance_requests_in_flight", "app", app), 0)
	}
	if !after.apps()[okApp] || !after.apps()[failApp] {
		t.Errorf("no series of %s and %s: apps %v", okApp, failApp, after.apps())
	}
}

// An attempt at a registered instance that refuses connections counts as
// a refused upstream failure and, as the request goes on to the live
// instance, as a retry, and the instance is ejected; the request counts
// once, answered.
func trafficRefused(t *testing.T, start Starter) {
	base, store, m := start(t)
	live := newBackend(t, "live", nil)
	register(t, store, instance("traffic-refused", "dead", testkit.FreePort(t)))
	register(t, store, instance("traffic-refused", "live", live.port))
	before := m.read(t)
	const n = 6
	for _, name := range names(t, base+"/traffic-refused/p", n) {
		expect(t, "answered by", name, "live")
	}
	after := m.read(t)
	const app = "TRAFFIC-REFUSED"
	refused := delta(before, after, "upstream_failures_total", "app", app, "kind", "refused")
	if refused < 1 {
		t.Errorf("upstream_failures_total{kind=refused} rose by %v, want at least 1 (the dead instance's)", refused)
	}
	expectDelta(t, before, after, refused, "retries_total", "app", app)
	expectDelta(t, before, after, 0, "upstream_failures_total", "app", app, "kind", "reset")
	expectDelta(t, before, after, 0, "upstream_failures_total", "app", app, "kind", "timeout")
	expectDelta(t, before, after, n, "requests_total", "app", app, "code", "2xx")
	expectDelta(t, before, after, n, "requests_total", "app", app)
	// Both gateways skip an instance from its first failure (the suite's
	// retryAfterRefused relies on it): an ejection.
	if e := delta(before, after, "ejections_total", "app", app); e < 1 {
		t.Errorf("ejections_total rose by %v after %v refused attempts, want at least 1", e, refused)
	}
}

// Requests to 10,000 names that no app has are counted under one app
// label value, "unknown": the set of app label values grows by that one
// at most, not by 10,000.
func trafficUnknownApps(t *testing.T, start Starter) {
	base, _, m := start(t)
	var dials atomic.Int64
	d := &net.Dialer{Timeout: 5 * time.Second}
	tr := &http.Transport{MaxIdleConnsPerHost: 16, DisableCompression: true,
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			dials.Add(1)
			return d.DialContext(ctx, network, addr)
		}}
	t.Cleanup(tr.CloseIdleConnections)
	c := &http.Client{Timeout: 20 * time.Second, Transport: tr}
	before := m.read(t)
	const n, workers = 10000, 8
	var wrong atomic.Int64
	begun := time.Now()
	parallel(t, n, workers, func(i int) error {
		r, err := ask(c, fmt.Sprintf("%s/u%08x/x", base, rand.Uint32()))
		if err != nil {
			return err
		}
		if r.status != 503 {
			wrong.Add(1)
		}
		return nil
	})
	took := time.Since(begun)
	after := m.read(t)
	t.Logf("%d requests to unknown apps in %v (%d connections)", n, took.Round(time.Millisecond), dials.Load())
	if w := wrong.Load(); w > 0 {
		t.Errorf("%d answers to unknown apps were not 503", w)
	}
	old, now := before.apps(), after.apps()
	var added []string
	for app := range now {
		if !old[app] {
			added = append(added, app)
		}
	}
	sort.Strings(added)
	if len(added) > 1 || len(added) == 1 && added[0] != "unknown" {
		if len(added) > 10 {
			added = append(added[:10], "...")
		}
		t.Errorf("the app label has %d new values, want unknown alone: %v", len(now)-len(old), added)
	}
	if !now["unknown"] {
		t.Errorf("no app=\"unknown\" series; apps %v", now)
	}
	expectDelta(t, before, after, n, "requests_total", "app", "unknown", "code", "5xx", "method", "GET", "subset", "")
	expectDelta(t, before, after, n, "requests_total")
	expectDelta(t, before, after, n, "request_duration_seconds_count", "app", "unknown")
	expect(t, "unknown in flight", after.sum("requests_in_flight", "app", "unknown"), 0)
}

// requestID is what the gateways give a request without X-Request-Id.
var requestID = regexp.MustCompile(`^[0-9a-f]{32}$`)

// W3C trace context (traceparent, tracestate) and B3 (single b3 and
// multi X-B3-*) reach the instance as the client sent them. A request
// without X-Request-Id reaches it with one of 32 hex digits, a new one
// each time; one with X-Request-Id keeps the client's.
func traceContext(t *testing.T, start Starter) {
	base, store, _ := start(t)
	a := newBackend(t, "a", nil)
	register(t, store, instance("traced", "a", a.port))
	trace := []string{
		"traceparent", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
		"tracestate", "rojo=00f067aa0ba902b7,congo=t61rcWkgMzE",
		"b3", "80f198ee56343ba864fe8b2a57d3eff7-e457b5a2e4d86bd1-1-05e3ac9a4f6e3b90",
		"X-B3-TraceId", "80f198ee56343ba864fe8b2a57d3eff7",
		"X-B3-SpanId", "e457b5a2e4d86bd1",
		"X-B3-ParentSpanId", "05e3ac9a4f6e3b90",
		"X-B3-Sampled", "1",
	}
	s := decode(t, get(t, base+"/traced/t", trace...))
	for n := 0; n < len(trace); n += 2 {
		expect(t, trace[n], s.Header.Values(trace[n]), []string{trace[n+1]})
	}
	ids := map[string]bool{}
	for _, s := range []seen{s, decode(t, get(t, base+"/traced/t"))} {
		v := s.Header.Values("X-Request-Id")
		if len(v) != 1 || !requestID.MatchString(v[0]) {
			t.Errorf("X-Request-Id %q, want one of 32 hex digits", v)
			continue
		}
		ids[v[0]] = true
	}
	if len(ids) == 1 {
		t.Errorf("two requests were given the same X-Request-Id %v", ids)
	}
	const client = "0123456789abcdefghij-ABCDEF"
	s = decode(t, get(t, base+"/traced/t", "X-Request-Id", client))
	expect(t, "the client's X-Request-Id", s.Header.Values("X-Request-Id"), []string{client})
}
