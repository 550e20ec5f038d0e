package httpapi

import (
	"bytes"
	"cmp"
	"compress/gzip"
	"context"
	"crypto/x509"
	"errors"
	"io"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"time"

	"github.com/eurekagate/eurekagate/eureka"
	"github.com/eurekagate/eurekagate/registry"
	"github.com/eurekagate/eurekagate/registry/document"
	"github.com/eurekagate/eurekagate/registry/regions"
	"github.com/eurekagate/eurekagate/registry/replication"
)

// DefaultMaxBodyBytes is the default request body limit: 1 MiB.
const DefaultMaxBodyBytes = 1 << 20

// DefaultMaxBatchBytes is the default limit of a replication batch's body:
// 16 MiB, 250 registrations of 64 KiB each, the most a sender sends by
// default (replication.Config.MaxBatchBytes).
const DefaultMaxBatchBytes = replication.DefaultMaxBatchBytes

// APIConfig configures the REST API.
type APIConfig struct {
	// Prefix is a path the API is served under in addition to /eureka, such
	// as "/registry". Each prefix accepts an optional version segment, so
	// both /eureka/apps and /eureka/v2/apps work. Use "/" to also serve the
	// API at the root (/apps, /v2/apps).
	Prefix string
	// MaxBodyBytes limits request bodies, after gzip decoding; larger ones
	// are answered 413. Default 1 MiB.
	MaxBodyBytes int64
	// MaxBatchBytes limits the body of a peer replication batch, which
	// carries up to 250 whole registrations. Default 16 MiB. A sender
	// splits a batch larger than its replication.Config.MaxBatchBytes
	// before sending it, and one that gets 413; set the senders' no
	// higher than this, since a batch larger than the connection's
	// buffers gets a reset rather than the 413.
	MaxBatchBytes int64
	// Auth makes requests need HTTP basic auth. Default: open.
	Auth AuthConfig
	// Environment is reported by GET /status as generalStats.environment.
	// Default "test", as Eureka's.
	Environment string
	// Peers reports the replication state that GET /status shows (a
	// *replication.Peers). Default: none, a node without peers.
	Peers PeerStatus
	// Ready, if set, is closed once the registry may answer reads: when
	// the node's start-up sync is done (replication.Peers.Synced). Until
	// then registry reads (fetches, lookups, watches) are answered 503, so
	// clients try another node instead of caching an empty or partial
	// registry; writes are accepted. Default: ready.
	Ready <-chan struct{}
	// Applying, if set, is closed once replicated writes and cancels may
	// be applied: while the node copies its peers' registry
	// (replication.Peers.Copied) a replication batch, a write with the
	// replication header, or a client's cancel is answered 503, and its
	// peer sends it again (a client, to another node), since a cancel
	// applied before the copy reached its instance would be undone by the
	// copy. Registrations and heartbeats are taken: the copy never
	// replaces a newer registration, and a heartbeat of an instance not
	// copied yet is answered 404, which makes its client register again.
	// Default: applying.
	Applying <-chan struct{}
	// MaxWatchWait caps how long a watch (the delta with a watch
	// parameter) is held without a change, whatever wait it asks for.
	// Default registry.DefaultMaxWait (60s); negative: never hold one. A
	// watch that gives no wait waits registry.DefaultWait (30s), as every
	// long poll does (registry.ParseWait).
	MaxWatchWait time.Duration
}

// PeerStatus reports each peer's replication state; *replication.Peers
// implements it.
type PeerStatus interface {
	Stats() []replication.PeerStats
}

