package traffic

import (
	"testing"
	"time"

	"github.com/eurekagate/eurekagate/eureka"
	"github.com/eurekagate/eurekagate/registry"
	"github.com/eurekagate/eurekagate/registry/regions"
)

func up(app, id string) *eureka.InstanceInfo {
	return &eureka.InstanceInfo{InstanceID: id, HasInstanceID: true, HostName: "127.0.0.1", IPAddr: "127.0.0.1", App: app, Status: eureka.StatusUp,
		Port: eureka.Port{Number: 9000, Enabled: true}, DataCenterInfo: eureka.DataCenterInfo{Name: eureka.DataCenterMyOwn}}
}

// request records one served request of app to the instance id of region.
func request(r *Recorder, app, region, id string) {
	var q Request
	r.Begin(&q, app, "")
	q.Attempt(region, id)
	q.Done([]byte("GET"), 200, time.Millisecond)
}

// instanceKeys returns the instances app has counters of.
func instanceKeys(r *Recorder, app string) map[InstanceKey]bool {
	out := map[InstanceKey]bool{}
	r.Each(func(name string, a *App) {
		if name == app {
			for k := range a.Snapshot().Instances {
				out[k] = true
			}
		}
	})
	return out
}

func apps(r *Recorder) map[string]bool {
	out := map[string]bool{}
	r.Each(func(name string, _ *App) { out[name] = true })
	return out
}

// An instance's counters are its region's: another region's instance of
// the same id counts apart.
func TestInstanceCountersByRegion(t *testing.T) {
	r := New()
	request(r, "ORDERS", "", "o20")
	request(r, "ORDERS", "eu-west", "o20")
	request(r, "ORDERS", "eu-west", "o20")
	s := r.App("ORDERS").Snapshot()
	if got := s.Instances[InstanceKey{ID: "o20"}].Requests; got != 1 {
		t.Errorf("the local o20: %d requests, want 1", got)
	}
	if got := s.Instances[InstanceKey{Region: "eu-west", ID: "o20"}].Requests; got != 2 {
		t.Errorf("eu-west's o20: %d requests, want 2", got)
	}
}

// Sweep drops an instance's counters Grace after it left the registry,
// and an app's once it has no instance left, in any region; what is
// registered (any status), in flight, or Unknown stays.
func TestSweepDropsDepartedAfterGrace(t *testing.T) {
	store := registry.New(registry.Config{RemoteRegions: []registry.RemoteRegion{{Name: "eu-west"}}})
	t0 := time.Unix(1_700_000_000, 0)
	for _, i := range []*eureka.InstanceInfo{up("ORDERS", "o1"), up("ORDERS", "o2"), up("BILLING", "b1")} {
		if err := store.Register(i, false); err != nil {
			t.Fatal(err)
		}
	}
	doc := &eureka.Applications{Applications: []*eureka.Application{{Name: "ORDERS", Instances: []*eureka.InstanceInfo{up("ORDERS", "o1")}}}}
	if err := regions.MirrorOf(store).Update("eu-west", doc, t0); err != nil {
		t.Fatal(err)
	}
	// The Store as the gateways read it, answering for eu-west.
	src := regions.InstancesOf(store)
	r := New()
	request(r, "ORDERS", "", "o1")
	request(r, "ORDERS", "", "o2")
	request(r, "ORDERS", "eu-west", "o1")
	request(r, "BILLING", "", "b1")
	request(r, Unknown, "", "")
	var held Request // a request in flight to BILLING's b1
	r.Begin(&held, "BILLING", "")
	held.Attempt("", "b1")

	store.Cancel("ORDERS", "o2", false)
	if err := store.SetStatus("ORDERS", "o1", eureka.StatusOutOfService, 0, false); err != nil { // registered still
		t.Fatal(err)
	}
	store.Cancel("BILLING", "b1", false)
	if got := r.Sweep(t0, src); got != nil {
		t.Fatalf("swept at once: %v", got)
	}
	if got := instanceKeys(r, "ORDERS"); len(got) != 3 {
		t.Fatalf("ORDERS' instances right after the cancel: %v", got)
	}
	r.Sweep(t0.Add(Grace-time.Nanosecond), src)
	if got := instanceKeys(r, "ORDERS"); len(got) != 3 {
		t.Fatalf("ORDERS' instances within the grace: %v", got)
	}
	if got := r.Sweep(t0.Add(Grace), src); got != nil {
		t.Fatalf("apps dropped with requests in flight or instances: %v", got)
	}
	want := map[InstanceKey]bool{{ID: "o1"}: true, {Region: "eu-west", ID: "o1"}: true}
	if got := instanceKeys(r, "ORDERS"); len(got) != 2 || !got[InstanceKey{ID: "o1"}] || !got[InstanceKey{Region: "eu-west", ID: "o1"}] {
		t.Fatalf("ORDERS' instances after the grace: %v, want %v", got, want)
	}
	if got := apps(r); !got["BILLING"] || !got[Unknown] {
		t.Fatalf("apps after the grace: %v, want BILLING (in flight) and unknown kept", got)
	}

	held.Done([]byte("GET"), 200, time.Millisecond)
	store.Cancel("ORDERS", "o1", false)
	t1 := t0.Add(2 * Grace)
	// BILLING, gone for long, once its request ended; ORDERS still has
	// eu-west's o1.
	if got := r.Sweep(t1, src); len(got) != 1 || got[0] != "BILLING" {
		t.Fatalf("dropped %v, want BILLING", got)
	}
	if got := r.Sweep(t1.Add(Grace), src); got != nil {
		t.Fatalf("dropped %v with eu-west's o1 registered", got)
	}
	if err := regions.MirrorOf(store).Update("eu-west", &eureka.Applications{}, t1); err != nil {
		t.Fatal(err)
	}
	r.Sweep(t1.Add(Grace), src)
	r.Sweep(t1.Add(2*Grace), src)
	if got := apps(r); len(got) != 1 || !got[Unknown] {
		t.Fatalf("apps once none is registered: %v, want unknown alone", got)
	}

	// Back in the registry: counted from zero.
	if err := store.Register(up("ORDERS", "o1"), false); err != nil {
		t.Fatal(err)
	}
	request(r, "ORDERS", "", "o1")
	if got := r.App("ORDERS").Snapshot().Instances[InstanceKey{ID: "o1"}].Requests; got != 1 {
		t.Errorf("o1 back: %d requests", got)
	}
}

// An instance that comes back within the grace keeps its counters.
func TestSweepKeepsReturningInstance(t *testing.T) {
	store := registry.New(registry.Config{})
	t0 := time.Unix(1_700_000_000, 0)
	register := func() {
		if err := store.Register(up("ORDERS", "o1"), false); err != nil {
			t.Fatal(err)
		}
	}
	register()
	r := New()
	request(r, "ORDERS", "", "o1")
	store.Cancel("ORDERS", "o1", false)
	r.Sweep(t0, store)
	register()
	r.Sweep(t0.Add(Grace/2), store)
	r.Sweep(t0.Add(Grace), store)
	if got := r.App("ORDERS").Snapshot().Instances[InstanceKey{ID: "o1"}].Requests; got != 1 {
		t.Errorf("o1 back within the grace: %d requests, want 1", got)
	}
}
