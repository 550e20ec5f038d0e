package discovery

import "time"

// fetchOutcome is what LastFetch reports; a new one replaces it after
// each fetch, so readers take no lock.
type fetchOutcome struct {
	at  time.Time
	err error
}

// LastFetch reports when a fetch of the registry (a full fetch, a delta,
// or the answer to a watch) last succeeded, the zero time before the
// first, and the error of the last attempt if it failed after that (nil
// otherwise). Whoever serves what the client read can tell from it
// whether the servers still answer. The time is the client's clock's.
//
// Against a server that offers the watch, the server holds a watch for up
// to WatchWait when nothing changes, so at may be that old (plus a round
// trip) while all is well; against one that does not, up to
// RegistryFetchInterval. A watch the client ends itself (to fetch an app
// it learned, or for Refresh) is no attempt.
func (c *Client) LastFetch() (at time.Time, err error) {
	if o := c.last.Load(); o != nil {
		return o.at, o.err
	}
	return time.Time{}, nil
}

// fetched records the outcome of a fetch: success when err is nil, else
// a failure that keeps the time of the last success. The fetch loop and
// Refresh record failures, publish successes; a failure caused by Stop is
// not recorded. The caller holds c.fetchMu.
func (c *Client) fetched(err error) {
	if err != nil && c.ctx.Err() != nil {
		return
	}
	o := &fetchOutcome{err: err}
	if err == nil {
		o.at = c.cfg.clock.Now()
	} else if prev := c.last.Load(); prev != nil {
		o.at = prev.at
	}
	c.last.Store(o)
}
