package balancer

import (
	"testing"
	"time"

	"github.com/eurekagate/eurekagate/eureka"
	"github.com/eurekagate/eurekagate/internal/testkit"
)

// regionInstancer is a local registry with one remote region's copy.
type regionInstancer struct {
	local, remote staticInstancer
	region        string
}

func (r regionInstancer) Instances(app string) []*eureka.InstanceInfo { return r.local[app] }

func (r regionInstancer) InstancesIn(app, region string) []*eureka.InstanceInfo {
	if region == r.region {
		return r.remote[app]
	}
	return nil
}

func appInstance(app, id string, port int) *eureka.InstanceInfo {
	i := loopbackInstance(id, port)
	i.App = app
	return i
}

// ids returns how many of n picks of app chose each instance id.
func ids(b *Balancer, app string, n int) map[string]int {
	m := map[string]int{}
	for range n {
		i, err := b.Pick(app)
		if err != nil {
			return nil
		}
		m[i.ID()]++
	}
	return m
}

// One app's failing instance does not eject another app's instance of
// the same id: the state is the app's, the region's and the id's.
func TestEjectionKeyedByApp(t *testing.T) {
	victim := []*eureka.InstanceInfo{appInstance("VICTIM", "shared", 9001), appInstance("VICTIM", "other", 9002)}
	evil := appInstance("EVIL", "shared", 9003)
	b := New(staticInstancer{"VICTIM": victim, "EVIL": {evil}}, Config{MaxFails: 1})
	try := b.Retry("EVIL", []*eureka.InstanceInfo{evil}, 0, true)
	try.Next()
	try.Failed(Refused)
	if got := ids(b, "VICTIM", 10); got["shared"] != 5 || got["other"] != 5 {
		t.Fatalf("VICTIM's picks after EVIL's shared failed: %v, want shared and other in turn", got)
	}
	if n := b.Ejections()["EVIL"]; n != 1 {
		t.Errorf("EVIL's ejections: %d", n)
	}
	if n := b.Ejections()["VICTIM"]; n != 0 {
		t.Errorf("VICTIM's ejections: %d", n)
	}
}

// A remote region's failing instance (a fail-over's) does not eject the
// local instance of the same app and id, nor the other way round.
func TestEjectionKeyedByRegion(t *testing.T) {
	local := []*eureka.InstanceInfo{appInstance("ORDERS", "o20", 9001), appInstance("ORDERS", "o21", 9002)}
	remote := []*eureka.InstanceInfo{appInstance("ORDERS", "o20", 9101), appInstance("ORDERS", "o22", 9102)}
	src := regionInstancer{local: staticInstancer{"ORDERS": local}, remote: staticInstancer{"ORDERS": remote}, region: "eu-west"}
	b := New(src, Config{MaxFails: 1})

	try := b.Retry("ORDERS", remote, 0, true)
	try.Region = "eu-west"
	for try.Next().ID() != "o20" {
		try = b.Retry("ORDERS", remote, 0, true)
		try.Region = "eu-west"
	}
	end := try.Begin()
	try.Failed(Refused)
	if got := ids(b, "ORDERS", 10); got["o20"] != 5 || got["o21"] != 5 {
		t.Fatalf("local picks after the remote o20 failed: %v, want o20 and o21 in turn", got)
	}
	if n := b.inFlight(local[0].App, "", local[0]); n != 0 {
		t.Errorf("the remote o20's call counted on the local o20: %d", n)
	}
	end()

	// The remote o20 is out in its region.
	for range 4 {
		try := b.Retry("ORDERS", remote, 0, true)
		try.Region = "eu-west"
		if i := try.Next(); i.ID() != "o22" {
			t.Fatalf("remote pick after its o20 failed: %s", i.ID())
		}
	}

	// The local o20 failing does not bring the remote o20 back, nor
	// eject it anew: each keeps its own.
	b.ReportFailure(local[0])
	if got := ids(b, "ORDERS", 4); got["o21"] != 4 {
		t.Fatalf("local picks after the local o20 failed: %v", got)
	}
	try = b.Retry("ORDERS", remote, 0, true)
	try.Region = "eu-west"
	try.Next()
	try.Succeeded() // o22
	if got := ids(b, "ORDERS", 4); got["o21"] != 4 {
		t.Fatalf("a remote success took the local o20 back: %v", got)
	}
}

// The Checker's failing set is keyed by app and id: one app's failing
// check does not take another app's instance of the same id out.
func TestCheckerKeyedByApp(t *testing.T) {
	const interval = 100 * time.Millisecond
	sick, well := newHealthServer(t, "sick"), newHealthServer(t, "well")
	sick.status.Store(503)
	evil := sick.instance("shared")
	evil.App = "EVIL"
	victim := []*eureka.InstanceInfo{well.instance("shared"), well.instance("other")}
	for _, i := range victim {
		i.App = "VICTIM"
	}
	src := staticInstancer{"VICTIM": victim, "EVIL": {evil}}
	checker := NewChecker(src, CheckConfig{Interval: interval})
	checker.Start()
	defer checker.Stop()
	checker.Filter("EVIL", src["EVIL"])
	testkit.Eventually(t, 4*interval, "EVIL's shared failing its check", func() bool { return !checker.Healthy(evil) })

	if got := checker.Filter("VICTIM", victim); len(got) != 2 {
		t.Fatalf("VICTIM's instances passing: %d of 2", len(got))
	}
	if !checker.Healthy(victim[0]) {
		t.Fatal("VICTIM's shared taken for EVIL's")
	}
	bal := New(src, Config{Checker: checker})
	if got := ids(bal, "VICTIM", 10); got["shared"] != 5 {
		t.Fatalf("VICTIM's picks: %v", got)
	}
}

// ForgetApps drops the per-app counts of apps that left the registry,
// and those alone.
func TestForgetApps(t *testing.T) {
	gone, kept := appInstance("GONE", "g1", 9001), appInstance("KEPT", "k1", 9002)
	src := staticInstancer{"GONE": {gone}, "KEPT": {kept}}
	b := New(src, Config{MaxFails: 1, Checker: NewChecker(src, CheckConfig{})})
	b.Pick("GONE")
	b.ReportFailure(gone)
	b.ReportFailure(kept)
	b.Checker().failed.Get("GONE").Add(1)
	b.Checker().failed.Get("KEPT").Add(1)
	b.ForgetApps([]string{"GONE"})
	if got := b.Ejections(); len(got) != 1 || got["KEPT"] != 1 {
		t.Errorf("ejections after GONE left: %v", got)
	}
	if got := b.Checker().Failures(); len(got) != 1 || got["KEPT"] != 1 {
		t.Errorf("health check failures after GONE left: %v", got)
	}
	if b.seen.Lookup("GONE") != nil {
		t.Error("GONE's last list kept")
	}
}
