package dashboard

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/eurekagate/eurekagate/traffic"
)

// serve records n requests of app at instance id (none when ""), each
// answered status after d.
func serve(rec *traffic.Recorder, app, id string, n, status int, d time.Duration) {
	a := rec.App(app)
	var inst *traffic.Instance
	if id != "" {
		inst = a.Instance(id)
	}
	for range n {
		a.Start()
		a.Done("", []byte("GET"), status, d, inst)
	}
}

func near(got, want float64) bool { return math.Abs(got-want) < 1e-6 } // the answer rounds

func nearPtr(got *float64, want float64) bool { return got != nil && math.Abs(*got-want) < 1e-9 }

func readTraffic(t *testing.T, h *Handler) TrafficView {
	t.Helper()
	var v TrafficView
	if code := get(t, h, context.Background(), "/api/traffic", &v); code != 200 {
		t.Fatalf("api/traffic: %d", code)
	}
	return v
}

func trafficOf(t *testing.T, v TrafficView, app string) AppTraffic {
	t.Helper()
	for _, a := range v.Apps {
		if a.App == app {
			return a
		}
	}
	t.Fatalf("no %s in %+v", app, v.Apps)
	return AppTraffic{}
}

func appOrder(v TrafficView) string {
	var names []string
	for _, a := range v.Apps {
		names = append(names, a.App)
	}
	return strings.Join(names, " ")
}

