package balancer

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"

	"github.com/eurekagate/eurekagate/eureka"
	"github.com/eurekagate/eurekagate/internal/perapp"
)

// The defaults of CheckConfig.
const (
	DefaultCheckInterval = 30 * time.Second
	DefaultCheckTimeout  = 5 * time.Second
)

// CheckConfig configures a Checker. The zero value checks every 30s with
// a 5s timeout and takes any 2xx answer as a pass.
type CheckConfig struct {
	// Interval is how often each instance's health URL is requested.
	// Default: 30s.
	Interval time.Duration
	// Timeout bounds a check: one without an answer in time fails.
	// Default: 5s, or Interval if that is shorter.
	Timeout time.Duration
	// ExpectStatus is the status of a passing answer: a status code, such
	// as 200, or a class as its first digit, such as 2 for any 2xx.
	// Default: any 2xx.
	ExpectStatus int
	// Client sends the checks. Default: a client that follows no
	// redirect (a redirect is an answer like any other, which fails a
	// check expecting 2xx).
	Client *http.Client
	// Logger receives, at Info, each instance that fails its check and
	// each that passes it again. Default: none.
	Logger *zap.Logger
}

// Checker runs active health checks: every Interval it requests the
// health URL each instance registered (healthCheckUrl, or
// secureHealthCheckUrl when it has only that) and, until the instance
// passes a check again, reports the instance unhealthy. Only that URL is
// requested, at the host and port it names. An instance with no health
// URL (or one that is not an absolute http or https URL) is not checked
// and always healthy, as is one not checked yet.
//
// A Checker checks the applications it has been asked about, from the
// first question on: a Balancer whose Config.Checker it is asks about every
// application it picks for, Healthy asks about the instance's application
// and Filter about its application. The first question about an application has its instances
// checked at once; an application that no longer has instances is
// dropped, and so is what the Checker knows of instances that leave their
// application.
//
// The owner of a Checker starts it with Start and stops it with Stop, as
// fxmodules.Balancer does when a CheckConfig is supplied. It is safe for
// concurrent use.
type Checker struct {
	src    Instancer
	cfg    CheckConfig
	client *http.Client
	log    *zap.Logger

	apps   atomic.Pointer[map[string]*appCheck] // copy-on-write
	appsMu sync.Mutex
	wake   chan struct{} // an application was added

	states sync.Map      // healthKey -> *checkState
	down   atomic.Int64  // states that are down
	gen    atomic.Uint64 // moves whenever an instance goes down or comes back
	// failed counts, per app (upper case), the checks that failed.
	failed perapp.Map[atomic.Uint64]

	runMu  sync.Mutex
	cancel context.CancelFunc
	done   chan struct{}
}

type appCheck struct {
	checked atomic.Bool // its instances have been checked once
}

type checkState struct {
	down atomic.Bool
	// since is when it went down (unix nanos), and reason why its last
	// check failed: what Failing reports.
	since  atomic.Int64
	reason atomic.Pointer[string]
}

// healthKey names a checked instance: its app (upper case) and id. Ids
// repeat across apps, and one app's failing check says nothing of
// another's instance of the same id. The Checker checks the local
// region's instances only: another region's are never taken for them.
type healthKey struct {
	app, id string
}

func healthKeyOf(app, id string) healthKey { return healthKey{app: strings.ToUpper(app), id: id} }

// maxConcurrentChecks bounds the checks in flight at once.
const maxConcurrentChecks = 32

// NewChecker returns a Checker of the instances src lists, not started.
func NewChecker(src Instancer, cfg CheckConfig) *Checker {
	if cfg.Interval <= 0 {
		cfg.Interval = DefaultCheckInterval
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultCheckTimeout
	}
	cfg.Timeout = min(cfg.Timeout, cfg.Interval)
	client := cfg.Client
	if client == nil {
		client = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	}
	log := cfg.Logger
	if log == nil {
		log = zap.NewNop()
	}
	return &Checker{src: src, cfg: cfg, client: client, log: log, wake: make(chan struct{}, 1)}
}

