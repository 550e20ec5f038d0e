package httpapi

import (
	"net/http"
	"strconv"

	"github.com/eurekagate/eurekagate/eureka"
	"github.com/eurekagate/eurekagate/registry"
	"github.com/eurekagate/eurekagate/registry/regions"
)

// The watch: a compatible extension of the delta that our own clients use
// to learn of a change within a round trip instead of a 30 s poll.
//
// Every response carries HeaderWatch, which advertises the extension. Full
// fetches, app fetches and deltas carry HeaderVersion, the version of the
// registry they reflect. A client that knows the extension then asks
//
//	GET {prefix}/apps/delta?watch=<version>&wait=<seconds>[&apps=A,B]
//
// and the server answers at once if it has changes after that version,
// otherwise holds the request until one arrives or the wait ends (then an
// empty delta). The answer is an ordinary delta document holding only the
// changes after the version, each instance once, in its state at its last
// change; apps__hashcode is the reconcile hash of the registry (or of the
// apps named) at the answer's version, which HeaderVersion carries. A
// version the server cannot answer for (older than its change log, or of
// another node or an earlier run) gets 410 Gone: read the whole registry
// again. With apps, only those applications' changes are sent, and a full
// fetch with the same apps parameter returns only them. A client that
// sends none of this gets Eureka's answers byte for byte.
const (
	// HeaderWatch advertises the watch on every response.
	HeaderWatch = "Eurekagate-Watch"
	// HeaderVersion is the version a response reflects, "<epoch>.<n>".
	HeaderVersion = "Eurekagate-Version"
	// ParamWatch, ParamWait and ParamApps are the watch's query parameters.
	ParamWatch = "watch"
	ParamWait  = "wait"
	ParamApps  = "apps"
	// WatchVersion is HeaderWatch's value: the extension's revision.
	WatchVersion = "1"
	// HeaderNode, on every response, is the node's identity: its Store's
	// epoch in hex. A node that finds its own identity behind a peer URL
	// knows the URL is itself, whatever name or address it uses.
	HeaderNode = "Eurekagate-Node"
	// HeaderSyncing, "true" on the 503 of a read while the node's
	// start-up sync copies its peers' registry, tells a starting peer
	// that this one is starting too, rather than failing: any other 503
	// (credentials that could not be checked in time, say) is a failure
	// that peer asks again.
	HeaderSyncing = "Eurekagate-Syncing"
)

// token renders a version of this API's Store.
func (a *API) token(v registry.Version) string { return a.store.Token(v) }

// refusals are a watch's 410 answers, by whether it asked for regions:
// the token is not one of this node's (for this read), or is stale.
var refusals = [2][2]string{
	{"is not one of this node's: read the whole registry",
		"is not one of this node's or is older than its change log: read the whole registry"},
	{"is not one of this node's with regions: read the whole registry",
		"is older than this node's change log: read the whole registry"},
}

// watch answers a watch, the Store's long poll (registry.Poll, whose rule
// for waits and staleness this is), with the remote regions' changes too
// when it asks for regions: the changes after the client's version, at
// once or when one arrives, or an empty delta when the wait ends; 410 Gone
// for a stale version, or one of a read with regions for a watch without
// (and the other way round).
func (a *API) watch(req *Request, resp *Response, token string, names []string) {
	with := len(names) > 0
	refused := refusals[b2i(with)]
	since, ok := a.store.ParseToken(token)
	if !ok || since.Regions != with {
		resp.text(http.StatusGone, "watch version "+strconv.Quote(token)+" "+refused[0])
		return
	}
	poll, ok := a.pollArgs(req, resp, since)
	if !ok {
		return
	}
	if with {
		poll.Remote, poll.Regions = a.regions, names
	}
	p := a.store.Poll(req.Context, poll)
	if p.Stale {
		resp.text(http.StatusGone, "watch version "+strconv.Quote(token)+" "+refused[1])
		return
	}
	doc := registry.ChangesDocument(p.Changes, int64(p.Version.Local), p.Hash)
	doc.Applications = regions.MergeApps(doc.Applications, p.RemoteChanges, false)
	f := eureka.AcceptFormat(req.Accept)
	*resp = Response{Status: http.StatusOK, ContentType: f.ContentType(), Body: eureka.AppendApplications(nil, f, doc),
		Version: a.token(p.Version)}
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// pollArgs reads a watch's wait and apps, answering 400 for a bad wait
// or a list of apps over the bounds.
func (a *API) pollArgs(req *Request, resp *Response, since registry.Version) (registry.Poll, bool) {
	v, _ := req.Query.Get(ParamWait)
	wait, err := registry.ParseWait(v, a.maxWait)
	if err != nil {
		resp.text(http.StatusBadRequest, err.Error())
		return registry.Poll{}, false
	}
	apps, _, ok := appsOf(req, resp)
	if !ok {
		return registry.Poll{}, false
	}
	return registry.Poll{Since: since, Apps: apps, Wait: wait, Stop: a.closed}, true
}

// fullFetchOf answers a full fetch restricted to apps (with the
// instances of the regions names, if any).
func (a *API) fullFetchOf(req *Request, resp *Response, apps, names []string) {
	f := eureka.AcceptFormat(req.Accept)
	var doc *eureka.Applications
	var version registry.Version
	if len(names) > 0 {
		doc, version = a.regions.ApplicationsOf(apps, names)
	} else {
		doc, version.Local = a.store.ApplicationsOf(apps)
	}
	*resp = Response{Status: http.StatusOK, ContentType: f.ContentType(), Body: eureka.AppendApplications(nil, f, doc),
		Version: a.token(version)}
}
