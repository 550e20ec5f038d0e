package traffic

import (
	"time"

	"github.com/eurekagate/eurekagate/eureka"
	"github.com/eurekagate/eurekagate/routing"
)

// An Observed is one routed request as both gateways count it: its
// Request, and what its route gives the counters and the access logs.
// Each gateway keeps one in its own observation (the fasthttp gateway's
// adds its access log's line, Caddy's its log fields), so that the steps
// are written once: Route, then AttemptAt for each instance, the
// Request's Failed for an attempt that failed, and End or Abandon (which
// also end the route's pass through its app's breaker and retry budget,
// routing.Guard). The zero value records nothing; it is not safe for
// concurrent use.
type Observed struct {
	Request
	// Begun is when the gateway began with the request: latency counts
	// from it.
	Begun time.Time
	// App is the route's app as the counters know it: its name, or
	// Unknown for a name the registry does not have.
	App string
	// Subset is the label of the route's subset, "" for any instance.
	Subset string
	// FailoverRegion is the remote region the request fails over to, ""
	// for the local one (routing.Route.Region).
	FailoverRegion string
	// Limited names the rate limit's key ("client", "header:X-Api-Key")
	// when the request was answered 429 over it (routing.Route.Limit),
	// for the access logs; "" otherwise.
	Limited string
	// Breaker is "open" when the request was answered 503 by its app's
	// open circuit breaker (routing.Route.Limit), for the access logs;
	// "" otherwise.
	Breaker string
	// guard is the route's pass through its app's breaker and retry
	// budget, which End and Abandon end.
	guard routing.Guard
	// instRegion is the region of the route's instances, as the counters
	// key them (routing.Route.InstanceRegion).
	instRegion string
}

// Route starts counting the request, routed as rt, in r (a nil r counts
// nothing). A name the registry does not have is counted as Unknown and
// handed to Unrouted.
func (o *Observed) Route(r *Recorder, rt *routing.Route) {
	o.App = Unknown
	if rt.Registered {
		o.App = rt.App
	} else {
		r.Unrouted(rt.App) // the name, for the dashboard's unrouted line
	}
	o.Subset = ""
	if rt.Subset != nil {
		o.Subset = rt.Subset.Label()
	}
	r.Begin(&o.Request, o.App, o.Subset)
	o.FailoverRegion, o.instRegion = rt.Region, rt.InstanceRegion()
	o.Region(rt.Region)
	o.Limited = ""
	if rt.Limit.Over() {
		o.Limited = rt.Limit.Label()
		o.Request.limited()
	}
	o.guard, o.Breaker = rt.Guard, ""
	if rt.Limit.Open() {
		o.Breaker = "open"
		o.Request.breakerRefused(rt.Limit.OpenSubset())
	}
}

// AttemptAt records that an attempt goes to inst.
func (o *Observed) AttemptAt(inst *eureka.InstanceInfo) {
	o.Attempt(o.instRegion, inst.ID())
}

// End ends the count: the client got status, for a request of method,
// at end.
func (o *Observed) End(method []byte, status int, end time.Time) {
	o.guard.Done(status, end.Sub(o.Begun), o.Retries > 0)
	o.Done(method, status, end.Sub(o.Begun))
}
