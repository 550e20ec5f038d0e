package discovery

import (
	"net/http"
	"strconv"
	"time"

	"go.uber.org/zap"

	"github.com/eurekagate/eurekagate/eureka"
	"github.com/eurekagate/eurekagate/internal/eurekahttp"
)

// fetchLoop keeps the local registry up to date until Stop: by watching
// when the server offers it, by a refresh every RegistryFetchInterval
// otherwise. A failed watch is retried after a short, growing delay; a
// failed refresh after the interval, or, if it timed out, after a delay
// that doubles up to ExpBackOffBound intervals (Java's
// TimedSupervisorTask).
func (c *Client) fetchLoop() {
	defer c.wg.Done()
	var delay time.Duration
	for {
		timer, stopTimer := c.cfg.clock.NewTimer(delay)
		select {
		case <-c.stop:
			stopTimer()
			return
		case <-timer:
		}
		c.fetchMu.Lock()
		watching := c.watchable()
		var err error
		if watching {
			err = c.watchOnce()
		} else {
			err = c.refresh()
		}
		if err != nil {
			c.fetched(err)
		}
		watchNext := c.watchable()
		c.fetchMu.Unlock()
		switch {
		case c.ctx.Err() != nil:
			return
		case err != nil && watching:
			c.cfg.Logger.Warn("registry watch failed; keeping the last registry", zap.Error(err))
			delay = c.retryDelay(delay)
		case err != nil:
			c.cfg.Logger.Warn("registry fetch failed; keeping the last registry", zap.Error(err))
			delay = c.backoff(delay, c.cfg.RegistryFetchInterval, err)
		case watchNext:
			delay = 0
		default:
			delay = c.cfg.RegistryFetchInterval
		}
	}
}

// Refresh brings the local registry up to date once, as the fetch loop does
// every RegistryFetchInterval: a delta when possible, a full fetch when the
// cache is empty, its version is -1, the delta is refused or its hash does
// not match. A failure keeps the last good registry. It is safe to call
// while the Client runs: it ends a watch the fetch loop holds, waits for a
// fetch in progress, and the loop goes on after it.
func (c *Client) Refresh() error {
	done := c.watch.holdOff()
	defer done()
	c.fetchMu.Lock()
	defer c.fetchMu.Unlock()
	err := c.refresh()
	if err != nil {
		c.fetched(err)
	}
	return err
}

// refresh is Refresh. The caller holds c.fetchMu.
func (c *Client) refresh() error {
	last := c.cache.last
	if c.cfg.DisableDelta || c.cache.empty() || last.version == -1 {
		return c.fullFetch(nil)
	}
	if c.watch.interest() != nil && c.watch.offered {
		// Our servers take an interest (and watch): a filtered full fetch.
		// A server without the watch (Java) sends the whole registry
		// whatever the interest, so its deltas apply as for any client.
		return c.fullFetch(nil)
	}
	resp, err := c.servers.Do(c.ctx, eurekahttp.Request{Path: withQuery("apps/delta", c.regions), FailOver: eurekahttp.FailOverDelta})
	if err != nil {
		return err
	}
	c.watch.noteAnswer(resp)
	if resp.Status != http.StatusOK {
		return c.fullFetch(nil)
	}
	// Java keeps the delta's version after reconciling.
	return c.applyChanges(resp, true)
}

// applyChanges applies the delta that resp carries (a watch's answer is
// one too) to the cache and publishes the result, with what resp says of
// the watch. A delta that does not decode is read again whole, and so is
// one after which the cache's hash is not the server's; that full fetch
// takes the delta's version when keepVersion.
func (c *Client) applyChanges(resp eurekahttp.Response, keepVersion bool) error {
	delta, err := eureka.DecodeApplicationsJSON(resp.Body)
	if err != nil {
		return c.fullFetch(nil)
	}
	if err := c.checkDelta(delta); err != nil {
		return err
	}
	changed := deltaChanges(delta)
	snap, match := c.cache.applyDelta(delta)
	if !match {
		if keepVersion {
			return c.fullFetch(&delta.VersionsDelta)
		}
		return c.fullFetch(nil)
	}
	c.watch.noteAnswer(resp)
	c.publish(snap, changed)
	return nil
}

func deltaChanges(d *eureka.Applications) bool {
	for _, a := range d.Applications {
		if len(a.Instances) > 0 {
			return true
		}
	}
	return false
}

// fullFetch replaces the local registry with the server's. version, if not
// nil, replaces the fetched document's versions__delta. The caller holds
// c.fetchMu.
func (c *Client) fullFetch(version *int64) error {
	// Any status but 2xx (a Netflix server refuses full fetches with 403
	// in its first minutes) tries the next server.
	path := withQuery("apps/", appsQuery(c.watch.interest()), c.regions)
	resp, err := c.servers.Do(c.ctx, eurekahttp.Request{Path: path, FailOver: eurekahttp.FailOverUnlessOK})
	if err != nil {
		return err
	}
	if resp.Status != http.StatusOK {
		return &statusError{"full fetch", resp.Status}
	}
	c.watch.noteAnswer(resp)
	doc, err := c.decodeFull(resp.Body)
	if err != nil {
		return err
	}
	if version != nil {
		doc.VersionsDelta = *version
	}
	c.publish(c.cache.replace(doc), true)
	return nil
}

type statusError struct {
	op     string
	status int
}

func (e *statusError) Error() string {
	return "discovery: " + e.op + ": status " + strconv.Itoa(e.status)
}