// API is the Eureka REST API over a Store, independent of any HTTP server.
// NewHTTPHandler and FastHTTPHandler adapt it to net/http and fasthttp.
type API struct {
	store    *registry.Store
	regions  *regions.Mirror // the Store's remote regions
	maxBody  int64
	maxBatch int64
	prefixes [][]string
	auth     *authenticator // nil: open
	authz    *authz         // nil: no binding, operator or audit trail
	env      string
	ready    <-chan struct{} // nil: ready
	applying <-chan struct{} // nil: applying
	peers    PeerStatus      // nil: no peers
	maxWait  time.Duration
	node     string // HeaderNode's value

	// closed ends at Close: held watches return.
	closed context.Context
	close  context.CancelFunc
}

// NewAPI returns the REST API over store.
func NewAPI(store *registry.Store, cfg APIConfig) *API {
	a := &API{store: store, regions: regions.MirrorOf(store), maxBody: cfg.MaxBodyBytes, auth: newAuthenticator(cfg.Auth), env: cfg.Environment, peers: cfg.Peers, ready: cfg.Ready, applying: cfg.Applying}
	if a.auth != nil || cfg.Auth.ExternalUsers {
		a.authz = newAuthz(cfg.Auth)
	}
	if a.maxBody <= 0 {
		a.maxBody = DefaultMaxBodyBytes
	}
	a.maxBatch = cfg.MaxBatchBytes
	if a.maxBatch <= 0 {
		a.maxBatch = DefaultMaxBatchBytes
	}
	if a.env == "" {
		a.env = "test"
	}
	a.maxWait = cmp.Or(cfg.MaxWatchWait, registry.DefaultMaxWait)
	a.closed, a.close = context.WithCancel(context.Background())
	a.node = strconv.FormatUint(store.Epoch(), 16)
	a.prefixes = [][]string{{"eureka"}}
	if p := cfg.Prefix; p != "" {
		if sp := splitPrefix(p); !(len(sp) == 1 && sp[0] == "eureka") {
			a.prefixes = append(a.prefixes, sp)
		}
	}
	return a
}

// Close ends the watches the API holds, at once, as a server does when it
// shuts down: they answer as if their wait had ended. Later watches are
// answered at once. Close is idempotent.
func (a *API) Close() { a.close() }

// Store returns the Store the API serves.
func (a *API) Store() *registry.Store { return a.store }

// MaxBodyBytes returns the request body limit of every endpoint but the
// replication batch's.
func (a *API) MaxBodyBytes() int64 { return a.maxBody }

// BodyLimit returns the request body limit for a request path: the batch
// endpoint's, or MaxBodyBytes. Front doors read no more than it.
func (a *API) BodyLimit(path string) int64 {
	var r route
	if parseRoute(path, a.prefixes, &r) && r.ep == epBatch {
		return a.maxBatch
	}
	return a.maxBody
}

// Request is an HTTP request as the API core sees it. Front doors fill it
// from their own request types.
type Request struct {
	// Context ends when the client goes away or the server shuts down; a
	// request that waits (a watch) must return when it does. Nil means
	// context.Background().
	Context context.Context
	Method  string
	// Path is the request path as sent (still URL-escaped), without query.
	Path            string
	Query           Args
	Accept          string
	AcceptEncoding  string
	ContentType     string
	ContentEncoding string
	// Replication is true when the header x-netflix-discovery-replication
	// is "true".
	Replication bool
	// Authorization is the Authorization header.
	Authorization string
	// ClientCert is the client's TLS certificate when the server verified
	// it against its client CA, else nil. Front doors fill it only when
	// the API identifies clients by certificate (AuthConfig.PeerCertNames,
	// CertApps).
	ClientCert *x509.Certificate
	// User is the user a host's own authentication established
	// (AuthConfig.ExternalUsers; WithClient); "" when the API checks the
	// credentials itself.
	User string
	// Origin and FetchSite are the Origin and Sec-Fetch-Site headers, which
	// browsers send and Eureka clients do not; CSRF is the HeaderCSRF
	// header. A write that has either of the first two needs the third.
	Origin, FetchSite, CSRF string
	Body                    []byte
	// checked is what the API's credential check found of this
	// request, when it ran (known), so that the bindings do not hash and
	// look the credentials up again, and the user name of the basic
	// credentials it checked.
	checked     role
	checkedUser string
	known       bool
	// Client is the client's address (unmapped from IPv4-in-IPv6), which
	// credential checks queue by and the audit trail records. Front doors
	// fill it only when the API checks credentials or binds them to apps.
	Client netip.Addr
}

