package caddymodule

import (
	"errors"
	"io"
	"net/http"
	"time"

	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"go.uber.org/zap"

	"github.com/eurekagate/eurekagate/balancer"
	"github.com/eurekagate/eurekagate/eureka"
	"github.com/eurekagate/eurekagate/routing"
	"github.com/eurekagate/eurekagate/traffic"
)

// observed is what eureka_gateway saw of one routed request, for the
// traffic counters it shares with the fasthttp gateway (the same names
// and meanings) and for Caddy's access log, which gets the app and the
// instance.
type observed struct {
	begun  time.Time
	app    *traffic.App // nil: none recorded
	subset string
	inst   *eureka.InstanceInfo
	ti     *traffic.Instance
	extra  *caddyhttp.ExtraLogFields
}

// observe starts the observation of a request routed as rt.
func (g *Gateway) observe(rt *routing.Route, r *http.Request) *observed {
	o := &observed{begun: time.Now()}
	name := traffic.Unknown
	if rt.Registered {
		name = rt.App
	}
	if rt.Subset != nil {
		o.subset = rt.Subset.Label()
	}
	o.extra, _ = r.Context().Value(caddyhttp.ExtraLogFieldsCtxKey).(*caddyhttp.ExtraLogFields)
	if o.extra != nil {
		o.extra.Set(zap.String("app", name))
	}
	if g.traffic != nil {
		o.app = g.traffic.App(name)
		o.app.Start()
	}
	return o
}

func (o *observed) attempt(inst *eureka.InstanceInfo) {
	o.endAttempt()
	o.inst = inst
	if o.extra != nil {
		o.extra.Set(zap.String("instance", inst.ID()))
	}
	if o.app != nil {
		o.ti = o.app.Instance(inst.ID())
		o.ti.Begin()
	}
}

func (o *observed) endAttempt() {
	if o.ti != nil {
		o.ti.End()
	}
}

func (o *observed) failed(f balancer.Failure, again bool) {
	if o.app == nil {
		return
	}
	switch f {
	case balancer.Refused:
		o.app.Failed(traffic.Refused)
	case balancer.TimedOut:
		o.app.Failed(traffic.Timeout)
	default:
		o.app.Failed(traffic.Reset)
	}
	if again {
		o.app.Retried()
	}
}

// done ends the observation: status is what the client was sent (0 when
// nothing was), err what the handler returned to Caddy.
func (o *observed) done(r *http.Request, status int, err error) {
	o.endAttempt()
	if o.app == nil {
		return
	}
	if status == 0 {
		status = http.StatusOK
		if err != nil {
			status = http.StatusBadGateway
			var he caddyhttp.HandlerError
			if errors.As(err, &he) && he.StatusCode != 0 {
				status = he.StatusCode
			}
		}
	}
	if status == 499 || r.Context().Err() != nil && err != nil {
		o.app.Abandon() // the client went away
		return
	}
	o.app.Done(o.subset, []byte(r.Method), status, time.Since(o.begun), o.ti)
}

// statusWriter notes the status of the response the client is sent.
type statusWriter struct {
	*caddyhttp.ResponseWriterWrapper
	status int
}

func (w *statusWriter) WriteHeader(status int) {
	if w.status == 0 && (status >= 200 || status == http.StatusSwitchingProtocols) {
		w.status = status
	}
	w.ResponseWriterWrapper.WriteHeader(status)
}

func (w *statusWriter) Write(p []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriterWrapper.Write(p)
}

func (w *statusWriter) ReadFrom(r io.Reader) (int64, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriterWrapper.ReadFrom(r)
}
