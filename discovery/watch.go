package discovery

import (
	"context"
	"math/rand/v2"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/eurekagate/eurekagate/internal/eurekahttp"
)

// The watch headers and parameters of our servers (registry/httpapi
// documents them; discovery does not import the server).
const (
	headerWatch   = "Eurekagate-Watch"
	headerVersion = "Eurekagate-Version"
)

// watchState is what the fetch loop knows of the server's watch: whether
// the last answer advertised it, and the version the local registry holds,
// both under the Client's fetchMu; and under its own mu, the interest,
// which readers add to, and the watch in flight, which they may end.
type watchState struct {
	offered bool
	token   string // "" until a full fetch or delta carried one

	mu       sync.Mutex
	apps     []string // sorted; nil: the whole registry
	changed  bool     // apps grew since the last full fetch
	inFlight context.CancelFunc
	holders  int // Refresh calls waiting: a watch ends at once
}

// interest returns the apps to fetch and watch, nil for the whole registry.
func (w *watchState) interest() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.apps
}

// learn adds app to the interest and interrupts a watch in flight so the
// fetch loop fetches it at once. It reports whether app was new.
func (w *watchState) learn(app string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if slices.Contains(w.apps, app) {
		return false
	}
	w.apps = append(slices.Clone(w.apps), app)
	slices.Sort(w.apps)
	w.changed = true
	if w.inFlight != nil {
		w.inFlight()
	}
	return true
}

// takeChanged reports, once, that the interest grew.
func (w *watchState) takeChanged() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	changed := w.changed
	w.changed = false
	return changed
}

// setInFlight records the cancel of the watch in flight (nil when it
// ended). While a Refresh waits, a watch that starts ends at once, and so
// does one that starts after the interest grew since the watch read it
// (learn found no watch in flight to interrupt): else the new app would
// wait for the whole WatchWait.
func (w *watchState) setInFlight(cancel context.CancelFunc) {
	w.mu.Lock()
	w.inFlight = cancel
	if cancel != nil && (w.holders > 0 || w.changed) {
		cancel()
	}
	w.mu.Unlock()
}

// holdOff ends the watch in flight, and any that starts before done is
// called, so that a Refresh does not wait for a held request.
func (w *watchState) holdOff() (done func()) {
	w.mu.Lock()
	w.holders++
	if w.inFlight != nil {
		w.inFlight()
	}
	w.mu.Unlock()
	return func() {
		w.mu.Lock()
		w.holders--
		w.mu.Unlock()
	}
}

// noteAnswer records what an answer says of the watch.
func (w *watchState) noteAnswer(resp eurekahttp.Response) {
	w.offered = resp.Header.Get(headerWatch) != ""
	if v := resp.Header.Get(headerVersion); v != "" {
		w.token = v
	} else {
		w.token = ""
	}
}

// The longest apps list our servers take (registry.MaxQueryListNames and
// MaxQueryListBytes): they answer a longer one 400.
const (
	maxInterestNames = 4096
	maxInterestBytes = 32 << 10
)

// appsQuery is the apps parameter for the interest, or "": for the whole
// registry, also when the interest is longer than our servers take in a
// list.
func appsQuery(apps []string) string {
	if apps == nil || len(apps) > maxInterestNames {
		return ""
	}
	list := strings.Join(apps, ",")
	if len(list) > maxInterestBytes {
		return ""
	}
	return "apps=" + url.QueryEscape(list)
}

// watchable reports whether the next refresh can be a watch.
func (c *Client) watchable() bool {
	return !c.cfg.DisableWatch && c.watch.offered && c.watch.token != "" && c.cache.last.version != -1
}

// watchOnce asks the server for the changes after the version the local
// registry holds and applies them: at once if there are some, or when one
// arrives, or an empty answer when WatchWait ends. A version the server
// cannot answer for (410: another node after a failover, a restart, a log
// that moved on) makes a full fetch. The caller holds c.fetchMu.
func (c *Client) watchOnce() error {
	apps := c.watch.interest()
	if c.watch.takeChanged() {
		return c.fullFetch(nil)
	}
	path := withQuery("apps/delta?watch="+url.QueryEscape(c.watch.token)+"&wait="+strconv.FormatFloat(c.cfg.WatchWait.Seconds(), 'f', -1, 64),
		appsQuery(apps), c.regions)
	ctx, cancel := context.WithCancel(c.ctx)
	c.watch.setInFlight(cancel)
	defer func() { c.watch.setInFlight(nil); cancel() }()
	resp, err := c.servers.Do(ctx, eurekahttp.Request{Path: path, Timeout: c.cfg.WatchWait + c.cfg.ReadTimeout,
		FailOver: failOverWatch})
	if err != nil {
		if c.ctx.Err() == nil && ctx.Err() != nil {
			return nil // interrupted to widen the interest, or by Refresh
		}
		return err
	}
	switch resp.Status {
	case http.StatusOK:
	case http.StatusGone:
		return c.fullFetch(nil)
	default:
		return &statusError{"watch", resp.Status}
	}
	return c.applyChanges(resp, false)
}

// failOverWatch is the delta's rule (a watch is a delta), and also
// accepts 410: the node does not know the version, and the client reads
// the whole registry there.
func failOverWatch(status int) bool {
	return status != http.StatusGone && eurekahttp.FailOverDelta(status)
}

// retryDelay is the wait after a failed watch: doubling from 100ms up to
// RegistryFetchInterval, with jitter, so a fleet that lost its server does
// not come back in step.
func (c *Client) retryDelay(prev time.Duration) time.Duration {
	d := min(max(2*prev, 100*time.Millisecond), c.cfg.RegistryFetchInterval)
	return d/2 + rand.N(d/2+1)
}
