package dashboard

import (
	"cmp"
	"slices"
	"time"

	"github.com/eurekagate/eurekagate/balancer"
)

// Health is what the gateways' balancers know of the instances they keep
// out of rotation: those ejected after failed calls (passive health) and
// those failing their active health check. A *balancer.Balancer is one;
// Caddy's eureka_dashboard gives the union of its eureka_gateway
// balancers'. Read-only: the dashboard shows it, never changes it.
type Health interface {
	Ejected() []balancer.Ejection
	Failing() []balancer.CheckFailure
}

// OutOfRotation is what api/summary's and api/traffic's instances carry
// when a gateway keeps them out of rotation; both absent otherwise.
type OutOfRotation struct {
	// Ejected is set while the instance is ejected: skipped after failed
	// calls until Until, unless a call to it succeeds.
	Ejected *Ejected `json:"ejected,omitempty"`
	// FailingHealthCheck is set while it fails its active health check.
	FailingHealthCheck *FailingCheck `json:"failing_health_check,omitempty"`
}

// Ejected is an ejection: since when (its run of failures first ejected
// it), until when (it is tried again then), in ms since the epoch, and
// why ("3 failed calls in a row, the last refused", "timeout").
type Ejected struct {
	Since  int64  `json:"since"`
	Until  int64  `json:"until"`
	Reason string `json:"reason"`
}

// FailingCheck is a failing active health check: since when, in ms since
// the epoch, and why its last check failed.
type FailingCheck struct {
	Since  int64  `json:"since"`
	Reason string `json:"reason"`
}

// OutInstance is an instance out of rotation, for the page's marks in
// the Applications list (api/traffic's out_of_rotation).
type OutInstance struct {
	App string `json:"app"`
	ID  string `json:"id"`
	// Region is another region's, absent for the local region's.
	Region string `json:"region,omitempty"`
	OutOfRotation
}

// healthKey names an instance for the health marks.
type healthKey struct{ app, region, id string }

// outOfRotation reads Config.Health: the instances out of rotation, by
// app, region and id; nil without it.
func (h *Handler) outOfRotation() map[healthKey]OutOfRotation {
	if h.cfg.Health == nil {
		return nil
	}
	ms := func(t time.Time) int64 { return t.UnixMilli() }
	out := map[healthKey]OutOfRotation{}
	for _, e := range h.cfg.Health.Ejected() {
		k := healthKey{e.App, e.Region, e.ID}
		o := out[k]
		o.Ejected = &Ejected{Since: ms(e.Since), Until: ms(e.Until), Reason: e.Reason()}
		out[k] = o
	}
	for _, f := range h.cfg.Health.Failing() {
		k := healthKey{f.App, "", f.ID}
		o := out[k]
		o.FailingHealthCheck = &FailingCheck{Since: ms(f.Since), Reason: f.Reason}
		out[k] = o
	}
	return out
}

// outList is out as a list, by app, region and id.
func outList(out map[healthKey]OutOfRotation) []OutInstance {
	list := make([]OutInstance, 0, len(out))
	for k, o := range out {
		list = append(list, OutInstance{App: k.app, ID: k.id, Region: k.region, OutOfRotation: o})
	}
	slices.SortFunc(list, func(x, y OutInstance) int {
		return cmp.Or(cmp.Compare(x.App, y.App), cmp.Compare(x.Region, y.Region), cmp.Compare(x.ID, y.ID))
	})
	return list
}

// out is 1 when the instance is out of rotation, for sorting.
func (o OutOfRotation) out() int {
	if o.Ejected != nil || o.FailingHealthCheck != nil {
		return 1
	}
	return 0
}
