package discovery

import (
	"cmp"
	"context"
	"errors"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/time/rate"

	"github.com/eurekagate/eurekagate/eureka"
	"github.com/eurekagate/eurekagate/internal/eurekahttp"
)

// Client registers an instance with Eureka and keeps a local copy of the
// registry. Create it with New, then Start it; Stop cancels the
// registration and waits for its goroutines.
type Client struct {
	cfg     Config
	http    *eurekahttp.Client
	servers *eurekahttp.Cluster // the Eureka servers, with failover

	snap atomic.Pointer[snapshot]
	// regions is the regions parameter of every fetch ("" without remote
	// regions).
	regions string
	// last is the outcome of the fetches, for LastFetch.
	last atomic.Pointer[fetchOutcome]
	// fetchMu serializes the fetches (the fetch loop's, Refresh's); it
	// guards cache and the watch's version.
	fetchMu sync.Mutex
	cache   *cache

	// changed is closed and replaced at each change of the local
	// registry (Changed).
	changed atomic.Pointer[chan struct{}]

	ready     chan struct{}
	readyOnce sync.Once

	reg *registration

	watch watchState

	// ctx ends at Stop, so a request in flight (a held watch) ends with it.
	ctx    context.Context
	cancel context.CancelFunc

	stop    chan struct{}
	wg      sync.WaitGroup
	started atomic.Bool
	stopped atomic.Bool
}

// New returns a Client for cfg. It does no I/O until Start.
func New(cfg Config) (*Client, error) {
	if cfg.Instance != nil {
		if err := cfg.Instance.Network.validate(); err != nil {
			return nil, err
		}
	}
	cfg = cfg.withDefaults()
	if cfg.Instance != nil && cfg.Instance.AppName == "" {
		return nil, errors.New("discovery: Instance.AppName is required to register")
	}
	seed := uint64(time.Now().UnixNano())
	rnd := rand.New(rand.NewPCG(seed, seed>>3|1))
	eps, err := orderEndpoints(cfg, rnd)
	if err != nil {
		return nil, err
	}
	if len(eps) == 0 {
		return nil, errors.New("discovery: no service URLs")
	}
	httpClient := eurekahttp.NewClient(eurekahttp.Config{
		ConnectTimeout: cfg.ConnectTimeout, ReadTimeout: cfg.ReadTimeout, MaxBodySize: cfg.MaxResponseBodySize,
		MaxBodySizeSetting: cmp.Or(cfg.MaxResponseBodySizeSetting, "MaxResponseBodySize"),
		UserAgent:          "eurekagate-discovery", TLS: cfg.TLS,
	})
	servers, err := eurekahttp.NewCluster(httpClient, eps, eurekahttp.ClusterConfig{
		QuarantineDuration: cfg.QuarantineDuration, ReshuffleInterval: cfg.ServerReshuffleInterval, Now: cfg.clock.Now,
		// Called under the Cluster's lock, which serializes the use of rnd.
		Reorder: func() []eureka.ServiceURL {
			eps, _ := orderEndpoints(cfg, rnd) // the URLs parsed above
			return eps
		},
	})
	if err != nil {
		return nil, err
	}
	c := &Client{
		cfg:     cfg,
		http:    httpClient,
		servers: servers,
		regions: regionsQuery(cfg.FetchRemoteRegions),
		cache:   newCache(newPlacement(cfg)),
		ready:   make(chan struct{}),
		stop:    make(chan struct{}),
	}
	changed := make(chan struct{})
	c.changed.Store(&changed)
	c.ctx, c.cancel = context.WithCancel(context.Background())
	if len(cfg.Apps) > 0 {
		c.watch.apps = slices.Sorted(slices.Values(upperAll(cfg.Apps)))
	} else if cfg.LearnApps {
		c.watch.apps = []string{}
	}
	c.snap.Store(c.cache.last)
	if cfg.Instance != nil {
		c.reg = newRegistration(c, cfg.Instance)
	}
	return c, nil
}

// Start registers the instance (if any) and fetches the registry, then keeps
// both up to date in the background. It does not block on the network.
func (c *Client) Start() {
	if !c.started.CompareAndSwap(false, true) {
		return
	}
	if !c.cfg.DisableFetch {
		c.wg.Add(1)
		go c.fetchLoop()
	} else {
		c.readyOnce.Do(func() { close(c.ready) })
	}
	if c.reg != nil {
		c.wg.Add(1)
		go c.reg.loop()
	}
}

