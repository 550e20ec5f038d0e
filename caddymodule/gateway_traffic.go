package caddymodule

import (
	"errors"
	"net/http"
	"time"

	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"go.uber.org/zap"

	"github.com/eurekagate/eurekagate/eureka"
	"github.com/eurekagate/eurekagate/routing"
	"github.com/eurekagate/eurekagate/traffic"
)

// observed is what eureka_gateway saw of one routed request: what both
// gateways count (traffic.Observed, the same names and meanings), and
// Caddy's access log fields, which get the app and the instance.
type observed struct {
	traffic.Observed
	extra *caddyhttp.ExtraLogFields
}

// observe starts o, the observation of a request routed as rt.
func (g *Gateway) observe(o *observed, rt *routing.Route, r *http.Request) {
	o.Begun = time.Now()
	o.Route(g.traffic, rt)
	o.extra, _ = r.Context().Value(caddyhttp.ExtraLogFieldsCtxKey).(*caddyhttp.ExtraLogFields)
	if o.extra != nil {
		o.extra.Set(zap.String("app", o.App))
		if rt.Region != "" {
			o.extra.Set(zap.String("region", rt.Region))
		}
		if o.Limited != "" {
			o.extra.Set(zap.String("limited", o.Limited))
		}
		if o.Breaker != "" {
			o.extra.Set(zap.String("breaker", o.Breaker))
		}
	}
}

func (o *observed) attempt(inst *eureka.InstanceInfo) {
	if o.extra != nil {
		o.extra.Set(zap.String("instance", inst.ID()))
	}
	o.AttemptAt(inst)
}

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
		o.Abandon() // the client went away
		return
	}
	o.End([]byte(r.Method), status, time.Now())
}
