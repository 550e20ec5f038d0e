package dashboard

import (
	"cmp"
	"errors"
	"math"
	"math/bits"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/eurekagate/eurekagate/traffic"
)

const (
	// trafficEvery is how often a started Handler samples the gateways'
	// traffic (Config.Traffic), and the least time between two samples
	// made on reads.
	trafficEvery = time.Second
	// minuteSlots are the per-second slots of the last minute.
	minuteSlots = 60
	// tenSlots are the 10-second slots of the last 15 minutes.
	tenSlots = 90
	// maxTrafficInstances bounds the instances api/traffic lists per app.
	maxTrafficInstances = 20
)

// numBuckets is the latency histogram's length: traffic.Buckets and the
// one over the last.
const numBuckets = len(traffic.Buckets) + 1

// slot is one period's requests, 5xx answers and latency histogram.
type slot struct {
	requests, errors uint32
	latency          [numBuckets]uint32
}

// ring holds consecutive periods (seconds, or tens of seconds): period k
// in slots[k%len]. w is the last period written; the slots hold periods
// w-len+1 to w, the older ones being cleared as w advances.
type ring[T any] struct {
	w     int64
	slots []T
}

func newRing[T any](n int, w int64) *ring[T] { return &ring[T]{w: w, slots: make([]T, n)} }

// at returns period k's slot for writing, clearing the periods skipped
// since the last written, or nil when k is older than the ring holds.
func (r *ring[T]) at(k int64) *T {
	n := int64(len(r.slots))
	if k <= r.w-n {
		return nil
	}
	if k > r.w {
		var zero T
		for p := max(r.w+1, k-n+1); p <= k; p++ {
			r.slots[p%n] = zero
		}
		r.w = k
	}
	return &r.slots[k%n]
}

// get returns period k's slot, or nil when the ring does not hold it (no
// data: zero).
func (r *ring[T]) get(k int64) *T {
	if r == nil {
		return nil
	}
	n := int64(len(r.slots))
	if k > r.w || k <= r.w-n {
		return nil
	}
	return &r.slots[k%n]
}

// appTraffic is what the dashboard keeps of one app: its counters at the
// last sample and the deltas of the last minute per second and of the
// last 15 minutes per 10 seconds.
type appTraffic struct {
	requests, errors uint64
	latency          [numBuckets]uint64
	inFlight         int64
	limited          uint64 // requests answered 429 by a rate limit, cumulative
	breaker          traffic.BreakerSnapshot
	subsetBreakers   map[string]traffic.BreakerSnapshot // per_subset breakers, by label
	seconds          *ring[slot]                        // nil when it holds nothing recent
	tens             *ring[slot]
	instances        map[traffic.InstanceKey]*instanceTraffic
}

// instanceTraffic is one instance's counters at the last sample and its
// requests and 5xx answers per second in the last minute.
type instanceTraffic struct {
	requests, errors uint64
	inFlight         int64
	seconds          *ring[[2]uint32]
}

// trafficRecorder samples a traffic.Recorder's cumulative counters into
// per-period deltas. It owns no goroutine: the Handler's sampler, if
// started, and the reads of api/traffic call sample.
type trafficRecorder struct {
	src *traffic.Recorder
	now func() time.Time

	mu sync.Mutex
	// first and last are the first sample's time (the baseline: the
	// counters before it are not the dashboard's) and the last one's, in
	// ms since the epoch; sampled is false before the first.
	first, last int64
	sampled     bool
	apps        map[string]*appTraffic
}

func newTrafficRecorder(src *traffic.Recorder, now func() time.Time) *trafficRecorder {
	return &trafficRecorder{src: src, now: now, apps: map[string]*appTraffic{}}
}

// snapshot is one app's counters read for a sample.
type snapshot struct {
	name string
	s    traffic.Snapshot
}

