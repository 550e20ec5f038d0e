package caddymodule

import (
	"errors"
	"net/http"
	"time"

	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"go.uber.org/zap/zapcore"

	"github.com/eurekagate/eurekagate/eureka"
	"github.com/eurekagate/eurekagate/routing"
	"github.com/eurekagate/eurekagate/traffic"
)

// observed is what eureka_gateway saw of one routed request: what both
// gateways count (traffic.Observed, the same names and meanings), and
// Caddy's access log fields, which get the app and the instance.
type observed struct {
	traffic.Observed
	// inst is the instance of the last attempt, nil before the first.
	inst *eureka.InstanceInfo
}

// logFieldsKey is the key of the one field eureka_gateway sets in
// Caddy's access log fields, written as the fields its MarshalLogObject
// writes.
const logFieldsKey = "eureka_gateway"

// observe starts o, the observation of a request routed as rt.
func (g *Gateway) observe(o *observed, rt *routing.Route, r *http.Request) {
	o.Begun = time.Now()
	o.Route(g.traffic, rt)
	if extra, _ := r.Context().Value(caddyhttp.ExtraLogFieldsCtxKey).(*caddyhttp.ExtraLogFields); extra != nil {
		// One field for all of ours, read when the line is written: each
		// Set of Caddy's costs an allocation (it clears a sync.Map).
		extra.Set(zapcore.Field{Key: logFieldsKey, Type: zapcore.InlineMarshalerType, Interface: o})
	}
}

// MarshalLogObject writes the access log's fields of the request: app,
// and when they apply region (a fail-over's), limited, breaker and
// instance (the last attempt's), in that order.
func (o *observed) MarshalLogObject(enc zapcore.ObjectEncoder) error {
	enc.AddString("app", o.App)
	for _, f := range [...]struct{ key, v string }{{"region", o.FailoverRegion}, {"limited", o.Limited}, {"breaker", o.Breaker}} {
		if f.v != "" {
			enc.AddString(f.key, f.v)
		}
	}
	if o.inst != nil {
		enc.AddString("instance", o.inst.ID())
	}
	return nil
}

func (o *observed) attempt(inst *eureka.InstanceInfo) {
	o.inst = inst
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
	if status == 499 || err != nil && r.Context().Err() != nil {
		o.Abandon() // the client went away
		return
	}
	o.End([]byte(r.Method), status, time.Now())
}
