package discovery

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"slices"
	"sync"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/eurekagate/eurekagate/eureka"
)

// endpoint is one Eureka server.
type endpoint struct {
	base string // scheme://host[:port]/path/ ending in "/"
	auth string // "Basic ..." or ""
}

// orderEndpoints lists the servers as the Java client's resolver does: my
// zone's first (unless same-zone preference is off), each group shuffled.
func orderEndpoints(cfg Config, rnd *rand.Rand) ([]endpoint, error) {
	var mine, others []string
	zones := make([]string, 0, len(cfg.ZoneServiceURLs))
	for z := range cfg.ZoneServiceURLs {
		zones = append(zones, z)
	}
	// Deterministic zone order before shuffling within groups.
	slices.Sort(zones)
	sameZone := !cfg.DisablePreferSameZone
	if cfg.Zone == "" || cfg.ZoneServiceURLs[cfg.Zone] == nil {
		mine = append(mine, cfg.ServiceURLs...)
	} else {
		others = append(others, cfg.ServiceURLs...)
	}
	for _, z := range zones {
		if z == cfg.Zone {
			mine = append(mine, cfg.ZoneServiceURLs[z]...)
		} else {
			others = append(others, cfg.ZoneServiceURLs[z]...)
		}
	}
	rnd.Shuffle(len(mine), func(i, j int) { mine[i], mine[j] = mine[j], mine[i] })
	rnd.Shuffle(len(others), func(i, j int) { others[i], others[j] = others[j], others[i] })
	ordered := append(mine, others...)
	if !sameZone {
		ordered = append(others, mine...)
	}
	out := make([]endpoint, 0, len(ordered))
	for _, raw := range ordered {
		ep, err := parseEndpoint(raw)
		if err != nil {
			return nil, err
		}
		out = append(out, ep)
	}
	if len(out) == 0 {
		return nil, errors.New("discovery: no service URLs")
	}
	return out, nil
}

func parseEndpoint(raw string) (endpoint, error) {
	u, err := eureka.ParseServiceURL(raw)
	if err != nil {
		return endpoint{}, err
	}
	return endpoint{base: u.Base, auth: u.Authorization}, nil
}

// transport sends requests to the servers with the Java client's retry
// rules: up to three servers per request, sticking with the last one that
// worked, quarantining one that fails (connection error, or a status the
// request's policy rejects).
type transport struct {
	client     *fasthttp.Client
	quarantine time.Duration

	mu          sync.Mutex
	endpoints   []endpoint
	current     int
	quarantined map[int]time.Time
}

func newTransport(cfg Config, eps []endpoint) *transport {
	return &transport{
		client: &fasthttp.Client{
			Name:                "eurekagate-discovery",
			ReadTimeout:         cfg.ReadTimeout,
			WriteTimeout:        cfg.ReadTimeout,
			MaxIdleConnDuration: 30 * time.Second,
			Dial: func(addr string) (net.Conn, error) {
				return fasthttp.DialTimeout(addr, cfg.ConnectTimeout)
			},
		},
		quarantine:  cfg.QuarantineDuration,
		endpoints:   eps,
		quarantined: map[int]time.Time{},
	}
}

// response is what a request got back.
type response struct {
	status int
	body   []byte
}

// failsOver decides which statuses move the request to the next server.
type failsOver func(status int) bool

// serverErrors fails over on 5xx only.
func serverErrors(status int) bool { return status >= 500 }

// fullFetchErrors also fails over on 403, which a Netflix server answers
// during its first minutes.
func fullFetchErrors(status int) bool { return status >= 500 || status == 403 }

const maxAttempts = 3

// do sends method path (relative to the service URL) to up to three servers.
func (t *transport) do(method, path string, body []byte, fail failsOver) (response, error) {
	var lastErr error
	tried := 0
	for attempt := 0; attempt < maxAttempts; attempt++ {
		idx, ep, ok := t.pick(tried)
		if !ok {
			break
		}
		tried++
		resp, err := t.send(ep, method, path, body)
		if err == nil && !fail(resp.status) {
			t.succeeded(idx)
			return resp, nil
		}
		if err == nil {
			err = fmt.Errorf("discovery: %s %s%s: status %d", method, ep.base, path, resp.status)
			lastErr = err
			t.failed(idx)
			if attempt == maxAttempts-1 || tried >= len(t.endpoints) {
				return resp, err
			}
			continue
		}
		lastErr = err
		t.failed(idx)
	}
	if lastErr == nil {
		lastErr = errors.New("discovery: no server available")
	}
	return response{}, lastErr
}

// pick returns the server for the n-th attempt of a request: the sticky one
// first, then the next ones not quarantined. When every server is
// quarantined, the quarantine is cleared, as Java's is when it covers most
// of the candidates.
func (t *transport) pick(n int) (int, endpoint, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if n >= len(t.endpoints) {
		return 0, endpoint{}, false
	}
	now := time.Now()
	for id, until := range t.quarantined {
		if now.After(until) {
			delete(t.quarantined, id)
		}
	}
	if len(t.quarantined) >= len(t.endpoints) {
		clear(t.quarantined)
	}
	for k := 0; k < len(t.endpoints); k++ {
		idx := (t.current + k) % len(t.endpoints)
		if _, q := t.quarantined[idx]; !q {
			return idx, t.endpoints[idx], true
		}
	}
	return 0, endpoint{}, false
}

func (t *transport) succeeded(idx int) {
	t.mu.Lock()
	t.current = idx
	delete(t.quarantined, idx)
	t.mu.Unlock()
}

func (t *transport) failed(idx int) {
	t.mu.Lock()
	t.quarantined[idx] = time.Now().Add(t.quarantine)
	if t.current == idx {
		t.current = (idx + 1) % len(t.endpoints)
	}
	t.mu.Unlock()
}

func (t *transport) send(ep endpoint, method, path string, body []byte) (response, error) {
	req, resp := fasthttp.AcquireRequest(), fasthttp.AcquireResponse()
	defer fasthttp.ReleaseRequest(req)
	defer fasthttp.ReleaseResponse(resp)
	req.Header.SetMethod(method)
	req.SetRequestURI(ep.base + path)
	req.Header.Set("Accept", "application/json")
	req.Header.Set("Accept-Encoding", "gzip")
	if ep.auth != "" {
		req.Header.Set("Authorization", ep.auth)
	}
	if body != nil {
		req.Header.SetContentType("application/json")
		req.SetBody(body)
	}
	if err := t.client.Do(req, resp); err != nil {
		return response{}, err
	}
	out, err := resp.BodyUncompressed()
	if err != nil {
		return response{}, fmt.Errorf("discovery: %s %s%s: %w", method, ep.base, path, err)
	}
	return response{status: resp.StatusCode(), body: append([]byte(nil), out...)}, nil
}

func (t *transport) close() { t.client.CloseIdleConnections() }
