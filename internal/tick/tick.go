// Package tick runs work on a ticker.
package tick

import "time"

// Every calls f every interval, and after each value wake receives (a
// nil wake never does), until stop is closed.
func Every(interval time.Duration, stop, wake <-chan struct{}, f func()) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
		case <-wake:
		}
		f()
	}
}
