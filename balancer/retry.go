package balancer

import (
	"github.com/eurekagate/eurekagate/eureka"
)

// A Failure says how a call to an instance failed, which decides whether
// the call may go to another instance.
type Failure int

const (
	// Refused is a call that never reached the instance: its connection
	// was refused or not made in time. Any call may be sent again.
	Refused Failure = iota + 1
	// TimedOut is a call whose answer did not come in time. The instance
	// may have acted on it.
	TimedOut
	// Broken is a call whose connection broke before the answer. The
	// instance may have acted on it.
	Broken
	// failed is a failure reported without its kind (ReportFailure).
	failed Failure = 0
)

// String names the failure as the gateways' upstream_failures_total
// kinds do: refused, timeout or reset; "failed" for a failure reported
// without its kind.
func (f Failure) String() string {
	switch f {
	case Refused:
		return "refused"
	case TimedOut:
		return "timeout"
	case Broken:
		return "reset"
	}
	return "failed"
}

// Retry is the attempts of one call on the instances of one application,
// as go-kit's lb.Retry over a balancer: Next picks, through the Balancer's
// policy and ejections, an instance the call has not tried yet; Failed
// reports a failure (passive health) and says whether the call goes on to
// another instance; Succeeded reports a success. It is a value, made per
// call without an allocation, and is not safe for concurrent use.
//
// A call may go to another instance Retries times at most: after any
// failure when it never reached the instance (Refused), and after a
// timeout or a broken connection only when it may be sent twice
// (Resendable: an idempotent method, RFC 9110 section 9.2.2, with its
// body replayable), since the instance may have acted on it.
type Retry struct {
	// Retries is how many other instances the call may go to.
	Retries int
	// Resendable says the call may be sent again after the instance may
	// have acted on it.
	Resendable bool
	// Source is where Failed reads the application's instances again
	// (those a gateway routes to, say). Default: the Balancer's Instancer.
	Source Instancer
	// Key, when the call goes to a subset of the application's instances
	// (the instances a Selector picks), names the subset for the policy
	// (Candidates.Key). Default: none, the call may go to any instance.
	Key string
	// Region is the region of the instances, when it is not the local
	// one (a route's fail-over region, a subset's region): their
	// failures, ejections and calls in flight are kept apart from those
	// of the local instances of the same ids. Default: the local region.
	Region string
	// Budget, when set, is asked before each retry (the app's retry
	// budget): a retry it refuses is not made. Default: none.
	Budget RetryBudget

	b       *Balancer
	app     string
	list    []*eureka.InstanceInfo
	inst    *eureka.InstanceInfo
	attempt int // attempts made so far
	// budgeted says Budget let the call go to another instance before.
	budgeted bool
	tried    [8]*eureka.InstanceInfo
}

// Retry returns the attempts of a call to app, whose instances are list
// (the Instancer's own slice, not empty), with retries other instances at
// most.
func (b *Balancer) Retry(app string, list []*eureka.InstanceInfo, retries int, resendable bool) Retry {
	return Retry{Retries: retries, Resendable: resendable, b: b, app: app, list: list}
}

// Next returns the instance for the next attempt: one not tried yet when
// there is one, else any.
func (r *Retry) Next() *eureka.InstanceInfo {
	inst := r.b.choose(r.app, r.Region, r.Key, r.list)
	if r.attempt > 0 && r.wasTried(inst) {
		for range r.list {
			if i := r.b.choose(r.app, r.Region, r.Key, r.list); !r.wasTried(i) {
				inst = i
				break
			}
		}
	}
	if r.attempt < len(r.tried) {
		r.tried[r.attempt] = inst
	}
	r.attempt++
	r.inst = inst
	return inst
}

// Attempt returns the number of the current attempt, from 1.
func (r *Retry) Attempt() int { return r.attempt }

// Succeeded reports that the current attempt's instance answered.
func (r *Retry) Succeeded() { r.b.succeed(r.Region, r.inst) }

// Begin counts the call to the current attempt's instance as in progress
// until end is called, as Balancer.Begin does, in the instance's region.
func (r *Retry) Begin() (end func()) { return r.b.begin(r.Region, r.inst) }

// Failed reports the current attempt's failure to the balancer (a
// timeout ejects the instance at once, anything else counts towards
// MaxFails) and reports whether the call goes to another instance, which
// Next then picks. It reads the application's instances again, so that
// one that left is not tried.
func (r *Retry) Failed(f Failure) bool {
	r.b.fail(r.Region, r.inst, f)
	if r.attempt > r.Retries || (f != Refused && !r.Resendable) {
		return false
	}
	src := r.Source
	if src == nil {
		src = r.b.src
	}
	list := src.Instances(r.app)
	if len(list) == 0 {
		return false
	}
	if r.Budget != nil && !r.Budget.AllowRetry(!r.budgeted) {
		return false
	}
	r.budgeted = true
	r.list = list
	return true
}

// A RetryBudget bounds the retries of an app's calls (the traffic rules'
// retry_budget).
type RetryBudget interface {
	// AllowRetry reports whether the call may go to another instance;
	// first says it has not before.
	AllowRetry(first bool) bool
}

func (r *Retry) wasTried(inst *eureka.InstanceInfo) bool {
	for _, t := range r.tried[:min(r.attempt, len(r.tried))] {
		if t == inst || t.ID() == inst.ID() {
			return true
		}
	}
	return false
}

// Idempotent reports whether method may be sent twice with the same
// effect as once (RFC 9110 section 9.2.2): GET, HEAD, OPTIONS, TRACE, PUT
// and DELETE. nginx retries the same methods (proxy_next_upstream without
// non_idempotent).
func Idempotent[T ~string | ~[]byte](method T) bool {
	switch string(method) {
	case "GET", "HEAD", "OPTIONS", "TRACE", "PUT", "DELETE":
		return true
	}
	return false
}
