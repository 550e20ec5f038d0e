package httpapi

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/eurekagate/eurekagate/eureka"
	"github.com/eurekagate/eurekagate/registry"
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
)

// token renders a version of this API's Store.
func (a *API) token(v uint64) string {
	return strconv.FormatUint(a.store.Epoch(), 16) + "." + strconv.FormatUint(v, 10)
}

// parseToken reads a version of this Store; false for another epoch or a
// malformed token.
func (a *API) parseToken(t string) (uint64, bool) {
	epoch, v, ok := strings.Cut(t, ".")
	if !ok {
		return 0, false
	}
	e, err1 := strconv.ParseUint(epoch, 16, 64)
	n, err2 := strconv.ParseUint(v, 10, 64)
	return n, err1 == nil && err2 == nil && e == a.store.Epoch()
}

// waitArg reads the wait parameter: seconds, or a Go duration ("30s").
func (a *API) waitArg(req *Request) (time.Duration, bool) {
	v, has := req.Query.Get(ParamWait)
	if !has || v == "" {
		return min(30*time.Second, a.maxWait), true
	}
	d, err := time.ParseDuration(v)
	if err != nil {
		secs, err2 := strconv.ParseFloat(v, 64)
		if err2 != nil || secs < 0 {
			return 0, false
		}
		d = time.Duration(secs * float64(time.Second))
	}
	return min(max(d, 0), a.maxWait), true
}

// watch answers a watch: the changes after the client's version, at once
// or when one arrives, or an empty delta when the wait ends.
func (a *API) watch(req *Request, resp *Response, token string) {
	since, ok := a.parseToken(token)
	if !ok {
		resp.text(http.StatusGone, "watch version "+strconv.Quote(token)+" is not one of this node's: read the whole registry")
		return
	}
	wait, ok := a.waitArg(req)
	if !ok {
		resp.text(http.StatusBadRequest, "invalid wait: give seconds or a duration such as 30s")
		return
	}
	var apps []string
	if list, has := req.Query.Get(ParamApps); has {
		apps = registry.Interest(list)
	}
	ctx := req.Context
	if ctx == nil {
		ctx = context.Background()
	}
	ctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	defer context.AfterFunc(a.closed, cancel)()
	for {
		version, changes, hash, ok := a.store.ChangesFor(since, apps)
		if !ok {
			resp.text(http.StatusGone, "watch version "+strconv.Quote(token)+" is older than this node's change log: read the whole registry")
			return
		}
		if len(changes) > 0 || ctx.Err() != nil {
			a.watchAnswer(req, resp, version, changes, hash)
			return
		}
		// Nothing for this watcher up to version: wait for a newer change.
		a.store.Watch(ctx, version)
	}
}

// watchAnswer renders changes as a delta document.
func (a *API) watchAnswer(req *Request, resp *Response, version uint64, changes []registry.Change, hash string) {
	doc := registry.ChangesDocument(changes, int64(version), hash)
	f := eureka.AcceptFormat(req.Accept)
	*resp = Response{Status: http.StatusOK, ContentType: f.ContentType(), Body: eureka.AppendApplications(nil, f, doc),
		Version: a.token(version)}
}

// fullFetchOf answers a full fetch restricted to apps.
func (a *API) fullFetchOf(req *Request, resp *Response, apps []string) {
	doc, version := a.store.ApplicationsOf(apps)
	f := eureka.AcceptFormat(req.Accept)
	*resp = Response{Status: http.StatusOK, ContentType: f.ContentType(), Body: eureka.AppendApplications(nil, f, doc),
		Version: a.token(version)}
}