// Args reads query parameters.
type Args interface {
	// Get returns the first value of key, and whether it was present.
	Get(key string) (string, bool)
	// Each calls f for each parameter in order.
	Each(f func(key, value string))
}

// Response is what the API answers. An empty ContentType means no body.
type Response struct {
	Status          int
	ContentType     string
	ContentEncoding string
	// Challenge is the WWW-Authenticate header of a 401.
	Challenge string
	Body      []byte
	// Payload, when set, is the body instead of Body: a cached document,
	// which front doors write part by part, never copying it whole.
	Payload *document.Payload
	// Version, if set, is sent as the Eurekagate-Version header: the
	// version of the registry the body reflects, to watch from.
	Version string
	// Syncing sends HeaderSyncing: the answer is a 503 of a node whose
	// start-up sync is not done.
	Syncing bool
	// RetryAfter, if set, is sent as the Retry-After header (seconds).
	RetryAfter string
}

// BodyLen returns the length of the body.
func (r *Response) BodyLen() int {
	if r.Payload != nil {
		return r.Payload.Len()
	}
	return len(r.Body)
}

func (r *Response) empty(status int) { *r = Response{Status: status} }

func (r *Response) text(status int, msg string) {
	*r = Response{Status: status, ContentType: "text/plain; charset=utf-8", Body: []byte(msg)}
}

// Match reports whether path is the API's: under one of its prefixes
// (/eureka and the configured one), or HealthPath. A middleware passes
// other requests on. Unknown paths under a prefix are the API's to answer
// (404).
func (a *API) Match(path string) bool {
	if isHealth(path) {
		return true
	}
	var r route
	return underPrefix(path, a.prefixes, &r)
}

