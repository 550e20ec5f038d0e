package traffic

import (
	"slices"
	"testing"
	"time"

	"github.com/eurekagate/eurekagate/internal/testkit"
)

// mi and ci are the indexes of a method class and of a status class, by
// name, for the tests' expectations.
func mi(t *testing.T, method string) int {
	t.Helper()
	return index(t, "method class", Methods[:], method)
}

func ci(t *testing.T, class string) int {
	t.Helper()
	return index(t, "status class", Classes[:], class)
}

func index(t *testing.T, kind string, names []string, name string) int {
	t.Helper()
	i := slices.Index(names, name)
	if i < 0 {
		t.Fatalf("no %s %q", kind, name)
	}
	return i
}

// Done counts a request by its subset, method class and status class:
// the seven methods by name, any other as "other", and a status outside
// 100-599 (none given) as a server error.
func TestDoneCountsByMethodClassAndSubset(t *testing.T) {
	a := New().App("ORDERS")
	for _, r := range []struct {
		subset, method string
		status         int
	}{
		{"", "GET", 200}, {"", "GET", 204}, {"", "GET", 404},
		{"", "HEAD", 200}, {"", "POST", 201}, {"", "PUT", 500}, {"", "DELETE", 302},
		{"", "PATCH", 101}, {"", "OPTIONS", 200}, {"", "PROPFIND", 207}, {"", "get", 200},
		{"", "GET", 0}, {"", "GET", 99}, {"", "GET", 600},
		{"version=2.1", "GET", 200}, {"version=2.1", "POST", 503},
	} {
		a.Start()
		a.Done(r.subset, []byte(r.method), r.status, time.Millisecond, nil)
	}
	s := a.Snapshot()
	if len(s.Requests) != 2 {
		t.Fatalf("subsets %v, want \"\" and version=2.1", s.Requests)
	}
	var want [len(Methods)][len(Classes)]uint64
	want[mi(t, "GET")][ci(t, "2xx")] = 2
	want[mi(t, "GET")][ci(t, "4xx")] = 1
	want[mi(t, "GET")][ci(t, "5xx")] = 3 // 0, 99 and 600: no status
	want[mi(t, "HEAD")][ci(t, "2xx")] = 1
	want[mi(t, "POST")][ci(t, "2xx")] = 1
	want[mi(t, "PUT")][ci(t, "5xx")] = 1
	want[mi(t, "DELETE")][ci(t, "3xx")] = 1
	want[mi(t, "PATCH")][ci(t, "1xx")] = 1
	want[mi(t, "OPTIONS")][ci(t, "2xx")] = 1
	want[mi(t, "other")][ci(t, "2xx")] = 2 // PROPFIND, and get: methods are case-sensitive
	if got := s.Requests[""]; got != want {
		t.Errorf("subset \"\":\n got %v\nwant %v", got, want)
	}
	var wantV [len(Methods)][len(Classes)]uint64
	wantV[mi(t, "GET")][ci(t, "2xx")] = 1
	wantV[mi(t, "POST")][ci(t, "5xx")] = 1
	if got := s.Requests["version=2.1"]; got != wantV {
		t.Errorf("subset version=2.1:\n got %v\nwant %v", got, wantV)
	}
	requests, errors := s.Total()
	if requests != 16 || errors != 5 {
		t.Errorf("Total() = %d, %d; want 16, 5", requests, errors)
	}
	if s.InFlight != 0 {
		t.Errorf("in flight %d after every Done", s.InFlight)
	}
}

// A duration goes in the first bucket whose bound it does not exceed (a
// bound is inclusive), one over 10 s in the last; Sum adds them up.
func TestLatencyBuckets(t *testing.T) {
	a := New().App("ORDERS")
	ds := []time.Duration{
		0,                                   // bucket 0
		time.Millisecond,                    // 0: the bound itself
		time.Millisecond + 1,                // 1 (2.5 ms)
		3 * time.Millisecond,                // 2 (5 ms)
		100 * time.Millisecond,              // 6 (100 ms)
		700 * time.Millisecond,              // 9 (1 s)
		10 * time.Second,                    // 12 (10 s)
		10*time.Second + time.Nanosecond,    // 13: over the last bound
		time.Hour,                           // 13
		-time.Millisecond + time.Nanosecond, // a clock step back: bucket 0
	}
	var sum time.Duration
	for _, d := range ds {
		a.Start()
		a.Done("", []byte("GET"), 200, d, nil)
		sum += d
	}
	s := a.Snapshot()
	var want [len(Buckets) + 1]uint64
	for _, i := range []int{0, 0, 1, 2, 6, 9, 12, 13, 13, 0} {
		want[i]++
	}
	if s.Latency != want {
		t.Errorf("latency\n got %v\nwant %v", s.Latency, want)
	}
	if s.Sum != sum {
		t.Errorf("Sum = %v, want %v", s.Sum, sum)
	}
	if len(Buckets) != 13 || Buckets[0] != 0.001 || Buckets[len(Buckets)-1] != 10 {
		t.Errorf("Buckets = %v, want 1 ms to 10 s", Buckets)
	}
	for i := 1; i < len(Buckets); i++ {
		if Buckets[i] <= Buckets[i-1] {
			t.Errorf("Buckets not increasing at %d: %v", i, Buckets)
		}
	}
}

