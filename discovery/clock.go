package discovery

import "time"

// clock is the time of the client's loops (heartbeats, polling, retries),
// its on-demand limit and its Cluster's quarantines and reshuffles. The
// default is the system's; tests set Config.clock to a fake one so that no
// test waits for an interval to pass.
type clock interface {
	Now() time.Time
	// NewTimer returns a channel that receives once d has passed, and a
	// function that stops the timer.
	NewTimer(d time.Duration) (<-chan time.Time, func() bool)
}

type systemClock struct{}

func (systemClock) Now() time.Time { return time.Now() }

func (systemClock) NewTimer(d time.Duration) (<-chan time.Time, func() bool) {
	t := time.NewTimer(d)
	return t.C, t.Stop
}