// api/traffic samples the gateways' counters (a Recorder fed directly
// here) every second, on a fake clock: rates, 5xx shares and latency
// percentiles over the last minute and 15 minutes, the per-second and
// per-10 s series, the split per instance, and the apps with errors
// first. Requests counted before the first sample are not the
// dashboard's; a gap between samples is spread over its seconds; an app
// idle for 15 minutes leaves the list.
func TestTrafficRatesAndOrder(t *testing.T) {
	rec := traffic.New()
	h, _, clock := newDashboard(t, Config{Traffic: rec})
	serve(rec, "OLD", "old-1", 500, 500, time.Millisecond) // before the first sample
	t0 := clock.Now()
	if v := readTraffic(t, h); !v.Enabled || len(v.Apps) != 0 || v.Since != t0.UnixMilli() {
		t.Fatalf("at the first sample: %+v", v)
	}

	// 30 s: ORDERS 8 a second over two instances, at 2 ms and 7 ms;
	// INVENTORY 2 a second, inv-2 answering 500; PAYMENTS 1 a second,
	// the first one a 502.
	for s := range 30 {
		serve(rec, "ORDERS", "i-1", 4, 200, 2*time.Millisecond)
		serve(rec, "ORDERS", "i-2", 4, 200, 7*time.Millisecond)
		serve(rec, "INVENTORY", "inv-1", 1, 200, 30*time.Millisecond)
		serve(rec, "INVENTORY", "inv-2", 1, 500, 30*time.Millisecond)
		status := 200
		if s == 0 {
			status = 502
		}
		serve(rec, "PAYMENTS", "pay-1", 1, status, time.Millisecond/2)
		clock.Advance(time.Second)
		readTraffic(t, h) // the page polls every second
	}
	v := readTraffic(t, h)
	if got := appOrder(v); got != "INVENTORY PAYMENTS ORDERS" {
		t.Fatalf("order %q, want the greater 5xx share first", got)
	}
	if v.Now != t0.Add(30*time.Second).UnixMilli() {
		t.Errorf("now %d, want %d", v.Now, t0.Add(30*time.Second).UnixMilli())
	}
	o := trafficOf(t, v, "ORDERS")
	if m := o.LastMinute; m.Seconds != 30 || m.Requests != 240 || m.Errors != 0 || !near(m.Rate, 8) || m.ErrorShare != 0 {
		t.Errorf("ORDERS' last minute: %+v", m)
	}
	// Half the requests in (1 ms, 2.5 ms], half in (5 ms, 10 ms]: the
	// median at the first bucket's top, the 99th percentile 117.6/120 of
	// the way through the second.
	if m := o.LastMinute; !nearPtr(m.P50MS, 2.5) || !nearPtr(m.P99MS, 9.9) {
		t.Errorf("ORDERS' percentiles: p50 %v p99 %v, want 2.5 and 9.9", *m.P50MS, *m.P99MS)
	}
	if q := o.Last15Minutes; q.Seconds != 30 || q.Requests != 240 || !near(q.Rate, 8) {
		t.Errorf("ORDERS' 15 minutes: %+v", q)
	}
	if len(o.Instances) != 2 || o.InstanceCount != 2 || o.Instances[0].ID != "i-1" || o.Instances[0].Requests != 120 ||
		!near(o.Instances[0].Rate, 4) || !near(o.Instances[0].Share, 0.5) || o.Instances[1].ID != "i-2" {
		t.Errorf("ORDERS' instances: %+v", o.Instances)
	}
	ps := o.PerSecond
	if len(ps.Requests) != 60 || ps.StepSeconds != 1 || ps.Start != t0.Add(-29*time.Second).UnixMilli() {
		t.Fatalf("per second: %d points from %d", len(ps.Requests), ps.Start)
	}
	for k, p := range ps.Requests {
		switch {
		case k <= 29 && p != nil:
			t.Errorf("second %d, up to the first sample: %v", k, *p)
		case k > 29 && (p == nil || *p != 8):
			t.Errorf("second %d: %v, want 8", k, p)
		}
	}
	if len(o.Per10Seconds.Requests) != 90 || o.Per10Seconds.StepSeconds != 10 {
		t.Errorf("per 10 s: %d points", len(o.Per10Seconds.Requests))
	}
	// The clock starts at a minute: three periods of 10 s sampled, and
	// the current one's first second, all at 8 a second.
	known := 0
	for _, p := range o.Per10Seconds.Requests {
		if p != nil {
			known++
			if *p != 8 {
				t.Errorf("per 10 s: %v a second, want 8", *p)
			}
		}
	}
	if known != 4 {
		t.Errorf("per 10 s: %d periods with data, want 4", known)
	}

	inv := trafficOf(t, v, "INVENTORY")
	if m := inv.LastMinute; !near(m.Rate, 2) || m.Errors != 30 || !near(m.ErrorShare, 0.5) || !nearPtr(m.P50MS, 37.5) {
		t.Errorf("INVENTORY's last minute: %+v", m)
	}
	if is := inv.Instances; len(is) != 2 || is[0].ID != "inv-2" || !near(is[0].ErrorShare, 1) || is[1].ErrorShare != 0 {
		t.Errorf("INVENTORY's instances, the failing one first: %+v", is)
	}
	if e := inv.PerSecond.Errors[59]; e == nil || *e != 1 {
		t.Errorf("INVENTORY's errors in the last second: %v", e)
	}
	pay := trafficOf(t, v, "PAYMENTS")
	if m := pay.LastMinute; m.Errors != 1 || !near(m.ErrorShare, 1.0/30) || !nearPtr(m.P99MS, 0.99) {
		t.Errorf("PAYMENTS' last minute: %+v p99 %v", m, *m.P99MS)
	}

	// (All within the first bucket, (0, 1 ms]: 0.99 ms.)

	// 90 s with no sample (nobody has the page open and the Handler is not
	// started): ORDERS serves 900 more, spread over those seconds.
	serve(rec, "ORDERS", "i-1", 900, 200, 2*time.Millisecond)
	clock.Advance(90 * time.Second)
	v = readTraffic(t, h)
	o = trafficOf(t, v, "ORDERS")
	if m := o.LastMinute; m.Seconds != 60 || m.Requests != 600 || !near(m.Rate, 10) {
		t.Errorf("ORDERS after a gap: %+v", m)
	}
	for k, p := range o.PerSecond.Requests {
		if p == nil || *p != 10 {
			t.Errorf("second %d after the gap: %v, want 10", k, p)
			break
		}
	}
	if q := o.Last15Minutes; q.Seconds != 120 || q.Requests != 1140 || !near(q.Rate, 9.5) {
		t.Errorf("ORDERS' 15 minutes after a gap: %+v", q)
	}
	if is := o.Instances; len(is) != 1 || is[0].ID != "i-1" || !near(is[0].Share, 1) || o.InstanceCount != 1 {
		t.Errorf("ORDERS' instances in the last minute: %+v", is)
	}
	// Nobody failed in the last minute: the 15 minutes' errors decide.
	if got := appOrder(v); got != "INVENTORY PAYMENTS ORDERS" {
		t.Errorf("order %q after the gap", got)
	}
	if m := trafficOf(t, v, "INVENTORY").LastMinute; m.Requests != 0 || m.Rate != 0 || m.P50MS != nil {
		t.Errorf("INVENTORY idle in the last minute: %+v", m)
	}

	// Now ORDERS fails a little, and busier than INVENTORY which fails
	// more: the greater share first.
	for range 10 {
		serve(rec, "ORDERS", "i-1", 9, 200, 2*time.Millisecond)
		serve(rec, "ORDERS", "i-2", 1, 503, 2*time.Millisecond)
		serve(rec, "INVENTORY", "inv-2", 1, 500, 30*time.Millisecond)
		serve(rec, "INVENTORY", "inv-1", 1, 200, 30*time.Millisecond)
		clock.Advance(time.Second)
		readTraffic(t, h)
	}
	v = readTraffic(t, h)
	if got := appOrder(v); got != "INVENTORY ORDERS PAYMENTS" {
		t.Errorf("order %q, want INVENTORY (50%%), ORDERS (10/510), PAYMENTS (none now)", got)
	}
	if is := trafficOf(t, v, "ORDERS").Instances; len(is) != 2 || is[0].ID != "i-2" || is[0].Errors != 10 {
		t.Errorf("ORDERS' failing instance first: %+v", is)
	}

	// 16 minutes on, ORDERS at one a second: the others leave the list.
	serve(rec, "ORDERS", "i-1", 16*60, 200, 20*time.Second)
	clock.Advance(16 * time.Minute)
	v = readTraffic(t, h)
	if got := appOrder(v); got != "ORDERS" {
		t.Fatalf("after 16 minutes: %q", got)
	}
	o = v.Apps[0]
	if q := o.Last15Minutes; !near(q.Rate, 1) || q.Errors != 0 || q.Seconds < 890 || q.Seconds > 900 || !nearPtr(q.P50MS, 10_000) {
		t.Errorf("ORDERS' 15 minutes: %+v", q)
	}
	if m := o.LastMinute; !near(m.Rate, 1) || !nearPtr(m.P99MS, 10_000) {
		t.Errorf("ORDERS' last minute: %+v", m)
	}
	for _, p := range o.Per10Seconds.Requests {
		if p == nil || !near(*p, 1) {
			t.Errorf("per 10 s after 16 minutes at one a second: %v", p)
			break
		}
	}
}

