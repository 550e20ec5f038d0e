package httpapi

import (
	"errors"
	"net/http"

	"github.com/eurekagate/eurekagate/eureka"
	"github.com/eurekagate/eurekagate/registry"
	"github.com/eurekagate/eurekagate/registry/regions"
)

// ParamRegions is Eureka's regions parameter of full fetches and deltas:
// the remote regions whose instances to merge in (registry.RemoteRegion;
// their copies are registry/regions.Mirror).
const ParamRegions = "regions"

// regionsOf reads the request's regions parameter. It answers 400 for a
// list over the bounds of query lists (registry.MaxQueryListBytes,
// MaxQueryListNames), 403, as Eureka's shouldAllowAccess(true), when a
// requested remote region's registry has not been read yet, and returns
// false then.
func (a *API) regionsOf(req *Request, resp *Response) ([]string, bool) {
	v, ok := req.Query.Get(ParamRegions)
	if !ok || v == "" {
		return nil, true
	}
	names, err := a.regions.Parse(v)
	if errors.Is(err, regions.ErrRegionNotReady) {
		resp.text(http.StatusForbidden, "a requested remote region's registry is not ready yet: try again later")
		return nil, false
	}
	if err != nil {
		listRefused(resp, err)
		return nil, false
	}
	return names, true
}

// document answers the full registry or, with delta, the delta, with the
// instances of the regions names merged in if any; the version token of a
// read with regions carries the remote regions' version, for a watch to
// resume from.
func (a *API) document(req *Request, resp *Response, names []string, delta bool) {
	f := eureka.AcceptFormat(req.Accept)
	switch {
	case len(names) > 0:
		p := a.regions.Payload(names, delta, f)
		a.payload(req, resp, p)
		resp.Version = a.token(registry.Version{Local: p.Version(), Remote: p.RemoteVersion(), Regions: true})
	case delta:
		a.payload(req, resp, a.store.Documents().Delta(f))
	default:
		a.payload(req, resp, a.store.Documents().Full(f))
	}
}
