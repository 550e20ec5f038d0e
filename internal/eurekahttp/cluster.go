package eurekahttp

import (
	"context"
	"errors"
	"math/rand/v2"
	"slices"
	"sync"
	"time"

	"github.com/eurekagate/eurekagate/eureka"
)

// MaxServersPerRequest is how many servers a Cluster tries for one request,
// as the Java client's RetryableEurekaHttpClient (numberOfRetries).
const MaxServersPerRequest = 3

// QuarantineRefreshPercent is the share of the servers, in percent, that
// the quarantine may cover: when at least this many are quarantined, the
// quarantine is cleared and every server is tried again, as the Java
// client's retryableClientQuarantineRefreshPercentage (0.66). With two
// servers one stays quarantined; with three, the second failure clears it.
const QuarantineRefreshPercent = 66

// DefaultReshuffleInterval is ClusterConfig.ReshuffleInterval's default:
// the Java client's session length (sessionedClientReconnectIntervalSeconds,
// 1200).
const DefaultReshuffleInterval = 20 * time.Minute

// FailoverRule tells whether a status counts as a failure of the server
// that answered it, so that a Cluster quarantines that server and tries the
// next one. Connection errors and timeouts always count.
//
// The rules below are the Java client's (its legacy ServerStatusEvaluator):
// every request accepts 2xx and 302, and a few accept some more statuses,
// which are the server's verdict for the caller to handle. Any other
// status, such as 307 from a server that is starting, 401, 403, 429 or a
// 5xx, fails over.
type FailoverRule func(status int) bool

// acceptedByAll reports whether every request kind accepts status: 2xx and
// 302.
func acceptedByAll(status int) bool {
	return status >= 200 && status < 300 || status == 302
}

// FailOverUnlessOK accepts 2xx and 302 answers only: any other status fails
// over. It is the default rule, and the full fetch's, which a Netflix server
// refuses with 403 during its first minutes.
func FailOverUnlessOK(status int) bool { return !acceptedByAll(status) }

// FailOverRegistration also accepts 404. It is the rule of registrations
// and heartbeats: a 404 to a heartbeat means the server does not know the
// instance, and the client registers it again.
func FailOverRegistration(status int) bool { return !acceptedByAll(status) && status != 404 }

// FailOverDelta also accepts 403 and 404. It is the rule of delta fetches:
// a server that does not serve deltas answers so, and the client falls
// back to a full fetch.
func FailOverDelta(status int) bool {
	return !acceptedByAll(status) && status != 403 && status != 404
}

// FailOverNever accepts every status. It is the rule of a cancel, which is
// best effort: only a connection error or a timeout moves it to the next
// server.
func FailOverNever(int) bool { return false }

// ClusterConfig configures a Cluster. The zero value gives the defaults.
type ClusterConfig struct {
	// QuarantineDuration is how long a server that failed is skipped.
	// Default 30s. When QuarantineRefreshPercent of the servers are
	// quarantined, the quarantine is cleared and they are all tried again.
	QuarantineDuration time.Duration
	// Reorder, if set, returns the servers in a new order (for the Java
	// client's, ZonedServers.Order with a fresh shuffle); the Cluster
	// calls it every ReshuffleInterval and starts over with the first of
	// the new order, as a Java client does at each new session, so that
	// clients spread again over the servers that came back. It must
	// return the same servers; nil keeps the order. Default nil: the order
	// never changes.
	Reorder func() []eureka.ServiceURL
	// ReshuffleInterval is how often Reorder is called, each period drawn
	// at random within ±50% of it, so that clients started together do
	// not move together. Default 20m (10 to 30 minutes), the Java
	// client's session length.
	ReshuffleInterval time.Duration
	// Now is the clock that times quarantines and reshuffles. Default
	// time.Now.
	Now func() time.Time
}

// Cluster sends each request to a list of servers with the Java client's
// failover rules: it starts with the server that last answered (at first,
// the first of the list) and, while a server fails (a connection error, a
// timeout, or a status the request's FailoverRule rejects), quarantines it
// and tries the next one that is not quarantined, up to
// MaxServersPerRequest servers. As the sticky server moves past each server
// that fails, the quarantine matters when requests overlap: a server that
// failed one request is skipped by the others until its quarantine ends.
// With ClusterConfig.Reorder, the order is renewed now and then. It is
// safe for concurrent use.
type Cluster struct {
	client *Client
	cfg    ClusterConfig

	mu            sync.Mutex
	servers       []eureka.ServiceURL
	current       int               // the sticky server
	quarantined   map[int]time.Time // server index → end of quarantine
	nextReshuffle time.Time         // zero without Reorder
}