// Without Config.Traffic, or while Config.TrafficLive says no gateway
// records, api/traffic is {"enabled": false} and nothing else.
func TestTrafficDisabled(t *testing.T) {
	h, _, _ := newDashboard(t, Config{})
	live := false
	h2, _, _ := newDashboard(t, Config{Traffic: traffic.New(), TrafficLive: func() bool { return live }})
	for _, h := range []*Handler{h, h2} {
		var raw map[string]any
		if code := get(t, h, context.Background(), "/api/traffic", &raw); code != 200 || len(raw) != 1 || raw["enabled"] != false {
			t.Errorf("disabled: %d %v", code, raw)
		}
	}
	live = true
	if v := readTraffic(t, h2); !v.Enabled || v.Apps == nil {
		t.Errorf("live: %+v", v)
	}
}

// The percentiles are interpolated within the buckets: from 0 in the
// first, the bucket's bound in the one over 10 s.
func TestTrafficQuantile(t *testing.T) {
	var h [numBuckets]uint64
	if quantile(&h, 0.5) != nil {
		t.Error("an empty histogram has a median")
	}
	h[0] = 4 // (0, 1 ms]
	if p := quantile(&h, 0.5); !nearPtr(p, 0.5) {
		t.Errorf("median of 4 under 1 ms: %v", *p)
	}
	h[numBuckets-1] = 4 // over 10 s
	if p := quantile(&h, 0.99); !nearPtr(p, 10_000) {
		t.Errorf("p99 over 10 s: %v", *p)
	}
	if p := quantile(&h, 0.5); !nearPtr(p, 1) {
		t.Errorf("median at the edge: %v", *p)
	}
}

