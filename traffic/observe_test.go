package traffic

import (
	"testing"
	"time"

	"github.com/eurekagate/eurekagate/eureka"
	"github.com/eurekagate/eurekagate/routing"
)

// An Observed counts a registered app's request by its name, its
// fail-over region and its instance there, with the latency from Begun;
// a name the registry does not have is counted as Unknown and listed as
// unrouted; a nil Recorder counts nothing.
func TestObservedCountsWhatTheRouteGives(t *testing.T) {
	r := New()
	inst := &eureka.InstanceInfo{InstanceID: "e1", App: "ORDERS"}
	begun := time.Unix(1000, 0)

	var o Observed
	o.Begun = begun
	o.Route(r, &routing.Route{App: "ORDERS", Registered: true, Region: "eu-west-1"})
	if o.App != "ORDERS" || o.Subset != "" || o.FailoverRegion != "eu-west-1" {
		t.Fatalf("observed %+v", o)
	}
	o.AttemptAt(inst)
	o.End([]byte("GET"), 200, begun.Add(3*time.Millisecond))
	s := r.App("ORDERS").Snapshot()
	if req, _ := s.Total(); req != 1 || s.Sum != 3*time.Millisecond || s.Regions["eu-west-1"] != 1 {
		t.Errorf("counted %d requests, sum %v, regions %v", req, s.Sum, s.Regions)
	}
	if got := s.Instances[InstanceKey{Region: "eu-west-1", ID: "e1"}]; got.Requests != 1 || got.InFlight != 0 {
		t.Errorf("instance %+v", got)
	}

	var u Observed
	u.Route(r, &routing.Route{App: "NOBODY"})
	u.End([]byte("GET"), 503, begun)
	if req, _ := r.App(Unknown).Snapshot().Total(); req != 1 || u.App != Unknown {
		t.Errorf("unknown app %q: %d requests", u.App, req)
	}
	if top := r.UnroutedTop(1); len(top) != 1 || top[0].Name != "NOBODY" {
		t.Errorf("unrouted %v", top)
	}

	var n Observed
	n.Route(nil, &routing.Route{App: "ORDERS", Registered: true})
	n.AttemptAt(inst)
	n.End([]byte("GET"), 200, begun)
	if n.Active() {
		t.Error("a nil Recorder's request is active")
	}
}