// NewCluster returns a Cluster over servers, tried in the given order (see
// ZonedServers.Order for the Java client's), sending through client. A
// server listed twice is tried once.
func NewCluster(client *Client, servers []eureka.ServiceURL, cfg ClusterConfig) (*Cluster, error) {
	if len(servers) == 0 {
		return nil, errors.New("eurekahttp: no service URLs")
	}
	if cfg.QuarantineDuration <= 0 {
		cfg.QuarantineDuration = DefaultQuarantineDuration
	}
	if cfg.ReshuffleInterval <= 0 {
		cfg.ReshuffleInterval = DefaultReshuffleInterval
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	c := &Cluster{client: client, cfg: cfg, servers: distinct(servers), quarantined: map[int]time.Time{}}
	if cfg.Reorder != nil {
		c.nextReshuffle = c.reshuffleAfter(cfg.Now())
	}
	return c, nil
}

// Do sends r to the sticky server, failing over as the Cluster's doc says,
// and returns the first answer r.FailOver accepts. When every server tried
// failed, or ctx ended, the error is a *ClusterError listing the attempts.
// A server is not quarantined for a failure that ctx's end caused.
func (c *Cluster) Do(ctx context.Context, r Request) (Response, error) {
	failover := r.FailOver
	if failover == nil {
		failover = FailOverUnlessOK
	}
	var attempts []*Error
	for n := 0; n < MaxServersPerRequest; n++ {
		server, ok := c.pick(n)
		if !ok {
			break
		}
		if err := contextDone(ctx); err != nil {
			attempts = append(attempts, &Error{Method: r.method(), URL: r.url(server), Err: err})
			break
		}
		resp, err := c.client.Do(ctx, server, r)
		if err == nil && !failover(resp.Status) {
			c.succeeded(server)
			return resp, nil
		}
		var attempt *Error
		if !errors.As(err, &attempt) {
			attempt = &Error{Method: r.method(), URL: r.url(server), Status: resp.Status, Err: err}
		}
		attempts = append(attempts, attempt)
		if contextDone(ctx) != nil {
			break
		}
		c.failed(server)
	}
	return Response{}, &ClusterError{Attempts: attempts}
}

// pick returns the server for the n-th attempt of a request: the sticky one
// first, then the next ones not quarantined. It renews the order when a
// reshuffle is due, and clears the quarantine when it covers
// QuarantineRefreshPercent of the servers.
func (c *Cluster) pick(n int) (eureka.ServiceURL, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.cfg.Now()
	if c.cfg.Reorder != nil && !now.Before(c.nextReshuffle) {
		c.reshuffle(now)
	}
	if n >= len(c.servers) {
		return eureka.ServiceURL{}, false
	}
	for idx, until := range c.quarantined {
		if now.After(until) {
			delete(c.quarantined, idx)
		}
	}
	if len(c.quarantined) > 0 && 100*len(c.quarantined) >= QuarantineRefreshPercent*len(c.servers) {
		clear(c.quarantined)
	}
	for k := range len(c.servers) {
		idx := (c.current + k) % len(c.servers)
		if _, q := c.quarantined[idx]; !q {
			return c.servers[idx], true
		}
	}
	return eureka.ServiceURL{}, false
}

// reshuffle takes the new order from Reorder, keeps the quarantine of the
// servers in it, and starts over with its first server. The caller holds
// c.mu.
func (c *Cluster) reshuffle(now time.Time) {
	c.nextReshuffle = c.reshuffleAfter(now)
	servers := distinct(c.cfg.Reorder())
	if len(servers) == 0 {
		return
	}
	quarantined := make(map[int]time.Time, len(c.quarantined))
	for idx, until := range c.quarantined {
		if n := slices.Index(servers, c.servers[idx]); n >= 0 {
			quarantined[n] = until
		}
	}
	c.servers, c.quarantined, c.current = servers, quarantined, 0
}

// distinct returns a copy of servers without repeats, in order.
func distinct(servers []eureka.ServiceURL) []eureka.ServiceURL {
	out := make([]eureka.ServiceURL, 0, len(servers))
	for _, s := range servers {
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

// reshuffleAfter is when the period that starts at now ends: uniformly
// within ±50% of ReshuffleInterval, as the Java client's session.
func (c *Cluster) reshuffleAfter(now time.Time) time.Time {
	d := c.cfg.ReshuffleInterval
	return now.Add(d/2 + rand.N(d+1))
}

// Servers returns the servers in the order they are tried, starting with
// the list's first (not necessarily the sticky one).
func (c *Cluster) Servers() []eureka.ServiceURL {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.servers)
}

func (c *Cluster) succeeded(server eureka.ServiceURL) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if idx := slices.Index(c.servers, server); idx >= 0 {
		c.current = idx
		delete(c.quarantined, idx)
	}
}

func (c *Cluster) failed(server eureka.ServiceURL) {
	c.mu.Lock()
	defer c.mu.Unlock()
	idx := slices.Index(c.servers, server)
	if idx < 0 {
		return // reordered away meanwhile
	}
	c.quarantined[idx] = c.cfg.Now().Add(c.cfg.QuarantineDuration)
	if c.current == idx {
		c.current = (idx + 1) % len(c.servers)
	}
}