// Failed counts by kind and ignores a kind it does not know; Retried
// counts on its own.
func TestFailedAndRetried(t *testing.T) {
	a := New().App("ORDERS")
	for _, k := range []int{Refused, Refused, Reset, Timeout, Timeout, Timeout, -1, numFailures, 99} {
		a.Failed(k)
	}
	for range 4 {
		a.Retried()
	}
	s := a.Snapshot()
	if want := [numFailures]uint64{2, 1, 3}; s.Failures != want {
		t.Errorf("failures %v, want %v", s.Failures, want)
	}
	if s.Retries != 4 {
		t.Errorf("retries %d, want 4", s.Retries)
	}
	if Failures != [numFailures]string{"refused", "reset", "timeout"} {
		t.Errorf("Failures = %v", Failures)
	}
	if r, _ := s.Total(); r != 0 {
		t.Errorf("failed attempts counted as %d requests", r)
	}
}

// InFlight counts the requests between Start and Done or Abandon; an
// abandoned one is not counted served.
func TestInFlight(t *testing.T) {
	a := New().App("ORDERS")
	for range 3 {
		a.Start()
	}
	if n := a.Snapshot().InFlight; n != 3 {
		t.Fatalf("in flight %d, want 3", n)
	}
	a.Done("", []byte("GET"), 200, time.Millisecond, nil)
	a.Abandon()
	if n := a.Snapshot().InFlight; n != 1 {
		t.Fatalf("in flight %d, want 1", n)
	}
	a.Done("", []byte("GET"), 200, time.Millisecond, nil)
	s := a.Snapshot()
	if s.InFlight != 0 {
		t.Errorf("in flight %d, want 0", s.InFlight)
	}
	if r, _ := s.Total(); r != 2 {
		t.Errorf("served %d, want 2 (the abandoned one is not)", r)
	}
	var latency uint64
	for _, n := range s.Latency {
		latency += n
	}
	if latency != 2 {
		t.Errorf("latency counts %d requests, want 2", latency)
	}
}

// An instance counts the requests it answered, those answered 5xx as
// errors, and its attempts in flight; the same id is the same counters.
func TestInstanceCounters(t *testing.T) {
	a := New().App("ORDERS")
	i1, i2 := a.Instance("i-1"), a.Instance("i-2")
	if a.Instance("i-1") != i1 {
		t.Fatal("Instance(i-1) twice: two counters")
	}
	for _, status := range []int{200, 404, 500, 503} {
		a.Start()
		i1.Begin()
		i1.End()
		a.Done("", []byte("GET"), status, time.Millisecond, i1)
	}
	i2.Begin()
	i2.Begin()
	i2.End()
	a.Start()
	a.Done("", []byte("GET"), 502, time.Millisecond, nil) // the gateway's answer: no instance's
	s := a.Snapshot()
	if got, want := s.Instances[InstanceKey{ID: "i-1"}], (InstanceSnapshot{Requests: 4, Errors: 2}); got != want {
		t.Errorf("i-1: %+v, want %+v", got, want)
	}
	if got, want := s.Instances[InstanceKey{ID: "i-2"}], (InstanceSnapshot{InFlight: 1}); got != want {
		t.Errorf("i-2: %+v, want %+v", got, want)
	}
	if len(s.Instances) != 2 {
		t.Errorf("instances %v, want i-1 and i-2", s.Instances)
	}
	if r, e := s.Total(); r != 5 || e != 3 {
		t.Errorf("Total() = %d, %d; want 5, 3", r, e)
	}
}