// sample reads the counters and adds what changed since the last sample
// to the periods in between (spread evenly over them when samples were
// more than a second apart). The first sample is the baseline. Unless
// force, it does nothing when the last sample is less than trafficEvery
// old.
func (t *trafficRecorder) sample(force bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	now := t.now().UnixMilli()
	if t.sampled && now < t.last {
		now = t.last // the clock went back: count it now
	}
	if !force && t.sampled && now-t.last < trafficEvery.Milliseconds() {
		return
	}
	var snaps []snapshot
	t.src.Each(func(app string, a *traffic.App) { snaps = append(snaps, snapshot{app, a.Snapshot()}) })
	base := !t.sampled
	if base {
		t.first, t.last, t.sampled = now, now, true
	}
	prevSec, nowSec := t.last/1000, now/1000
	listed := make(map[string]bool, len(snaps))
	for _, sn := range snaps {
		listed[sn.name] = true
		a := t.apps[sn.name]
		if a == nil {
			a = &appTraffic{instances: map[traffic.InstanceKey]*instanceTraffic{}}
			t.apps[sn.name] = a
		}
		a.add(&sn.s, base, prevSec, nowSec)
	}
	// The apps the gateways dropped (gone from the registry: see
	// traffic.Recorder.Sweep) go from the page too.
	for name := range t.apps {
		if !listed[name] {
			delete(t.apps, name)
		}
	}
	t.last = now
}

// add records the app's counters s; unless base, the increase since the
// last sample goes to the seconds after prevSec up to nowSec (to nowSec
// when they are the same).
func (a *appTraffic) add(s *traffic.Snapshot, base bool, prevSec, nowSec int64) {
	req, errs := s.Total()
	var d slot
	d.requests, d.errors = delta32(req, a.requests), delta32(errs, a.errors)
	for b := range s.Latency {
		d.latency[b] = delta32(s.Latency[b], a.latency[b])
	}
	a.requests, a.errors, a.latency, a.inFlight = req, errs, s.Latency, s.InFlight
	a.limited, a.breaker, a.subsetBreakers = s.Limited, s.Breaker, s.SubsetBreakers
	if !base && d.requests > 0 {
		if a.seconds == nil {
			a.seconds, a.tens = newRing[slot](minuteSlots, nowSec), newRing[slot](tenSlots, nowSec/10)
		}
		spread(prevSec, nowSec, 1, a.seconds, func(dst *slot, part func(uint32) uint32) { dst.addPart(&d, part) })
		spread(prevSec, nowSec, 10, a.tens, func(dst *slot, part func(uint32) uint32) { dst.addPart(&d, part) })
	}
	for k := range a.instances {
		if _, ok := s.Instances[k]; !ok {
			delete(a.instances, k) // dropped with its registration
		}
	}
	for k, is := range s.Instances {
		i := a.instances[k]
		if i == nil {
			i = new(instanceTraffic)
			a.instances[k] = i
		}
		dr, de := delta32(is.Requests, i.requests), delta32(is.Errors, i.errors)
		i.requests, i.errors, i.inFlight = is.Requests, is.Errors, is.InFlight
		if base || dr == 0 {
			continue
		}
		if i.seconds == nil {
			i.seconds = newRing[[2]uint32](minuteSlots, nowSec)
		}
		spread(prevSec, nowSec, 1, i.seconds, func(dst *[2]uint32, part func(uint32) uint32) {
			dst[0] += part(dr)
			dst[1] += part(de)
		})
	}
	// Forget the periods of an app, and of its instances, idle for longer
	// than they cover.
	if a.tens != nil && a.tens.w <= nowSec/10-tenSlots {
		a.seconds, a.tens = nil, nil
	}
	for _, i := range a.instances {
		if i.seconds != nil && i.seconds.w <= nowSec-minuteSlots {
			i.seconds = nil
		}
	}
}

func (s *slot) addPart(d *slot, part func(uint32) uint32) {
	s.requests += part(d.requests)
	s.errors += part(d.errors)
	for b := range s.latency {
		s.latency[b] += part(d.latency[b])
	}
}

// delta32 is the increase from old to cur, which a sample a second apart
// keeps far under 2^32.
func delta32(cur, old uint64) uint32 {
	if cur <= old {
		return 0
	}
	return uint32(min(cur-old, 1<<32-1))
}

