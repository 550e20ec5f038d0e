// Package feeds fills a Store's remote regions (the registry/regions
// Mirror): for each region, a discovery client reads that region's
// registry (the whole of it, with no registration) and hands every
// registry it read to the Mirror (Mirror.Update), and every failed read
// too (Mirror.Failed), as Java Eureka's RemoteRegionRegistry does. It is
// a package apart from registry/regions because it imports discovery,
// whose tests import registry/httpapi, which imports registry/regions.
//
// The client asks for the remote region's own instances only, never with
// a regions parameter, so that regions never chain: a region serves what
// its own clients registered, not what it read from others. Against one
// of our servers the client holds a watch open, and a change there
// reaches the Store within a round trip; against any other (Java Eureka)
// it polls every FetchInterval, a delta after the first full fetch.
//
// A Store that stops hearing from a region keeps its last registry for
// registry.Config.RemoteRegionRetention (the Store's retention loop drops
// it then, Mirror.DropStale), and takes it up again at the region's next
// answer. Against our servers that next answer is the watch's: at once
// when the region's registry has changed, else when the server ends the
// held watch, which a feed asks to be at most a quarter of the retention
// (discovery.Config.WatchWait, 30s by default), so that a quiet region
// that is up answers several times within the retention and is never
// taken for gone.
package feeds

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/eurekagate/eurekagate/discovery"
	"github.com/eurekagate/eurekagate/internal/settings"
	"github.com/eurekagate/eurekagate/registry"
	"github.com/eurekagate/eurekagate/registry/regions"
)

// Remote is one remote region and the service URLs of its Eureka servers
// (eureka.server.remoteRegionUrlsWithName). The client tries them as a
// Eureka client tries its servers: one after the other on failure.
type Remote struct {
	// Name is the region's name: one of the Store's RemoteRegions
	// (matched without regard to case).
	Name string
	// URLs are the region's service URLs, such as
	// http://eureka.eu-west-1:8761/eureka/. User info in a URL is sent as
	// basic auth.
	URLs []string
}

// Config configures the Feeds.
type Config struct {
	// Remotes are the regions to read, one client each. Default: none,
	// and the Feeds do nothing.
	Remotes []Remote
	// FetchInterval is how often a region whose servers do not offer the
	// watch (Java Eureka) is read again
	// (eureka.server.remoteRegionRegistryFetchInterval). Our servers are
	// watched instead. Default registry.DefaultRemoteRegionFetchInterval,
	// 30s.
	FetchInterval time.Duration
	// MaxRegionBytes bounds each answer of a region's servers, in bytes
	// after gzip decoding, and MaxRegionInstances the instances its
	// registry may hold: a region that sends more is refused (its last
	// registry is kept, and its state's LastError says why), so that
	// another cluster cannot fill this one's memory. Defaults
	// registry.DefaultMaxRegionBytes (1 GiB) and
	// registry.DefaultMaxRegionInstances (1,000,000): the scale one node
	// holds; set them to the region's size to hold a hostile one to it.
	MaxRegionBytes, MaxRegionInstances int
	// TLS configures the connections to https:// service URLs: the CAs to
	// trust, the client certificate to present. Default: nil, the
	// system's roots and no client certificate.
	TLS *tls.Config
	// Logger receives a line when a region becomes ready, when it
	// answers again after failures, and when it is refused over
	// MaxRegionBytes or MaxRegionInstances (at warn level, naming the
	// bound); the clients log each failed read at warn level, with the
	// region's name. Default: no logging.
	Logger *zap.Logger
}

// checkInterval is how often a feed looks at its client's last fetch
// besides the client's change notifications, which only come when the
// registry changed: a read that changed nothing still tells the Mirror
// that the region answers, and a failed one that it does not.
const checkInterval = time.Second

// Feeds reads the remote regions of a Store. Create it with New, then
// Start it; Stop stops the clients and waits for every goroutine.
type Feeds struct {
	mirror *regions.Mirror
	now    func() time.Time // the Store's clock, for the times it is given
	log    *zap.Logger
	feeds  []*feed
	// The instance bound, for the errors that pass it (explain); the
	// byte bound's error names itself.
	maxInstances int

	mu      sync.Mutex
	started bool
	stopped bool
	stop    chan struct{}
	wg      sync.WaitGroup
}

// feed is one region: its client and what it last told the Store.
type feed struct {
	name   string
	client *discovery.Client
	// Owned by the feed's goroutine.
	lastAt   time.Time // the client's last successful fetch handed over
	lastErr  error     // the failure last reported, nil after a success
	failing  bool
	everRead bool
}

