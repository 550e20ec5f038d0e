package httpapi

import (
	"errors"
	"net/http"
	"strconv"

	"github.com/eurekagate/eurekagate/eureka"
	"github.com/eurekagate/eurekagate/registry"
	"github.com/eurekagate/eurekagate/registry/document"
)

// ParamRegions is Eureka's regions parameter of full fetches and deltas:
// the remote regions whose instances to merge in (registry.RemoteRegion).
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
	regions, err := a.store.ParseRegions(v)
	if errors.Is(err, registry.ErrRegionNotReady) {
		resp.text(http.StatusForbidden, "a requested remote region's registry is not ready yet: try again later")
		return nil, false
	}
	if err != nil {
		listRefused(resp, err)
		return nil, false
	}
	return regions, true
}

// regionsPayload answers a document read with regions; its version
// token carries the remote regions' version, for a watch to resume from.
func (a *API) regionsPayload(req *Request, resp *Response, p *document.Payload) {
	a.payload(req, resp, p)
	resp.Version = a.store.RegionsToken(p.Version(), p.RegionVersion())
}

// regionsWatch is a watch with regions: its token is a RegionsToken.
func (a *API) regionsWatch(req *Request, resp *Response, token string, regions []string) {
	since, sinceRegions, ok := a.store.ParseRegionsToken(token)
	if !ok {
		resp.text(http.StatusGone, "watch version "+strconv.Quote(token)+" is not one of this node's with regions: read the whole registry")
		return
	}
	poll, ok := a.pollArgs(req, resp, since)
	if !ok {
		return
	}
	poll.Regions, poll.SinceRegions = regions, sinceRegions
	p := a.store.Poll(req.Context, poll)
	if p.Stale {
		resp.text(http.StatusGone, "watch version "+strconv.Quote(token)+" is older than this node's change log: read the whole registry")
		return
	}
	doc := registry.ChangesDocument(p.Changes, int64(p.Version), p.Hash)
	doc.Applications = mergeDelta(doc.Applications, p.RegionChanges)
	f := eureka.AcceptFormat(req.Accept)
	*resp = Response{Status: http.StatusOK, ContentType: f.ContentType(), Body: eureka.AppendApplications(nil, f, doc),
		Version: a.store.RegionsToken(p.Version, p.RegionVersion)}
}

// mergeDelta appends remote entries to the applications of the same name,
// new applications after the others, as Eureka appends remote deltas.
func mergeDelta(apps, remote []*eureka.Application) []*eureka.Application {
	for _, r := range remote {
		found := false
		for n, a := range apps {
			if a.Name == r.Name {
				apps[n] = &eureka.Application{Name: a.Name, Instances: append(a.Instances[:len(a.Instances):len(a.Instances)], r.Instances...)}
				found = true
				break
			}
		}
		if !found {
			apps = append(apps, r)
		}
	}
	return apps
}