// spread adds an increase made between two samples to the periods of
// length step seconds it spans in r: the seconds prevSec+1 to nowSec get
// an even share each (nowSec all of it when it is prevSec), a period the
// sum of its seconds'. add is given the part function that returns a
// period's share of an amount; the shares add up to the amount.
func spread[T any](prevSec, nowSec, step int64, r *ring[T], add func(dst *T, part func(uint32) uint32)) {
	g := nowSec - prevSec
	if g <= 0 {
		if dst := r.at(nowSec / step); dst != nil {
			add(dst, func(v uint32) uint32 { return v })
		}
		return
	}
	n := int64(len(r.slots))
	for p := max((prevSec+1)/step, nowSec/step-n+1); p <= nowSec/step; p++ {
		lo, hi := max(p*step, prevSec+1), min(p*step+step-1, nowSec) // its seconds in the gap
		if lo > hi {
			continue
		}
		dst := r.at(p)
		if dst == nil {
			continue
		}
		j0, j1 := uint64(lo-prevSec-1), uint64(hi-prevSec)
		add(dst, func(v uint32) uint32 { return share(v, j1, uint64(g)) - share(v, j0, uint64(g)) })
	}
}

// share is floor(v*j/g), v's part in the first j of g seconds.
func share(v uint32, j, g uint64) uint32 {
	hi, lo := bits.Mul64(uint64(v), j)
	q, _ := bits.Div64(hi, lo, g)
	return uint32(q)
}

// TrafficView is api/traffic: the requests the gateways routed, per app,
// in the last minute and the last 15 minutes, sampled every second from
// Config.Traffic. Without Config.Traffic (or while Config.TrafficLive
// says no gateway records into it) it is {"enabled": false} alone. With
// ?top=N only the first N apps have their series and instances (the page
// asks for those it shows).
type TrafficView struct {
	Enabled bool `json:"enabled"`
	// Now is the last sample's time, in ms since the epoch.
	Now int64 `json:"now"`
	// Since is the first sample's: the dashboard has no data before it.
	Since int64 `json:"since"`
	// Apps are the apps with requests in the last 15 minutes (or in
	// flight) that the gateways still count (an app that left the
	// registry goes traffic.Grace after, with its instances): those with
	// a greater share of 5xx answers in the last
	// minute first, then in the last 15 minutes, then the busier first
	// (requests per second in the last minute, then 15 minutes), then by
	// name. The requests that named no registered app are not among
	// them: they are Unrouted.
	Apps []AppTraffic `json:"apps"`
	// Unrouted is the requests that named no registered app (answered
	// by the gateway's other handler, 404 by default), counted apart so
	// that names nobody registered never come before the apps.
	Unrouted UnroutedTraffic `json:"unrouted"`
	// OutOfRotation is every instance a gateway keeps out of rotation now
	// (Config.Health), of every app: the page marks them in the
	// Applications list. Empty without Config.Health.
	OutOfRotation []OutInstance `json:"out_of_rotation"`
}

// UnroutedTraffic is the requests for names nobody registered.
type UnroutedTraffic struct {
	LastMinute    TrafficWindow `json:"last_minute"`
	Last15Minutes TrafficWindow `json:"last_15_minutes"`
	// Names are the names asked most, at most 10, the most first, with
	// their requests since the gateway started (it counts 64 names at
	// most, traffic.UnroutedNames: a name asked often stays, a flood of
	// made-up names replaces only itself).
	Names []UnroutedName `json:"names"`
}

// UnroutedName is a name nobody registered and how many requests asked
// for it.
type UnroutedName struct {
	Name     string `json:"name"`
	Requests uint64 `json:"requests"`
}

// unroutedTop is how many names UnroutedTraffic lists.
const unroutedTop = 10

