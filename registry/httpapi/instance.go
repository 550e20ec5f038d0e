package httpapi

import (
	"errors"
	"net/http"
	"strconv"

	"github.com/eurekagate/eurekagate/eureka"
	"github.com/eurekagate/eurekagate/registry"
)

// renew answers a heartbeat: 200 or 404 with an empty body (Java clients
// decode any body as an InstanceInfo), and 409 with this server's instance
// only for replicated heartbeats.
func (a *API) renew(req *Request, resp *Response, app, id string) {
	rr := registry.RenewRequest{Replication: req.Replication}
	var ok bool
	if rr.LastDirtyTimestamp, ok = a.timestampArg(req, resp); !ok {
		return
	}
	if v, has := req.Query.Get("overriddenstatus"); has {
		rr.OverriddenStatus = eureka.ParseStatus(v)
	}
	res, inst := a.store.Renew(app, id, rr)
	switch res {
	case registry.RenewOK:
		resp.empty(http.StatusOK)
	case registry.RenewNotFound:
		resp.empty(http.StatusNotFound)
	case registry.RenewCancelled:
		resp.empty(http.StatusGone)
	case registry.RenewConflict:
		f := eureka.AcceptFormat(req.Accept)
		*resp = Response{Status: http.StatusConflict, ContentType: f.ContentType(), Body: eureka.AppendInstance(nil, f, inst)}
	}
}

// timestampArg reads the optional lastDirtyTimestamp parameter.
func (a *API) timestampArg(req *Request, resp *Response) (int64, bool) {
	v, has := req.Query.Get("lastDirtyTimestamp")
	if !has || v == "" {
		return 0, true
	}
	ts, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		resp.text(http.StatusBadRequest, "invalid lastDirtyTimestamp "+strconv.Quote(v))
		return 0, false
	}
	return ts, true
}

func (a *API) cancel(req *Request, resp *Response, app, id string) {
	if a.store.Cancel(app, id, req.Replication) {
		resp.empty(http.StatusOK)
		return
	}
	resp.empty(http.StatusNotFound)
}

// setStatus is PUT .../status?value=S.
func (a *API) setStatus(req *Request, resp *Response, app, id string) {
	if st, lastDirty, ok := a.statusArgs(req, resp, true); ok {
		a.statusResult(resp, a.store.SetStatus(app, id, st, lastDirty, req.Replication))
	}
}

// deleteOverride is DELETE .../status[?value=S]; the fallback status
// defaults to UNKNOWN.
func (a *API) deleteOverride(req *Request, resp *Response, app, id string) {
	if st, lastDirty, ok := a.statusArgs(req, resp, false); ok {
		a.statusResult(resp, a.store.DeleteStatusOverride(app, id, st, lastDirty, req.Replication))
	}
}

// statusArgs reads value and lastDirtyTimestamp. A missing (when
// required) or invalid value is a 500 in Eureka, whose enum parse throws;
// we keep the code and say why.
func (a *API) statusArgs(req *Request, resp *Response, required bool) (eureka.Status, int64, bool) {
	st := eureka.StatusUnknown
	if v, has := req.Query.Get("value"); has || required {
		var valid bool
		if st, valid = eureka.LookupStatus(v); !valid {
			resp.text(http.StatusInternalServerError, "invalid status value "+strconv.Quote(v))
			return st, 0, false
		}
	}
	lastDirty, ok := a.timestampArg(req, resp)
	return st, lastDirty, ok
}

func (a *API) updateMetadata(req *Request, resp *Response, app, id string) {
	md := map[string]string{}
	req.Query.Each(func(k, v string) {
		if _, seen := md[k]; !seen {
			md[k] = v
		}
	})
	a.statusResult(resp, a.store.UpdateMetadata(app, id, md))
}

func (a *API) statusResult(resp *Response, err error) {
	switch {
	case err == nil:
		resp.empty(http.StatusOK)
	case errors.Is(err, registry.ErrNotFound):
		resp.empty(http.StatusNotFound)
	default:
		resp.text(http.StatusInternalServerError, err.Error())
	}
}