// Start samples the traffic on the sampler's goroutine, which Close
// stops (goleak checks it is gone).
func TestTrafficStartClose(t *testing.T) {
	rec := traffic.New()
	h, _, _ := newDashboard(t, Config{Traffic: rec})
	h.Start()
	serve(rec, "ORDERS", "i-1", 3, 200, time.Millisecond)
	h.Close()
	h.Close()
}

// Among 100 apps, the one with errors comes first whatever its rate, and
// the answer stays small enough to read every second.
func TestTrafficHundredApps(t *testing.T) {
	rec := traffic.New()
	h, _, clock := newDashboard(t, Config{Traffic: rec})
	readTraffic(t, h)
	for range 60 {
		for a := range 100 {
			app := fmt.Sprintf("APP-%03d", a)
			for i := range 10 {
				status := 200
				if a == 57 && i == 3 {
					status = 503
				}
				serve(rec, app, fmt.Sprintf("%s-%d", strings.ToLower(app), i), 1+a%7, status, time.Duration(1+i)*time.Millisecond)
			}
		}
		clock.Advance(time.Second)
		readTraffic(t, h)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest("GET", "/api/traffic", nil))
	var v TrafficView
	if err := json.Unmarshal(w.Body.Bytes(), &v); err != nil {
		t.Fatal(err)
	}
	if len(v.Apps) != 100 || v.Apps[0].App != "APP-057" || v.Apps[0].Instances[0].ID != "app-057-3" || !near(v.Apps[0].LastMinute.ErrorShare, 0.1) {
		t.Fatalf("%d apps, first %s", len(v.Apps), v.Apps[0].App)
	}
	// Then the busiest: 7 requests a second per instance.
	if a := v.Apps[1]; !near(a.LastMinute.Rate, 70) {
		t.Errorf("second: %s at %v", a.App, a.LastMinute.Rate)
	}
	all := w.Body.Len()

	// The page shows the first 12 and asks for their details only.
	w = httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest("GET", "/api/traffic?top=12", nil))
	var top TrafficView
	if err := json.Unmarshal(w.Body.Bytes(), &top); err != nil {
		t.Fatal(err)
	}
	if len(top.Apps) != 100 || top.Apps[0].App != "APP-057" || len(top.Apps[11].PerSecond.Requests) != 60 || len(top.Apps[11].Instances) != 10 ||
		top.Apps[12].PerSecond.Requests != nil || top.Apps[12].Instances != nil || top.Apps[12].InstanceCount != 10 || !near(top.Apps[12].LastMinute.Rate, v.Apps[12].LastMinute.Rate) {
		t.Errorf("top=12: %+v", top.Apps[11:13])
	}
	t.Logf("api/traffic with 100 apps of 10 instances: %d bytes, %d with top=12", all, w.Body.Len())
	if all > 400_000 || w.Body.Len() > 100_000 {
		t.Errorf("api/traffic with 100 apps: %d bytes, %d with top=12", all, w.Body.Len())
	}
	for _, bad := range []string{"/api/traffic?top=x", "/api/traffic?top=-1"} {
		if code := get(t, h, context.Background(), bad, nil); code != 400 {
			t.Errorf("%s: %d", bad, code)
		}
	}
}