// AppTraffic is one app's traffic.
type AppTraffic struct {
	// App is the app's name (upper case).
	App string `json:"app"`
	// InFlight is the requests being served at the last sample.
	InFlight int64 `json:"in_flight"`
	// Limited is the requests a rate limit of the traffic rules answered
	// 429 since the gateway started, at the last sample.
	Limited uint64 `json:"limited"`
	// Breaker is the state of the app's circuit breaker (the traffic
	// rules' breaker) at the last sample: closed, open or half_open; ""
	// (absent) until it first moves. BreakerRejected is the requests it
	// answered 503 since the gateway started.
	Breaker         string `json:"breaker,omitempty"`
	BreakerRejected uint64 `json:"breaker_rejected,omitempty"`
	// OpenSubsets are the subsets whose own circuit breaker (a breaker
	// with per_subset) is open or half-open at the last sample, sorted by
	// label; absent when none is.
	OpenSubsets []SubsetBreaker `json:"open_subsets,omitempty"`
	// LastMinute and Last15Minutes are the two windows' figures.
	LastMinute    TrafficWindow `json:"last_minute"`
	Last15Minutes TrafficWindow `json:"last_15_minutes"`
	// PerSecond is the last minute, one point a second (60); Per10Seconds
	// the last 15 minutes, one point every 10 s (90). Absent for the apps
	// after the first top ones (api/traffic?top=N).
	PerSecond    TrafficSeries `json:"per_second,omitzero"`
	Per10Seconds TrafficSeries `json:"per_10_seconds,omitzero"`
	// Instances are the instances that answered requests in the last
	// minute and those a gateway keeps out of rotation (they refused or
	// failed calls: an ejected instance takes no requests), at most 20:
	// those out of rotation first, then those with 5xx answers (the
	// greater share first), then the busier first, then by id; absent
	// after the first top apps. InstanceCount is how many there are in
	// all.
	Instances     []InstanceTraffic `json:"instances,omitzero"`
	InstanceCount int               `json:"instance_count"`
}

// TrafficWindow is an app's requests over a window.
type TrafficWindow struct {
	// Seconds is the time the window covers: 60 (900), or less in the
	// first minute (15 minutes) of sampling.
	Seconds float64 `json:"seconds"`
	// Requests and Errors (5xx answers) are counts.
	Requests uint64 `json:"requests"`
	Errors   uint64 `json:"errors"`
	// Rate is requests per second; ErrorShare is Errors / Requests.
	Rate       float64 `json:"rate"`
	ErrorShare float64 `json:"error_share"`
	// P50MS and P99MS are the median and 99th percentile latency, in
	// milliseconds, interpolated within the histogram's buckets (1 ms to
	// 10 s; 10000 stands for over 10 s); null without requests.
	P50MS *float64 `json:"p50_ms"`
	P99MS *float64 `json:"p99_ms"`
}

// TrafficSeries is a chart's data, oldest first.
type TrafficSeries struct {
	// Start is the first point's period's start, in ms since the epoch;
	// StepSeconds is a period's length.
	Start       int64 `json:"start"`
	StepSeconds int   `json:"step_seconds"`
	// Requests and Errors are requests and 5xx answers per second in
	// each period; null for a period before sampling began (and for the
	// first sample's second, which its sample began).
	Requests []*float64 `json:"requests"`
	Errors   []*float64 `json:"errors"`
}

// InstanceTraffic is one instance's share of its app's last minute.
type InstanceTraffic struct {
	ID string `json:"id"`
	// Region is the instance's region when it is another region's (a
	// fail-over's, or a subset's that names it): ids repeat across
	// regions. Absent for the local region's.
	Region string `json:"region,omitempty"`
	// Requests and Errors (5xx answers) are counts over the minute; Rate
	// is requests per second.
	Requests uint64  `json:"requests"`
	Errors   uint64  `json:"errors"`
	Rate     float64 `json:"rate"`
	// Share is its part of the app's requests; ErrorShare its Errors /
	// Requests.
	Share      float64 `json:"share"`
	ErrorShare float64 `json:"error_share"`
	// InFlight is the requests it was serving at the last sample.
	InFlight int64 `json:"in_flight"`
	// OutOfRotation's ejected and failing_health_check: whether a
	// gateway keeps it out of rotation now (Config.Health).
	OutOfRotation
}