// Stop stops the background work and waits for it within ctx (a request
// in flight ends first, bounded by the timeouts), then cancels the
// registration (DELETE). The DELETE is sent even when ctx has ended by
// then, bounded by a ReadTimeout of its own, so that a short ctx does not
// leave the instance registered until its lease expires; no registration
// is sent after it. Stop returns ctx's error if the background work
// outlived ctx, and the DELETE's error if it got no answer.
func (c *Client) Stop(ctx context.Context) error {
	if !c.stopped.CompareAndSwap(false, true) {
		return nil
	}
	close(c.stop)
	c.cancel()
	done := make(chan struct{})
	go func() { c.wg.Wait(); close(done) }()
	var waitErr error
	select {
	case <-done:
	case <-ctx.Done():
		waitErr = ctx.Err()
	}
	var err error
	if c.reg != nil && c.started.Load() {
		err = c.reg.cancel()
	}
	c.http.Close()
	return errors.Join(waitErr, err)
}

// orderEndpoints lists the servers as the Java client's resolver does: my
// zone's first (unless same-zone preference is off), each group shuffled.
func orderEndpoints(cfg Config, rnd *rand.Rand) ([]eureka.ServiceURL, error) {
	return eurekahttp.ZonedServers{
		DefaultZone: cfg.ServiceURLs, Zones: cfg.ZoneServiceURLs,
		MyZone: cfg.Zone, DisablePreferSameZone: cfg.DisablePreferSameZone,
	}.Order(rnd)
}

// Ready is closed after the first successful fetch of the registry (at
// once if fetching is disabled).
func (c *Client) Ready() <-chan struct{} { return c.ready }

// Instances returns the UP instances of app in the local region, sorted
// by id. It reads the current snapshot: no lock, no I/O. The result must
// not be modified.
func (c *Client) Instances(app string) []*eureka.InstanceInfo {
	if a := c.snap.Load().apps[app]; a != nil {
		return a.up
	}
	c.learn(app)
	return nil
}

// learn adds an app asked for to the interest, with LearnApps.
func (c *Client) learn(app string) {
	if c.cfg.LearnApps && len(c.cfg.Apps) == 0 && app != "" {
		c.watch.learn(strings.ToUpper(app))
	}
}

func upperAll(apps []string) []string {
	out := make([]string, 0, len(apps))
	for _, a := range apps {
		if a = strings.ToUpper(strings.TrimSpace(a)); a != "" && !slices.Contains(out, a) {
			out = append(out, a)
		}
	}
	return out
}

// AllInstances returns every instance of app in the local region,
// whatever its status.
func (c *Client) AllInstances(app string) []*eureka.InstanceInfo {
	if a := c.snap.Load().apps[app]; a != nil {
		return a.all
	}
	c.learn(app)
	return nil
}

// Applications returns the local region's whole registry as a document.
// It must not be modified. With FetchRemoteRegions, its apps__hashcode is
// that of its own instances, not the server's, which covers the remote
// regions' too.
func (c *Client) Applications() *eureka.Applications { return c.snap.Load().applications() }

// Changed returns a channel closed at the next change of the local
// registry, in the local region or a remote one (notify.Notifier). Take
// it before reading the registry, and the next one before reading again.
func (c *Client) Changed() <-chan struct{} { return *c.changed.Load() }

// publish makes s the local registry and announces it if it changed,
// before Ready closes: a channel Changed returns after Ready is not
// closed by the first fetch. s comes from a server's answer, so
// publish also records a successful fetch, for LastFetch.
func (c *Client) publish(s *snapshot, changed bool) {
	// Stored before the channel closes: a consumer woken by it reads s.
	c.snap.Store(s)
	c.fetched(nil)
	if changed {
		next := make(chan struct{})
		close(*c.changed.Swap(&next))
	}
	c.readyOnce.Do(func() { close(c.ready) })
}

// backoff is the delay of a periodic task (heartbeats, polling) after a
// run that ended with err, as Java's TimedSupervisorTask: the interval,
// doubled after each run that timed out, up to ExpBackOffBound intervals.
// Any other failure keeps the interval. prev is the delay before the run.
func (c *Client) backoff(prev, interval time.Duration, err error) time.Duration {
	if !eurekahttp.IsTimeout(err) {
		return interval
	}
	return min(max(2*prev, 2*interval), time.Duration(c.cfg.ExpBackOffBound)*interval)
}

// newLimiter is the Java client's on-demand update limit: bursts of two,
// four per minute. Callers pass the time (AllowN), so a test clock works.
func newLimiter() *rate.Limiter { return rate.NewLimiter(rate.Every(15*time.Second), 2) }