// Start starts checking, in a goroutine of the Checker's, until Stop. A
// Checker starts once; later calls do nothing.
func (c *Checker) Start() {
	c.runMu.Lock()
	defer c.runMu.Unlock()
	if c.done != nil {
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	c.cancel, c.done = cancel, make(chan struct{})
	go c.run(ctx, c.done)
}

// Stop stops checking, cancels the checks in flight and waits for them.
// What the Checker found stays: Healthy keeps answering by the last
// checks.
func (c *Checker) Stop() {
	c.runMu.Lock()
	defer c.runMu.Unlock()
	if c.cancel != nil {
		c.cancel()
		<-c.done
		c.cancel = nil
	}
}

// Healthy reports whether inst may take calls as far as the checks know:
// false only when its last check failed. It has inst's application
// checked from now on.
func (c *Checker) Healthy(inst *eureka.InstanceInfo) bool {
	c.watch(inst.App)
	return !c.isDown(inst.App, inst.ID())
}

// Filter returns the instances of list, instances of app, that are
// healthy: list itself when all are, else a new slice. It has app checked
// from now on.
func (c *Checker) Filter(app string, list []*eureka.InstanceInfo) []*eureka.InstanceInfo {
	c.watch(app)
	if !c.anyDown() {
		return list
	}
	out := make([]*eureka.InstanceInfo, 0, len(list))
	for _, inst := range list {
		if !c.isDown(app, inst.ID()) {
			out = append(out, inst)
		}
	}
	if len(out) == len(list) {
		return list
	}
	return out
}

// isDown reports whether the last check of app's instance id failed.
func (c *Checker) isDown(app, id string) bool {
	if c.down.Load() == 0 {
		return false
	}
	v, ok := c.states.Load(healthKeyOf(app, id))
	return ok && v.(*checkState).down.Load()
}

// Generation is a number that moves whenever an instance fails its check
// or passes it again: what was filtered at one generation holds until the
// next (or until the instance list changes).
func (c *Checker) Generation() uint64 { return c.gen.Load() }

// anyDown reports whether some instance failed its last check.
func (c *Checker) anyDown() bool { return c.down.Load() > 0 }

// watch has app checked from now on.
func (c *Checker) watch(app string) {
	app = strings.ToUpper(app) // no copy when it is upper case already
	if m := c.apps.Load(); m != nil && (*m)[app] != nil {
		return
	}
	c.appsMu.Lock()
	defer c.appsMu.Unlock()
	old := c.apps.Load()
	if old != nil && (*old)[app] != nil {
		return
	}
	next := make(map[string]*appCheck, 1)
	if old != nil {
		for k, v := range *old {
			next[k] = v
		}
	}
	next[app] = new(appCheck)
	c.apps.Store(&next)
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

func (c *Checker) run(ctx context.Context, done chan struct{}) {
	defer close(done)
	ticker := time.NewTicker(c.cfg.Interval)
	defer ticker.Stop()
	full := true
	for {
		c.round(ctx, full)
		select {
		case <-ctx.Done():
			return
		case <-ticker.C:
			full = true
		case <-c.wake:
			full = false // check only the new applications
		}
	}
}

// round checks the instances of every application, or with full false
// of the applications not checked yet. A full round then forgets the
// instances and applications that are gone.
func (c *Checker) round(ctx context.Context, full bool) {
	m := c.apps.Load()
	if m == nil {
		return
	}
	var wg sync.WaitGroup
	sem := make(chan struct{}, maxConcurrentChecks)
	listed := map[healthKey]bool{}
	var empty []string
	for app, ac := range *m {
		if !full && ac.checked.Load() {
			continue
		}
		ac.checked.Store(true)
		list := c.src.Instances(app)
		if len(list) == 0 {
			empty = append(empty, app)
		}
		for _, inst := range list {
			listed[healthKeyOf(app, inst.ID())] = true
			u := healthURL(inst)
			if u == "" {
				c.set(inst, false, nil)
				continue
			}
			select {
			case sem <- struct{}{}:
			case <-ctx.Done():
				wg.Wait()
				return
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer func() { <-sem }()
				err := c.check(ctx, u)
				if ctx.Err() == nil {
					c.set(inst, err != nil, err)
				}
			}()
		}
	}
	wg.Wait()
	if !full || ctx.Err() != nil {
		return
	}
	c.states.Range(func(k, v any) bool {
		if !listed[k.(healthKey)] && c.states.CompareAndDelete(k, v) && v.(*checkState).down.Load() {
			c.down.Add(-1)
			c.gen.Add(1)
		}
		return true
	})
	if len(empty) > 0 {
		c.dropApps(empty)
	}
}

// dropApps stops checking apps, unless they have instances again.
func (c *Checker) dropApps(apps []string) {
	c.appsMu.Lock()
	defer c.appsMu.Unlock()
	old := *c.apps.Load()
	next := make(map[string]*appCheck, len(old))
	for k, v := range old {
		next[k] = v
	}
	for _, app := range apps {
		if len(c.src.Instances(app)) == 0 {
			delete(next, app)
		}
	}
	c.apps.Store(&next)
}

// Failures returns, per app (upper case), how many of its instances'
// health checks failed so far.
func (c *Checker) Failures() map[string]uint64 {
	out := map[string]uint64{}
	for app, n := range c.failed.Snapshot() {
		out[app] = n.Load()
	}
	return out
}

// ForgetApps drops the Failures of apps, which have left the registry
// (as Balancer.ForgetApps does their ejections).
func (c *Checker) ForgetApps(apps []string) { forgetApps(&c.failed, apps) }

// set records the outcome of inst's check.
func (c *Checker) set(inst *eureka.InstanceInfo, down bool, err error) {
	if down {
		c.failed.Get(strings.ToUpper(inst.App)).Add(1)
	}
	k := healthKeyOf(inst.App, inst.ID())
	v, ok := c.states.Load(k)
	if !ok {
		if !down {
			return // healthy and unknown are the same
		}
		v, _ = c.states.LoadOrStore(k, new(checkState))
	}
	st := v.(*checkState)
	if down {
		why := "failed"
		if err != nil {
			why = err.Error()
		}
		st.reason.Store(&why)
	}
	if st.down.Swap(down) == down {
		return
	}
	if down {
		st.since.Store(time.Now().UnixNano())
	}
	c.gen.Add(1)
	if down {
		c.down.Add(1)
		c.log.Info("instance failed its health check, out of rotation",
			zap.String("app", inst.App), zap.String("instance", inst.ID()), zap.Error(err))
	} else {
		c.down.Add(-1)
		c.log.Info("instance passed its health check, back in rotation",
			zap.String("app", inst.App), zap.String("instance", inst.ID()))
	}
}

// check requests u and returns why the check failed, or nil.
func (c *Checker) check(ctx context.Context, u string) error {
	ctx, cancel := context.WithTimeout(ctx, c.cfg.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return err
	}
	resp, err := c.client.Do(req)
	if err != nil {
		return err
	}
	io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
	if !statusMatches(resp.StatusCode, c.cfg.ExpectStatus) {
		return fmt.Errorf("status %d", resp.StatusCode)
	}
	return nil
}

// statusMatches reports whether status is the expected one: want itself,
// or of class want when want is a digit, or 2xx when want is 0.
func statusMatches(status, want int) bool {
	switch {
	case want == 0:
		return status >= 200 && status < 300
	case want < 10:
		return status/100 == want
	}
	return status == want
}

// healthURL returns the health URL inst registered, or "" when it has no
// absolute http(s) one.
func healthURL(inst *eureka.InstanceInfo) string {
	for _, s := range []string{inst.HealthCheckURL, inst.SecureHealthCheckURL} {
		if s == "" {
			continue
		}
		if u, err := url.Parse(s); err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != "" {
			return s
		}
	}
	return ""
}