// view samples if due and returns the apps' traffic, the series and
// instances of the first top apps only (all when top is 0), with the
// instances out of rotation marked.
func (t *trafficRecorder) view(top int, out map[healthKey]OutOfRotation) TrafficView {
	t.sample(false)
	t.mu.Lock()
	defer t.mu.Unlock()
	v := TrafficView{Enabled: true, Now: t.last, Since: t.first, Apps: []AppTraffic{}, OutOfRotation: outList(out)}
	v.Unrouted.Names = []UnroutedName{}
	for _, nc := range t.src.UnroutedTop(unroutedTop) {
		v.Unrouted.Names = append(v.Unrouted.Names, UnroutedName{nc.Name, nc.Requests})
	}
	lastSec, firstSec := t.last/1000, t.first/1000
	lastTen := lastSec / 10
	elapsed := float64(t.last-t.first) / 1000
	minute := min(elapsed, minuteSlots)
	quarter := min(elapsed, float64(lastSec-(lastTen-tenSlots+1)*10+1))
	for name, a := range t.apps {
		if a.tens == nil && a.inFlight <= 0 {
			continue
		}
		at := AppTraffic{App: name, InFlight: a.inFlight, Limited: a.limited, Instances: []InstanceTraffic{}}
		if a.breaker != (traffic.BreakerSnapshot{}) {
			at.Breaker, at.BreakerRejected = a.breaker.State.String(), a.breaker.Refused
		}
		at.OpenSubsets = openSubsets(a.subsetBreakers)
		var m, q slot64
		at.PerSecond = TrafficSeries{Start: (lastSec - minuteSlots + 1) * 1000, StepSeconds: 1}
		for k := lastSec - minuteSlots + 1; k <= lastSec; k++ {
			s := a.seconds.get(k)
			m.add(s)
			if k < firstSec || (k == firstSec && (s == nil || s.requests == 0)) { // the first sample's second has data only from a later sample in it
				at.PerSecond.Requests, at.PerSecond.Errors = append(at.PerSecond.Requests, nil), append(at.PerSecond.Errors, nil)
				continue
			}
			at.PerSecond.Requests = append(at.PerSecond.Requests, rate(s, 1, false))
			at.PerSecond.Errors = append(at.PerSecond.Errors, rate(s, 1, true))
		}
		at.Per10Seconds = TrafficSeries{Start: (lastTen - tenSlots + 1) * 10_000, StepSeconds: 10}
		for p := lastTen - tenSlots + 1; p <= lastTen; p++ {
			s := a.tens.get(p)
			q.add(s)
			// The seconds of the period that sampling covers.
			covered := float64(min(p*10+9, lastSec) - max(p*10, firstSec+1) + 1)
			if covered <= 0 && s != nil && s.requests > 0 {
				covered = 1
			}
			if covered <= 0 {
				at.Per10Seconds.Requests, at.Per10Seconds.Errors = append(at.Per10Seconds.Requests, nil), append(at.Per10Seconds.Errors, nil)
				continue
			}
			at.Per10Seconds.Requests = append(at.Per10Seconds.Requests, rate(s, covered, false))
			at.Per10Seconds.Errors = append(at.Per10Seconds.Errors, rate(s, covered, true))
		}
		at.LastMinute, at.Last15Minutes = m.window(minute), q.window(quarter)
		if name == traffic.Unknown {
			v.Unrouted.LastMinute, v.Unrouted.Last15Minutes = at.LastMinute, at.Last15Minutes
			continue
		}
		if at.Last15Minutes.Requests == 0 && a.inFlight <= 0 {
			continue
		}
		listed := map[healthKey]bool{}
		for k, i := range a.instances {
			var it InstanceTraffic
			for k := lastSec - minuteSlots + 1; k <= lastSec; k++ {
				if s := i.seconds.get(k); s != nil {
					it.Requests += uint64(s[0])
					it.Errors += uint64(s[1])
				}
			}
			if it.Requests == 0 {
				continue
			}
			it.ID, it.Region, it.InFlight = k.ID, k.Region, i.inFlight
			it.Rate = perSecond(it.Requests, minute)
			it.ErrorShare = ratio(it.Errors, it.Requests)
			it.Share = ratio(it.Requests, at.LastMinute.Requests)
			hk := healthKey{name, k.Region, k.ID}
			it.OutOfRotation, listed[hk] = out[hk], true
			at.Instances = append(at.Instances, it)
		}
		// An ejected instance takes no requests: it is listed all the
		// same, as the one that refused them.
		for hk, o := range out {
			if hk.app == name && !listed[hk] {
				at.Instances = append(at.Instances, InstanceTraffic{ID: hk.id, Region: hk.region, OutOfRotation: o})
			}
		}
		slices.SortFunc(at.Instances, func(x, y InstanceTraffic) int {
			return cmp.Or(cmp.Compare(y.out(), x.out()), cmp.Compare(y.ErrorShare, x.ErrorShare), cmp.Compare(y.Requests, x.Requests), cmp.Compare(x.ID, y.ID), cmp.Compare(x.Region, y.Region))
		})
		at.InstanceCount = len(at.Instances)
		at.Instances = at.Instances[:min(len(at.Instances), maxTrafficInstances)]
		v.Apps = append(v.Apps, at)
	}
	slices.SortFunc(v.Apps, func(x, y AppTraffic) int {
		return cmp.Or(cmp.Compare(y.LastMinute.ErrorShare, x.LastMinute.ErrorShare),
			cmp.Compare(y.Last15Minutes.ErrorShare, x.Last15Minutes.ErrorShare),
			cmp.Compare(y.LastMinute.Rate, x.LastMinute.Rate), cmp.Compare(y.Last15Minutes.Rate, x.Last15Minutes.Rate),
			cmp.Compare(x.App, y.App))
	})
	if top > 0 {
		for k := top; k < len(v.Apps); k++ {
			a := &v.Apps[k]
			a.PerSecond, a.Per10Seconds, a.Instances = TrafficSeries{}, TrafficSeries{}, nil
		}
	}
	return v
}

