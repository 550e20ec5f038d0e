package caddymodule

import (
	"errors"
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
	begun time.Time
	tr    traffic.Request
	extra *caddyhttp.ExtraLogFields
	// region is the region of the route's instances, as the counters key
	// them (routing.Route.InstanceRegion).
	region string
}

// observe starts the observation of a request routed as rt.
func (g *Gateway) observe(rt *routing.Route, r *http.Request) *observed {
	o := &observed{begun: time.Now(), region: rt.InstanceRegion()}
	name := traffic.Unknown
	if rt.Registered {
		name = rt.App
	} else {
		g.traffic.Unrouted(rt.App) // the name, for the dashboard's unrouted line
	}
	subset := ""
	if rt.Subset != nil {
		subset = rt.Subset.Label()
	}
	o.extra, _ = r.Context().Value(caddyhttp.ExtraLogFieldsCtxKey).(*caddyhttp.ExtraLogFields)
	if o.extra != nil {
		o.extra.Set(zap.String("app", name))
		if rt.Region != "" {
			o.extra.Set(zap.String("region", rt.Region))
		}
	}
	g.traffic.Begin(&o.tr, name, subset)
	o.tr.Region(rt.Region)
	return o
}

func (o *observed) attempt(inst *eureka.InstanceInfo) {
	if o.extra != nil {
		o.extra.Set(zap.String("instance", inst.ID()))
	}
	o.tr.Attempt(o.region, inst.ID())
}

func (o *observed) failed(f balancer.Failure, again bool) { o.tr.Failed(f, again) }

// done ends the observation: status is what the client was sent (0 when
// nothing was), err what the handler returned to Caddy.
func (o *observed) done(r *http.Request, status int, err error) {
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
		o.tr.Abandon() // the client went away
		return
	}
	o.tr.Done([]byte(r.Method), status, time.Since(o.begun))
}
