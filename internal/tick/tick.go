// Package tick runs work on a ticker.
package tick

import (
	"time"

	"github.com/eurekagate/eurekagate/notify"
)

// Every calls f every interval, and after each value wake receives (a
// nil wake never does), until stop is closed.
func Every(interval time.Duration, stop, wake <-chan struct{}, f func()) {
	loop(interval, stop, wake, nil, f)
}

// OnChange calls f every interval, and after each change n announces (a
// nil n announces none), until stop is closed. changed is n's channel as
// the caller took it before it started OnChange's goroutine, so that a
// change meanwhile is not missed; the loop takes the next channel before
// it calls f, so that a change while f runs calls f again.
func OnChange(interval time.Duration, stop <-chan struct{}, n notify.Notifier, changed <-chan struct{}, f func()) {
	loop(interval, stop, changed, n, f)
}

// loop is Every and OnChange: n, when not nil, gives the next wake
// channel after each one closes.
func loop(interval time.Duration, stop, wake <-chan struct{}, n notify.Notifier, f func()) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
		case <-wake:
			if n != nil {
				wake = n.Changed()
			}
		}
		f()
	}
}