// slot64 adds slots up.
type slot64 struct {
	requests, errors uint64
	latency          [numBuckets]uint64
}

func (w *slot64) add(s *slot) {
	if s == nil {
		return
	}
	w.requests += uint64(s.requests)
	w.errors += uint64(s.errors)
	for b, n := range s.latency {
		w.latency[b] += uint64(n)
	}
}

func (w *slot64) window(seconds float64) TrafficWindow {
	out := TrafficWindow{Seconds: seconds, Requests: w.requests, Errors: w.errors, Rate: perSecond(w.requests, seconds)}
	if w.requests > 0 {
		out.ErrorShare = ratio(w.errors, w.requests)
		out.P50MS, out.P99MS = quantile(&w.latency, 0.5), quantile(&w.latency, 0.99)
	}
	return out
}

// round rounds v to places decimals: the answer carries no more digits
// than the page shows, or than a share needs.
func round(v float64, places int) float64 {
	p := math.Pow10(places)
	return math.Round(v*p) / p
}

// perSecond is n over seconds, to a thousandth.
func perSecond(n uint64, seconds float64) float64 {
	if seconds <= 0 {
		return 0
	}
	return round(float64(n)/seconds, 3)
}

// ratio is part / whole to a millionth, 0 when whole is.
func ratio(part, whole uint64) float64 {
	if whole == 0 {
		return 0
	}
	return round(float64(part)/float64(whole), 6)
}

// rate is a slot's requests (or errors) per second over seconds.
func rate(s *slot, seconds float64, fives bool) *float64 {
	v := 0.0
	if s != nil {
		n := s.requests
		if fives {
			n = s.errors
		}
		v = round(float64(n)/seconds, 3)
	}
	return &v
}

// quantile returns the q-quantile of the histogram h, in ms, interpolated
// linearly within its bucket (from 0 in the first); a quantile in the
// bucket over the last bound is that bound. Nil when h is empty.
func quantile(h *[numBuckets]uint64, q float64) *float64 {
	var total uint64
	for _, n := range h {
		total += n
	}
	if total == 0 {
		return nil
	}
	rank := q * float64(total)
	var below uint64
	for b, n := range h {
		if n == 0 || float64(below+n) < rank {
			below += n
			continue
		}
		if b == len(traffic.Buckets) {
			break
		}
		lo := 0.0
		if b > 0 {
			lo = traffic.Buckets[b-1]
		}
		v := round((lo+(traffic.Buckets[b]-lo)*(rank-float64(below))/float64(n))*1000, 3)
		return &v
	}
	v := traffic.Buckets[len(traffic.Buckets)-1] * 1000
	return &v
}

// trafficView serves api/traffic[?top=N].
func (h *Handler) trafficView(r *http.Request) (any, error) {
	top := 0
	if q := r.URL.Query().Get("top"); q != "" {
		n, err := strconv.Atoi(q)
		if err != nil || n < 0 {
			return nil, errors.New("top: not a count")
		}
		top = n
	}
	if h.traffic == nil || (h.cfg.TrafficLive != nil && !h.cfg.TrafficLive()) {
		return struct {
			Enabled bool `json:"enabled"`
		}{}, nil
	}
	return h.traffic.view(top, h.outOfRotation()), nil
}