// The Recorder has one App per name, made on first use, and Each visits
// each once.
func TestRecorderApps(t *testing.T) {
	r := New()
	seen := 0
	r.Each(func(string, *App) { seen++ })
	if seen != 0 {
		t.Fatalf("an empty Recorder has %d apps", seen)
	}
	orders := r.App("ORDERS")
	if r.App("ORDERS") != orders {
		t.Fatal("App(ORDERS) twice: two counters")
	}
	r.App(Unknown).Start()
	got := map[string]*App{}
	r.Each(func(name string, a *App) {
		if got[name] != nil {
			t.Errorf("Each visits %s twice", name)
		}
		got[name] = a
	})
	if len(got) != 2 || got["ORDERS"] != orders || got[Unknown] != r.App(Unknown) {
		t.Errorf("Each: %v", got)
	}
	if Unknown != "unknown" {
		t.Errorf("Unknown = %q", Unknown)
	}
}

// Snapshot.Total adds every subset, method and class; its errors are the
// 5xx alone.
func TestSnapshotTotal(t *testing.T) {
	var s Snapshot
	if r, e := s.Total(); r != 0 || e != 0 {
		t.Errorf("zero Snapshot: %d, %d", r, e)
	}
	s.Requests = map[string][len(Methods)][len(Classes)]uint64{}
	var a, b [len(Methods)][len(Classes)]uint64
	a[0][1], a[2][4], a[7][3] = 10, 3, 2
	b[1][4], b[5][0] = 4, 1
	s.Requests[""], s.Requests["version=2.0"] = a, b
	if r, e := s.Total(); r != 20 || e != 7 {
		t.Errorf("Total() = %d, %d; want 20, 7", r, e)
	}
}

// Counting from many goroutines at once loses nothing.
func TestConcurrentCounting(t *testing.T) {
	r := New()
	const workers, each = 8, 500
	testkit.InParallel(workers, func(w int) {
		a := r.App([]string{"ORDERS", "BILLING"}[w%2])
		inst := a.Instance([]string{"i-1", "i-2", "i-3"}[w%3])
		for n := range each {
			a.Start()
			inst.Begin()
			if n%10 == 0 {
				a.Failed(Reset)
				a.Retried()
			}
			inst.End()
			a.Done([]string{"", "version=2.1"}[n%2], []byte("GET"), 200+300*(n%2), time.Duration(n)*time.Microsecond, inst)
		}
	})
	var requests, errors, retries, instRequests uint64
	r.Each(func(_ string, a *App) {
		s := a.Snapshot()
		if s.InFlight != 0 {
			t.Errorf("in flight %d", s.InFlight)
		}
		n, e := s.Total()
		requests += n
		errors += e
		retries += s.Retries
		for _, i := range s.Instances {
			instRequests += i.Requests
			if i.InFlight != 0 {
				t.Errorf("instance in flight %d", i.InFlight)
			}
		}
	})
	if requests != workers*each || errors != workers*each/2 || retries != workers*each/10 || instRequests != workers*each {
		t.Errorf("requests %d, errors %d, retries %d, instance requests %d; want %d, %d, %d, %d",
			requests, errors, retries, instRequests, workers*each, workers*each/2, workers*each/10, workers*each)
	}
}

// Recording on a warm app (its subset, instance and name seen before)
// allocates nothing: Start, Instance, Begin, End, Failed, Retried, Done,
// and the Recorder's App lookup.
func TestRecordingDoesNotAllocate(t *testing.T) {
	r := New()
	get, post := []byte("GET"), []byte("POST")
	record := func() {
		a := r.App("ORDERS")
		a.Start()
		inst := a.Instance("i-1")
		inst.Begin()
		inst.End()
		a.InstanceIn("eu-west", "i-1").Begin() // another region's i-1
		a.InstanceIn("eu-west", "i-1").End()
		a.Failed(Refused)
		a.Retried()
		a.Done("", get, 200, 3*time.Millisecond, inst)
		a.Start()
		a.Done("version=2.1", post, 503, 20*time.Second, nil)
		a.Start()
		a.Abandon()
	}
	record() // warm: the app, its subsets and instance exist
	if n := testing.AllocsPerRun(1000, record); n != 0 {
		t.Errorf("recording a request allocates %v times", n)
	}
	a := r.App("ORDERS")
	for name, f := range map[string]func(){
		"Start":    a.Start,
		"Instance": func() { a.Instance("i-1") },
		"Done":     func() { a.Done("", get, 200, time.Millisecond, nil) },
	} {
		if n := testing.AllocsPerRun(1000, f); n != 0 {
			t.Errorf("%s allocates %v times", name, n)
		}
	}
}

func BenchmarkRecord(b *testing.B) {
	r := New()
	get := []byte("GET")
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			a := r.App("ORDERS")
			a.Start()
			inst := a.Instance("i-1")
			inst.Begin()
			inst.End()
			a.Done("", get, 200, 3*time.Millisecond, inst)
		}
	})
}
