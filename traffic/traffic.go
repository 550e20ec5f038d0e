// Package traffic counts what the gateways route, per application: the
// requests by subset, method and status class, their latency, the
// upstream failures by kind, the retries, the requests in flight and,
// per instance, requests, errors and connections. Both gateways (Caddy's
// eureka_gateway and the fasthttp gateway) record into a Recorder, so
// their figures mean the same; Prometheus reads it at scrape time
// (traffic/metrics.Traffic) and the dashboard samples it for its live
// traffic panel.
//
// Recording costs atomic additions and no allocation: the counters are
// cumulative, and rates and percentiles are the readers' business.
// Application names come from the registry only (the router says whether
// a request names a registered app); any other name is recorded as
// Unknown, so that a client cannot grow the set of names.
package traffic

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/eurekagate/eurekagate/internal/perapp"
)

// Unknown is the application of the requests that name no registered
// one.
const Unknown = "unknown"

// Buckets are the upper bounds of the latency histogram, in seconds: from
// 1 ms to 10 s.
var Buckets = [...]float64{0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10}

// bucketNanos are Buckets in nanoseconds.
var bucketNanos = func() (out [len(Buckets)]int64) {
	for i, b := range Buckets {
		out[i] = int64(b * 1e9)
	}
	return out
}()

// Methods are the method classes requests are counted by; any other
// method is "other".
var Methods = [...]string{"GET", "HEAD", "POST", "PUT", "DELETE", "PATCH", "OPTIONS", "other"}

// Classes are the status classes: 1xx to 5xx.
var Classes = [...]string{"1xx", "2xx", "3xx", "4xx", "5xx"}

// Failure kinds of an upstream attempt.
const (
	Refused = iota // the connection was refused or not made in time
	Reset          // the connection broke before the answer
	Timeout        // no answer in time
	numFailures
)

// Failures names the failure kinds, by index.
var Failures = [numFailures]string{"refused", "reset", "timeout"}

// Recorder holds the counters of every application. The zero value is not
// ready; use New. It is safe for concurrent use.
type Recorder struct {
	apps    perapp.Map[App]
	sweepMu sync.Mutex // one Sweep at a time
	// unrouted counts the names asked that no one registered.
	unrouted unrouted
	// Connections, when set, reports the connections the gateway holds
	// to each instance, by its host:port, for the readers. The fasthttp
	// gateway sets it on the Recorder it records into.
	Connections func(yield func(app, addr string, n int))
}

// New returns an empty Recorder.
func New() *Recorder { return new(Recorder) }

// App returns the counters of app: a registered application's name,
// upper case, or Unknown.
func (r *Recorder) App(app string) *App { return r.apps.Get(app) }

// Each calls f with each application's counters, Unknown among them once
// it has requests.
func (r *Recorder) Each(f func(app string, a *App)) {
	for name, a := range r.apps.Snapshot() {
		f(name, a)
	}
}

// App is one application's counters.
type App struct {
	inFlight  atomic.Int64
	subsets   perapp.Map[counts] // by subset label, "" for any instance
	latency   [len(Buckets) + 1]atomic.Uint64
	sumNanos  atomic.Int64
	failures  [numFailures]atomic.Uint64
	retries   atomic.Uint64
	limited   atomic.Uint64                    // requests answered 429 by a rate limit
	instances perapp.Map[Instance]             // the local region's, by instance id
	remote    perapp.Map[perapp.Map[Instance]] // other regions', by region, then id
	regions   perapp.Map[atomic.Uint64]        // requests sent to another region, by region
	gone      int64                            // Sweep's: when it found the app gone (unix nanos), 0 while registered
	breaker   breakerCounts                    // its circuit breaker and retry budget (breaker.go)
	// subsetBreakers are its subsets' circuit breakers (per_subset).
	subsetBreakers perapp.Map[breakerCounts]
}

// counts are the requests of one subset, by method and status class.
type counts struct {
	n [len(Methods)][len(Classes)]atomic.Uint64
}

// Instance is one instance's counters.
type Instance struct {
	requests atomic.Uint64
	errors   atomic.Uint64
	inFlight atomic.Int64
	gone     int64 // as App's
}

// Start counts a request of the app as in flight until Done.
func (a *App) Start() { a.inFlight.Add(1) }

// Failed counts an attempt that failed at an instance, by kind (Refused,
// Reset, Timeout).
func (a *App) Failed(kind int) {
	if kind >= 0 && kind < numFailures {
		a.failures[kind].Add(1)
	}
}

// Retried counts an attempt sent again to another instance.
func (a *App) Retried() { a.retries.Add(1) }

// Limited counts a request answered 429 by a rate limit of the traffic
// rules (routing.Router.Limit).
func (a *App) Limited() { a.limited.Add(1) }

// Instance returns the counters of the app's instance id in the local
// region (registered: the router picked it).
func (a *App) Instance(id string) *Instance { return a.instances.Get(id) }

// InstanceIn returns the counters of the app's instance id in region:
// the local region's for "", else another region's, which are never
// those of a local instance of the same id.
func (a *App) InstanceIn(region, id string) *Instance {
	if region == "" {
		return a.instances.Get(id)
	}
	return a.remote.Get(region).Get(id)
}

// Done ends a request that Start counted: its subset's label ("" for any
// instance), method, status (the gateway's answer when no instance gave
// one), how long it took, and the instance that answered, or nil.
func (a *App) Done(subset string, method []byte, status int, d time.Duration, inst *Instance) {
	a.inFlight.Add(-1)
	a.subsets.Get(subset).n[methodClass(method)][statusClass(status)].Add(1)
	a.latency[bucket(d)].Add(1)
	a.sumNanos.Add(int64(d))
	if inst != nil {
		inst.requests.Add(1)
		if statusClass(status) == len(Classes)-1 {
			inst.errors.Add(1) // as the app counts it: 5xx, or no status
		}
	}
}

// Abandon ends a request that Start counted without counting it served:
// its client went away before the answer.
func (a *App) Abandon() { a.inFlight.Add(-1) }

// Begin counts a request to the instance as in flight until End.
func (i *Instance) Begin() { i.inFlight.Add(1) }

// End ends what Begin counted.
func (i *Instance) End() { i.inFlight.Add(-1) }

func methodClass(m []byte) int {
	switch string(m) {
	case "GET":
		return 0
	case "HEAD":
		return 1
	case "POST":
		return 2
	case "PUT":
		return 3
	case "DELETE":
		return 4
	case "PATCH":
		return 5
	case "OPTIONS":
		return 6
	}
	return 7
}

func statusClass(status int) int {
	c := status/100 - 1
	if c < 0 || c >= len(Classes) {
		return len(Classes) - 1 // no status: counted as a server error
	}
	return c
}

func bucket(d time.Duration) int {
	n := int64(d)
	for i, b := range bucketNanos {
		if n <= b {
			return i
		}
	}
	return len(bucketNanos)
}
