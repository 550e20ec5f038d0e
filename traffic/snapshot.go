package traffic

import "time"

// A Snapshot is an application's counters at one moment, all cumulative
// but InFlight.
type Snapshot struct {
	// InFlight is the number of requests being served.
	InFlight int64
	// Requests are the requests served, by subset label ("" for any
	// instance), then by method (Methods) and status class (Classes).
	Requests map[string][len(Methods)][len(Classes)]uint64
	// Latency counts the requests by duration: Latency[i] those that took
	// at most Buckets[i] (and more than the bucket before), the last one
	// those over 10 s.
	Latency [len(Buckets) + 1]uint64
	// Sum is the requests' durations added up.
	Sum time.Duration
	// Failures are the failed attempts at instances, by kind (Failures).
	Failures [numFailures]uint64
	// Retries are the attempts sent again to another instance.
	Retries uint64
	// Limited are the requests answered 429 by a rate limit.
	Limited uint64
	// Instances are the counters of each instance that took requests, by
	// region ("" for the local one) and id.
	Instances map[InstanceKey]InstanceSnapshot
	// Regions are the requests served by another region's instances
	// because the local region had none that could take them, by region.
	Regions map[string]uint64
	// Breaker is the app's circuit breaker and retry budget.
	Breaker BreakerSnapshot
	// SubsetBreakers are the circuit breakers of the app's subsets (a
	// breaker with per_subset), by subset label, from their first move
	// on; nil when none has moved. Their RetriesDenied are 0: the retry
	// budget is the app's.
	SubsetBreakers map[string]BreakerSnapshot
}

// InstanceKey names an instance of an app: its region ("" for the local
// one) and id. Ids repeat across regions.
type InstanceKey struct {
	Region, ID string
}

// InstanceSnapshot is an instance's counters at one moment.
type InstanceSnapshot struct {
	// Requests and Errors (5xx answers) are cumulative.
	Requests, Errors uint64
	// InFlight is the number of requests it is serving.
	InFlight int64
}

// Snapshot returns the app's counters.
func (a *App) Snapshot() Snapshot {
	s := Snapshot{InFlight: a.inFlight.Load(), Requests: map[string][len(Methods)][len(Classes)]uint64{},
		Sum: time.Duration(a.sumNanos.Load()), Retries: a.retries.Load(), Limited: a.limited.Load(), Instances: map[InstanceKey]InstanceSnapshot{}}
	s.Breaker, s.SubsetBreakers = a.breaker.snapshot(), a.subsetBreakersSnapshot()
	for label, c := range a.subsets.Snapshot() {
		var n [len(Methods)][len(Classes)]uint64
		for m := range n {
			for k := range n[m] {
				n[m][k] = c.n[m][k].Load()
			}
		}
		s.Requests[label] = n
	}
	for i := range s.Latency {
		s.Latency[i] = a.latency[i].Load()
	}
	for i := range s.Failures {
		s.Failures[i] = a.failures[i].Load()
	}
	for region, n := range a.regions.Snapshot() {
		if s.Regions == nil {
			s.Regions = map[string]uint64{}
		}
		s.Regions[region] = n.Load()
	}
	a.eachInstance(func(k InstanceKey, inst *Instance) {
		s.Instances[k] = InstanceSnapshot{Requests: inst.requests.Load(), Errors: inst.errors.Load(), InFlight: inst.inFlight.Load()}
	})
	return s
}

// Total returns the requests served and those answered 5xx.
func (s Snapshot) Total() (requests, errors uint64) {
	for _, n := range s.Requests {
		for m := range n {
			for k, v := range n[m] {
				requests += v
				if k == len(Classes)-1 {
					errors += v
				}
			}
		}
	}
	return requests, errors
}

// eachInstance calls f with each instance's counters, the local region's
// and the others'.
func (a *App) eachInstance(f func(InstanceKey, *Instance)) {
	for id, inst := range a.instances.Snapshot() {
		f(InstanceKey{ID: id}, inst)
	}
	for region, m := range a.remote.Snapshot() {
		for id, inst := range m.Snapshot() {
			f(InstanceKey{Region: region, ID: id}, inst)
		}
	}
}
