package traffic

import (
	"time"

	"github.com/eurekagate/eurekagate/balancer"
)

// A Request is one request's count in progress, as both gateways keep it:
// Begin when the request is routed, Attempt for each instance it is sent
// to, Failed for an attempt that failed there, then Done once the client
// has its status, or Abandon when the client went away first. The zero
// value records nothing; it is not safe for concurrent use.
type Request struct {
	// Retries counts the attempts sent again to another instance.
	Retries int

	app    *App
	subset string
	region string
	ti     *Instance // the current attempt's, nil once it ended
	last   *Instance // the last attempt's, for Done
}

// Begin starts q: a request of app (a registered app's name, upper case,
// or Unknown) to its subset subset ("" for any instance). A nil Recorder
// records nothing.
func (r *Recorder) Begin(q *Request, app, subset string) {
	*q = Request{subset: subset}
	if r != nil {
		q.app = r.App(app)
		q.app.Start()
	}
}

// limited counts the request as answered 429 by a rate limit.
func (q *Request) limited() {
	if q.app != nil {
		q.app.Limited()
	}
}

// Region records that the request goes to another region's instances
// (routing.Route.Region), counted by region when it is Done.
func (q *Request) Region(region string) { q.region = region }

// Attempt records that an attempt goes to the instance id of region (""
// for the local one; routing.Route.InstanceRegion).
func (q *Request) Attempt(region, id string) {
	q.EndAttempt()
	if q.app != nil {
		q.ti = q.app.InstanceIn(region, id)
		q.ti.Begin()
		q.last = q.ti
	}
}

// EndAttempt ends the current attempt's count in flight, once.
func (q *Request) EndAttempt() {
	if q.ti != nil {
		q.ti.End()
		q.ti = nil
	}
}

// Failed records the current attempt's failure, and whether the request
// goes on to another instance.
func (q *Request) Failed(f balancer.Failure, again bool) {
	if again {
		q.Retries++
	}
	if q.app == nil {
		return
	}
	switch f {
	case balancer.Refused:
		q.app.Failed(Refused)
	case balancer.TimedOut:
		q.app.Failed(Timeout)
	default:
		q.app.Failed(Reset)
	}
	if again {
		q.app.Retried()
	}
}

// Done ends q: the client got status after d. Later calls do nothing.
func (q *Request) Done(method []byte, status int, d time.Duration) {
	q.EndAttempt()
	if q.app != nil {
		q.app.Done(q.subset, method, status, d, q.last)
		if q.region != "" {
			q.app.regions.Get(q.region).Add(1)
		}
		q.app = nil
	}
}

// Abandon ends q without counting it served: its client went away. Once
// q has ended it does nothing.
func (q *Request) Abandon() {
	q.EndAttempt()
	if q.app != nil {
		q.app.Abandon()
		q.app = nil
	}
}

// Active reports whether q records: begun with a Recorder, not ended.
func (q *Request) Active() bool { return q.app != nil }
