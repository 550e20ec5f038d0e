package eurekahttp

import (
	"context"
	"errors"
	"slices"
	"sync"
	"time"

	"github.com/eurekagate/eurekagate/eureka"
)

// MaxServersPerRequest is how many servers a Cluster tries for one request,
// as the Java client's RetryableEurekaHttpClient (numberOfRetries).
const MaxServersPerRequest = 3

// FailoverRule tells whether a status counts as a failure of the server
// that answered it, so that a Cluster quarantines that server and tries the
// next one. Connection errors and timeouts always count.
type FailoverRule func(status int) bool

// FailOverOnServerError counts 5xx answers as failures. The discovery
// client uses it for registration, heartbeats, cancellation and deltas:
// their 4xx answers (404 to a heartbeat, 403 to a delta) are the server's
// verdict and are handled by the caller.
func FailOverOnServerError(status int) bool { return status >= 500 }

// FailOverOnServerErrorOrForbidden counts 5xx and 403 answers as failures.
// The discovery client uses it for the full fetch, which a Netflix server
// refuses with 403 during its first minutes.
func FailOverOnServerErrorOrForbidden(status int) bool { return status >= 500 || status == 403 }

// ClusterConfig configures a Cluster. The zero value gives the defaults.
type ClusterConfig struct {
	// QuarantineDuration is how long a server that failed is skipped.
	// Default 30s. When every server is quarantined, the quarantine is
	// cleared and they are all tried again.
	QuarantineDuration time.Duration
	// Now is the clock that times quarantines. Default time.Now.
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
// It is safe for concurrent use.
type Cluster struct {
	client  *Client
	cfg     ClusterConfig
	servers []eureka.ServiceURL

	mu          sync.Mutex
	current     int               // the sticky server
	quarantined map[int]time.Time // server index → end of quarantine
}

// NewCluster returns a Cluster over servers, tried in the given order (see
// ZonedServers.Order for the Java client's), sending through client.
func NewCluster(client *Client, servers []eureka.ServiceURL, cfg ClusterConfig) (*Cluster, error) {
	if len(servers) == 0 {
		return nil, errors.New("eurekahttp: no service URLs")
	}
	if cfg.QuarantineDuration <= 0 {
		cfg.QuarantineDuration = DefaultQuarantineDuration
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return &Cluster{client: client, cfg: cfg, servers: slices.Clone(servers), quarantined: map[int]time.Time{}}, nil
}

// Do sends r to the sticky server, failing over as the Cluster's doc says,
// and returns the first answer r.FailOver accepts. When every server tried
// failed, or ctx ended, the error is a *ClusterError listing the attempts.
// A server is not quarantined for a failure that ctx's end caused.
func (c *Cluster) Do(ctx context.Context, r Request) (Response, error) {
	failover := r.FailOver
	if failover == nil {
		failover = FailOverOnServerError
	}
	var attempts []*Error
	for n := 0; n < MaxServersPerRequest; n++ {
		idx, server, ok := c.pick(n)
		if !ok {
			break
		}
		if err := contextDone(ctx); err != nil {
			attempts = append(attempts, &Error{Method: r.method(), URL: r.url(server), Err: err})
			break
		}
		resp, err := c.client.Do(ctx, server, r)
		if err == nil && !failover(resp.Status) {
			c.succeeded(idx)
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
		c.failed(idx)
	}
	return Response{}, &ClusterError{Attempts: attempts}
}

// pick returns the server for the n-th attempt of a request: the sticky one
// first, then the next ones not quarantined. When every server is
// quarantined, the quarantine is cleared (Java clears it once it covers
// 66 % of the servers).
func (c *Cluster) pick(n int) (int, eureka.ServiceURL, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if n >= len(c.servers) {
		return 0, eureka.ServiceURL{}, false
	}
	now := c.cfg.Now()
	for idx, until := range c.quarantined {
		if now.After(until) {
			delete(c.quarantined, idx)
		}
	}
	if len(c.quarantined) >= len(c.servers) {
		clear(c.quarantined)
	}
	for k := range len(c.servers) {
		idx := (c.current + k) % len(c.servers)
		if _, q := c.quarantined[idx]; !q {
			return idx, c.servers[idx], true
		}
	}
	return 0, eureka.ServiceURL{}, false
}

func (c *Cluster) succeeded(idx int) {
	c.mu.Lock()
	c.current = idx
	delete(c.quarantined, idx)
	c.mu.Unlock()
}

func (c *Cluster) failed(idx int) {
	c.mu.Lock()
	c.quarantined[idx] = c.cfg.Now().Add(c.cfg.QuarantineDuration)
	if c.current == idx {
		c.current = (idx + 1) % len(c.servers)
	}
	c.mu.Unlock()
}
