package balancer

import (
	"strings"
	"testing"
	"time"

	"github.com/eurekagate/eurekagate/eureka"
	"github.com/eurekagate/eurekagate/internal/testkit"
)

// Ejected says which instances are out now, since when (the run of
// failures' first ejection, kept when a retry after the cooldown fails
// again), until when and why, keyed by app, region and id; a success
// takes the instance off the list.
func TestEjectedSinceUntilWhy(t *testing.T) {
	clock := &fakeNow{t: time.Unix(1000, 0)}
	local := []*eureka.InstanceInfo{appInstance("ORDERS", "o1", 9001), appInstance("ORDERS", "o2", 9002)}
	remote := []*eureka.InstanceInfo{appInstance("ORDERS", "o1", 9101)}
	src := regionInstancer{local: staticInstancer{"ORDERS": local}, remote: staticInstancer{"ORDERS": remote}, region: "eu-west"}
	b := New(src, Config{MaxFails: 2, Cooldown: 10 * time.Second, Now: clock.Now})
	if got := b.Ejected(); len(got) != 0 {
		t.Fatalf("ejected before any failure: %+v", got)
	}

	b.ReportFailure(local[0])
	if got := b.Ejected(); len(got) != 0 {
		t.Fatalf("ejected after one failure of two: %+v", got)
	}
	b.ReportFailure(local[0])
	// A remote instance of the same id times out: ejected at once, apart.
	try := b.Retry("ORDERS", remote, 0, true)
	try.Region = "eu-west"
	try.Next()
	try.Failed(TimedOut)

	got := b.Ejected()
	if len(got) != 2 {
		t.Fatalf("ejected: %+v", got)
	}
	l, r := got[0], got[1]
	if l.App != "ORDERS" || l.Region != "" || l.ID != "o1" || !l.Since.Equal(time.Unix(1000, 0)) ||
		!l.Until.Equal(time.Unix(1010, 0)) || l.Fails != 2 || l.Reason() != "2 failed calls in a row, the last failed" {
		t.Errorf("the local o1: %+v, %q", l, l.Reason())
	}
	if r.Region != "eu-west" || r.ID != "o1" || r.Reason() != "timeout" {
		t.Errorf("the remote o1: %+v, %q", r, r.Reason())
	}

	// Past the cooldown, before another call, it is still listed (it is
	// not back until a call succeeds); it fails again: out since the
	// first ejection, until the new cooldown ends.
	clock.Advance(11 * time.Second)
	if got := b.Ejected(); len(got) != 2 || !got[0].Until.Equal(time.Unix(1010, 0)) {
		t.Fatalf("ejected after the cooldown, before another try: %+v", got)
	}
	try = b.Retry("ORDERS", local, 0, false)
	for try.Next().ID() != "o1" {
		try = b.Retry("ORDERS", local, 0, false)
	}
	try.Failed(Refused)
	got = b.Ejected()
	if len(got) != 2 || !got[0].Since.Equal(time.Unix(1000, 0)) || !got[0].Until.Equal(time.Unix(1021, 0)) ||
		!strings.HasSuffix(got[0].Reason(), "the last refused") {
		t.Fatalf("after failing again: %+v", got)
	}

	// A success ends the ejection.
	b.ReportSuccess(local[0])
	if got := b.Ejected(); len(got) != 1 || got[0].Region != "eu-west" {
		t.Fatalf("ejected after a success: %+v", got)
	}
}

// Failing lists the instances failing their health check, since when and
// why, and not once they pass again.
func TestFailingSinceWhy(t *testing.T) {
	const interval = 100 * time.Millisecond
	a, b := newHealthServer(t, "a"), newHealthServer(t, "b")
	src := &listInstancer{}
	src.set(a.instance("a"), b.instance("b"))
	checker := NewChecker(src, CheckConfig{Interval: interval})
	checker.Start()
	defer checker.Stop()
	bal := New(src, Config{Checker: checker})
	bal.Pick("INVENTORY") // the balancer asks for the app's checks
	if got := bal.Failing(); len(got) != 0 {
		t.Fatalf("failing before any check: %+v", got)
	}
	b.status.Store(503)
	before := time.Now()
	testkit.Eventually(t, 2*time.Second, "b failing", func() bool { return len(bal.Failing()) == 1 })
	f := bal.Failing()[0]
	if f.App != "INVENTORY" || f.ID != "b" || f.Since.Before(before) || !strings.Contains(f.Reason, "503") {
		t.Errorf("failing: %+v", f)
	}
	b.status.Store(200)
	testkit.Eventually(t, 2*time.Second, "b passing", func() bool { return len(bal.Failing()) == 0 })
	if New(src, Config{}).Failing() != nil {
		t.Error("a balancer without a Checker lists failing instances")
	}
}