// Serve answers one request. Before the endpoint runs: a path outside the
// API gets 404 (400 if it has a malformed percent-escape), a method the
// endpoint does not take 405, a write that another site could have forged
// 415 or 403 (see HeaderCSRF: writes need a JSON or XML content type or
// none, a body a JSON or XML one, a browser's write the header), and a
// request without the credentials it needs 401 (503 when they could not
// be checked in time; see AuthConfig), and a write its credential may not
// make 403 (AuthConfig.Apps; authz.go).
func (a *API) Serve(req *Request, resp *Response) {
	if isHealth(req.Path) {
		a.health(req, resp)
		return
	}
	var r route
	if !parseRoute(req.Path, a.prefixes, &r) {
		if !validEscapes(req.Path) {
			resp.text(http.StatusBadRequest, malformedEscape)
			return
		}
		resp.empty(http.StatusNotFound)
		return
	}
	write := req.Method != http.MethodGet && req.Method != http.MethodHead
	if !r.ep.allows(req.Method) {
		resp.empty(http.StatusMethodNotAllowed)
		return
	}
	if write && !guardWrite(req, r.ep, resp) {
		return
	}
	if a.auth != nil {
		if status := a.auth.decide(req, write, r.ep == epBatch || req.Replication); status != 0 {
			a.recordAuthRefusal(req, &r, status)
			authFailed(resp, status)
			return
		}
	}
	operatorWrite := false
	if a.authz != nil && write {
		var ok bool
		if operatorWrite, ok = a.authorize(req, &r, resp); !ok {
			return
		}
	}
	if a.ready != nil && r.ep.isRead() && req.Method != http.MethodPost && req.Method != http.MethodPut && req.Method != http.MethodDelete {
		select {
		case <-a.ready:
		default:
			resp.text(http.StatusServiceUnavailable, "this registry node is syncing from its peers; try another node")
			resp.Syncing = true
			return
		}
	}
	if a.applying != nil && (r.ep == epBatch || write && req.Replication || r.ep == epInstance && req.Method == http.MethodDelete) {
		select {
		case <-a.applying:
		default:
			resp.text(http.StatusServiceUnavailable, "this registry node is copying its peers' registry; send this write again later, or to another node")
			return
		}
	}
	switch r.ep {
	case epApps:
		a.only(req, resp, http.MethodGet, func() {
			regions, ok := a.regionsOf(req, resp)
			if !ok {
				return
			}
			apps, has, ok := appsOf(req, resp)
			if !ok {
				return
			}
			if has {
				a.fullFetchOf(req, resp, apps, regions)
				return
			}
			a.document(req, resp, regions, false)
		})
	case epDelta:
		a.only(req, resp, http.MethodGet, func() { a.getDelta(req, resp) })
	case epApp:
		switch req.Method {
		case http.MethodGet, http.MethodHead:
			a.getApp(req, resp, r.app)
		case http.MethodPost:
			a.register(req, resp, &r)
		default:
			resp.empty(http.StatusMethodNotAllowed)
		}
	case epInstance:
		switch req.Method {
		case http.MethodGet, http.MethodHead:
			inst, ok := a.store.Get(r.app, r.id)
			a.instance(req, resp, inst, ok)
		case http.MethodPut:
			a.renew(req, resp, r.app, r.id)
		case http.MethodDelete:
			a.cancel(req, resp, r.app, r.id)
		default:
			resp.empty(http.StatusMethodNotAllowed)
		}
	case epInstanceStatus:
		switch req.Method {
		case http.MethodPut:
			a.setStatus(req, resp, r.app, r.id)
		case http.MethodDelete:
			a.deleteOverride(req, resp, r.app, r.id)
		default:
			resp.empty(http.StatusMethodNotAllowed)
		}
	case epInstanceMetadata:
		a.only(req, resp, http.MethodPut, func() { a.updateMetadata(req, resp, r.app, r.id) })
	case epInstanceByID:
		a.only(req, resp, http.MethodGet, func() {
			inst, ok := a.store.Find(r.name)
			a.instance(req, resp, inst, ok)
		})
	case epVIP, epSVIP:
		a.only(req, resp, http.MethodGet, func() {
			a.payload(req, resp, a.store.Documents().VIP(r.name, r.ep == epSVIP, eureka.AcceptFormat(req.Accept)))
		})
	case epBatch:
		a.only(req, resp, http.MethodPost, func() { a.batch(req, resp) })
	case epStatus:
		a.only(req, resp, http.MethodGet, func() { a.status(req, resp) })
	case epStatusOverrides:
		a.only(req, resp, http.MethodGet, func() { a.statusOverrides(resp) })
	}
	if operatorWrite {
		a.recordOperator(req, &r, resp.Status)
	}
}

// only runs f for method (GET also answers HEAD) and answers 405 otherwise.
func (a *API) only(req *Request, resp *Response, method string, f func()) {
	if req.Method == method || (method == http.MethodGet && req.Method == http.MethodHead) {
		f()
		return
	}
	resp.empty(http.StatusMethodNotAllowed)
}

// payload answers with a cached document, gzipped only if the client asked.
func (a *API) payload(req *Request, resp *Response, p *document.Payload) {
	*resp = Response{Status: http.StatusOK, ContentType: eureka.AcceptFormat(req.Accept).ContentType(), Payload: p,
		Version: a.token(registry.Version{Local: p.Version()})}
	if strings.Contains(req.AcceptEncoding, "gzip") {
		resp.ContentEncoding, resp.Payload = "gzip", p.Gzip()
	}
}

