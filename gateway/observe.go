package gateway

import (
	"time"

	"github.com/valyala/fasthttp"

	"github.com/eurekagate/eurekagate/balancer"
	"github.com/eurekagate/eurekagate/eureka"
	"github.com/eurekagate/eurekagate/routing"
	"github.com/eurekagate/eurekagate/traffic"
)

// observed is what the gateway saw of one routed request, on either
// path, for the traffic counters: its app (Unknown for a name the
// registry does not have), subset, the instance of the current attempt,
// and the attempts sent again.
type observed struct {
	begun   time.Time
	app     *traffic.App // nil: no traffic recorded
	appName string       // as the counters know it
	subset  string
	inst    *eureka.InstanceInfo
	ti      *traffic.Instance
	retries int
}

// observe starts the observation of a request routed as rt.
func (g *Gateway) observe(o *observed, rt *routing.Route) {
	*o = observed{begun: time.Now()}
	if g.traffic == nil {
		return
	}
	o.appName = traffic.Unknown
	if rt.Registered {
		o.appName = rt.App
	}
	if rt.Subset != nil {
		o.subset = rt.Subset.Label()
	}
	o.app = g.traffic.App(o.appName)
	o.app.Start()
}

// attempt records that an attempt goes to inst.
func (o *observed) attempt(inst *eureka.InstanceInfo) {
	o.endAttempt()
	o.inst = inst
	if o.app != nil {
		o.ti = o.app.Instance(inst.ID())
		o.ti.Begin()
	}
}

// endAttempt ends the current attempt's count in flight.
func (o *observed) endAttempt() {
	if o.ti != nil {
		o.ti.End()
	}
}

// failed records the current attempt's failure, and whether the request
// goes on to another attempt.
func (o *observed) failed(f balancer.Failure, again bool) {
	if o.app != nil {
		o.app.Failed(failureKind(f))
		if again {
			o.app.Retried()
		}
	}
	if again {
		o.retries++
	}
}

// done ends the observation with the status the client got.
func (o *observed) done(method []byte, status int) {
	o.endAttempt()
	if o.app != nil {
		o.app.Done(o.subset, method, status, time.Since(o.begun), o.ti)
		o.app = nil
	}
}

// abandon ends the observation of a request whose client went away
// before its answer: no longer in flight, and not counted.
func (o *observed) abandon() {
	o.endAttempt()
	if o.app != nil {
		o.app.Abandon()
		o.app = nil
	}
}

func failureKind(f balancer.Failure) int {
	switch f {
	case balancer.Refused:
		return traffic.Refused
	case balancer.TimedOut:
		return traffic.Timeout
	}
	return traffic.Reset
}

// setRequestID gives a request without X-Request-Id a new one, unless
// the config says not to.
func (g *Gateway) setRequestID(h *fasthttp.RequestHeader) {
	if g.cfg.DisableRequestID || len(h.PeekBytes(headerRequestID)) > 0 {
		return
	}
	var buf [32]byte
	h.SetBytesKV(headerRequestID, routing.AppendRequestID(buf[:0]))
}

var headerRequestID = []byte(routing.RequestIDHeader)