// New returns the Feeds of store's remote regions. Each of cfg.Remotes
// must name one of the Store's RemoteRegions (not its own region), once,
// with at least one http or https service URL. It does no I/O until
// Start. A remote region of the Store that no Remote names is never read:
// reads that ask for it are refused as not ready.
func New(store *registry.Store, cfg Config) (*Feeds, error) {
	if store == nil {
		return nil, errors.New("regions: no Store")
	}
	settings.Default(&cfg.FetchInterval, registry.DefaultRemoteRegionFetchInterval)
	settings.Default(&cfg.MaxRegionBytes, registry.DefaultMaxRegionBytes)
	settings.Default(&cfg.MaxRegionInstances, registry.DefaultMaxRegionInstances)
	log := cfg.Logger
	if log == nil {
		log = zap.NewNop()
	}
	configured := map[string]bool{}
	mirror := regions.MirrorOf(store)
	for _, r := range mirror.Names() {
		configured[r] = true
	}
	f := &Feeds{mirror: mirror, now: store.Config().Clock.Now, log: log, stop: make(chan struct{}),
		maxInstances: cfg.MaxRegionInstances}
	seen := map[string]bool{}
	for _, r := range cfg.Remotes {
		name := strings.ToLower(strings.TrimSpace(r.Name))
		switch {
		case name == "":
			return nil, errors.New("regions: a remote region without a name")
		case strings.EqualFold(name, store.Config().Region):
			return nil, fmt.Errorf("regions: %q is this registry's own region, not a remote one", r.Name)
		case !configured[name]:
			return nil, fmt.Errorf("regions: %q is not one of the registry's remote regions (%s); add it to registry.Config.RemoteRegions",
				r.Name, strings.Join(mirror.Names(), ", "))
		case seen[name]:
			return nil, fmt.Errorf("regions: remote region %q is listed twice; give it one Remote with all its URLs", r.Name)
		case len(r.URLs) == 0:
			return nil, fmt.Errorf("regions: remote region %q has no service URL", r.Name)
		}
		seen[name] = true
		for _, u := range r.URLs {
			if err := CheckURL(u); err != nil {
				return nil, fmt.Errorf("regions: remote region %q: %w", r.Name, err)
			}
		}
		client, err := discovery.New(discovery.Config{
			ServiceURLs:                r.URLs,
			Region:                     name,
			RegistryFetchInterval:      cfg.FetchInterval,
			WatchWait:                  min(discovery.DefaultWatchWait, store.Config().RemoteRegionRetention/4),
			MaxResponseBodySize:        cfg.MaxRegionBytes,
			MaxResponseBodySizeSetting: "MaxRegionBytes",
			MaxInstances:               cfg.MaxRegionInstances,
			TLS:                        cfg.TLS,
			Logger:                     log.With(zap.String("region", name)),
		})
		if err != nil {
			return nil, fmt.Errorf("regions: remote region %q: %w", r.Name, err)
		}
		f.feeds = append(f.feeds, &feed{name: name, client: client})
	}
	return f, nil
}

// Regions returns the names of the regions the Feeds read, lower case,
// in the order of Config.Remotes.
func (f *Feeds) Regions() []string {
	out := make([]string, len(f.feeds))
	for n, fd := range f.feeds {
		out[n] = fd.name
	}
	return out
}

// Start starts each region's client and the goroutine that hands what it
// reads to the Mirror. It does not block on the network. Calling it again,
// or after Stop, does nothing.
func (f *Feeds) Start() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.started || f.stopped {
		return
	}
	f.started = true
	for _, fd := range f.feeds {
		// The channel taken before the client starts: no change goes
		// unnoticed.
		changed := fd.client.Changed()
		fd.client.Start()
		f.wg.Add(1)
		go f.run(fd, changed)
	}
}

// Stop stops the feeds' goroutines and the clients, and waits for them
// within ctx; it returns ctx's error if they outlived it. The Store keeps
// what it was given. Calling it again does nothing.
func (f *Feeds) Stop(ctx context.Context) error {
	f.mu.Lock()
	if f.stopped {
		f.mu.Unlock()
		return nil
	}
	f.stopped = true
	close(f.stop)
	f.mu.Unlock()
	done := make(chan struct{})
	go func() { f.wg.Wait(); close(done) }()
	var errs []error
	select {
	case <-done:
	case <-ctx.Done():
		errs = append(errs, ctx.Err())
	}
	for _, fd := range f.feeds {
		if err := fd.client.Stop(ctx); err != nil {
			errs = append(errs, fmt.Errorf("remote region %s: %w", fd.name, err))
		}
	}
	return errors.Join(errs...)
}

// run hands fd's reads to the Mirror until Stop: on each change the client
// announces, and every checkInterval.
func (f *Feeds) run(fd *feed, changed <-chan struct{}) {
	defer f.wg.Done()
	tick := time.NewTicker(checkInterval)
	defer tick.Stop()
	for {
		f.check(fd)
		select {
		case <-f.stop:
			return
		case <-changed:
			changed = fd.client.Changed() // before the check reads
		case <-tick.C:
		}
	}
}

// check compares the client's last fetch with what the Mirror was last
// told: a newer success hands the Mirror the client's registry, a new
// failure is recorded as the region's. The times given are the Store's
// clock's, so that its retention is measured on one clock.
func (f *Feeds) check(fd *feed) {
	at, err := fd.client.LastFetch()
	if at.After(fd.lastAt) {
		// The snapshot is at least as new as the fetch LastFetch reported.
		if uerr := f.mirror.Update(fd.name, fd.client.Applications(), f.now()); uerr != nil {
			f.log.Error("remote region not taken", zap.String("region", fd.name), zap.Error(uerr))
			return
		}
		fd.lastAt, fd.lastErr = at, nil
		switch {
		case !fd.everRead:
			fd.everRead = true
			f.log.Info("remote region ready", zap.String("region", fd.name))
		case fd.failing:
			f.log.Info("remote region answers again", zap.String("region", fd.name))
		}
		fd.failing = false
	}
	if err != nil && !sameError(err, fd.lastErr) {
		why := f.explain(err)
		if why != err {
			f.log.Warn("remote region refused over its bound; its last registry is kept", zap.String("region", fd.name), zap.Error(why))
		}
		f.mirror.Failed(fd.name, f.now(), why)
		fd.lastErr, fd.failing = err, true
	}
}

// sameError reports whether a and b are the same failure, as LastFetch
// reports a failure until the next attempt: the same error value. Errors
// that do not compare are told apart by their text.
func sameError(a, b error) (same bool) {
	if a == nil || b == nil {
		return a == b
	}
	defer func() {
		if recover() != nil {
			same = a.Error() == b.Error()
		}
	}()
	return a == b
}