func (a *API) getDelta(req *Request, resp *Response) {
	if a.store.Config().DisableDelta {
		resp.empty(http.StatusForbidden)
		return
	}
	regions, ok := a.regionsOf(req, resp)
	if !ok {
		return
	}
	if token, ok := req.Query.Get(ParamWatch); ok {
		a.watch(req, resp, token, regions)
		return
	}
	a.document(req, resp, regions, true)
}

func (a *API) getApp(req *Request, resp *Response, app string) {
	p, ok := a.store.Documents().App(app, eureka.AcceptFormat(req.Accept))
	if !ok {
		// Eureka's transparent fallback: a remote region's copy.
		p, ok = a.regions.AppPayload(app, eureka.AcceptFormat(req.Accept))
	}
	if !ok {
		resp.empty(http.StatusNotFound)
		return
	}
	a.payload(req, resp, p)
}

func (a *API) instance(req *Request, resp *Response, inst *eureka.InstanceInfo, ok bool) {
	if !ok {
		resp.empty(http.StatusNotFound)
		return
	}
	f := eureka.AcceptFormat(req.Accept)
	*resp = Response{Status: http.StatusOK, ContentType: f.ContentType(), Body: eureka.AppendInstance(nil, f, inst)}
}

func (a *API) register(req *Request, resp *Response, r *route) {
	app := r.app
	body, ok := a.body(req, resp, a.maxBody)
	if !ok {
		return
	}
	f := eureka.FormatJSON
	if kindOf(req.ContentType) == mediaXML {
		f = eureka.FormatXML
	}
	inst, err := eureka.DecodeInstance(f, body)
	if err != nil {
		cannotParse(resp, f)
		return
	}
	if err := registry.Validate(inst, app); err != nil {
		resp.text(http.StatusBadRequest, err.Error())
		return
	}
	if a.authz != nil && !a.vipsAllowed(req, r, resp, inst) {
		return
	}
	if err := a.store.Register(inst, req.Replication); errors.Is(err, registry.ErrCancelled) {
		resp.text(http.StatusGone, "instance was cancelled after this registration was made")
		return
	} else if err != nil {
		resp.text(http.StatusBadRequest, err.Error())
		return
	}
	resp.empty(http.StatusNoContent)
}

// body returns the request body, gunzipped if needed, within limit. A
// Content-Encoding other than gzip (or identity) is answered 415: a body
// read as if it were plain would be garbage.
func (a *API) body(req *Request, resp *Response, limit int64) ([]byte, bool) {
	tooLarge := func() ([]byte, bool) {
		resp.text(http.StatusRequestEntityTooLarge, "request body larger than "+strconv.FormatInt(limit, 10)+" bytes")
		return nil, false
	}
	body := req.Body
	if int64(len(body)) > limit {
		return tooLarge()
	}
	switch strings.ToLower(strings.TrimSpace(req.ContentEncoding)) {
	case "", "identity":
	case "gzip", "x-gzip":
		zr, err := gzip.NewReader(bytes.NewReader(body))
		if err != nil {
			resp.text(http.StatusBadRequest, "cannot decompress gzip request body")
			return nil, false
		}
		body, err = io.ReadAll(io.LimitReader(zr, limit+1))
		if err != nil {
			resp.text(http.StatusBadRequest, "cannot decompress gzip request body")
			return nil, false
		}
		if int64(len(body)) > limit {
			return tooLarge()
		}
	default:
		resp.text(http.StatusUnsupportedMediaType, "unsupported content encoding "+strconv.Quote(req.ContentEncoding)+": send gzip or no encoding")
		return nil, false
	}
	return body, true
}

// cannotParse answers Eureka's 400 for an unreadable body, in the body's
// format.
func cannotParse(resp *Response, f eureka.Format) {
	body := `{"error": "cannot parse request body"}`
	if f == eureka.FormatXML {
		body = `<error><message>cannot parse request body</message></error>`
	}
	*resp = Response{Status: http.StatusBadRequest, ContentType: f.ContentType(), Body: []byte(body)}
}
