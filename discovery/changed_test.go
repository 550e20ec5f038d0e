package discovery

import (
	"strconv"
	"testing"
	"time"

	"github.com/eurekagate/eurekagate/internal/testkit"
)

// A consumer of Changed that takes the channel, reads the registry, and
// waits on the channel learns of every change: after a burst of
// registrations it reads the last one without a further change to wake
// it, as a subscriber of the per-subscriber channels that Changed
// replaced did (a value pending in its channel).
func TestChangedConsumerSeesTheLastChange(t *testing.T) {
	s := startOurServer(t, "127.0.0.1:0")
	testkit.MustRegister(t, s.Store, testkit.Inst("ORDERS", "seed"), false)
	c := newFetchOnly(t, s.URL())
	c.Start()
	defer stopClient(t, c)
	<-c.Ready()
	const n = 50
	seen := make(chan int, 1)
	stop, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		for {
			changed := c.Changed() // before the read
			got := len(c.Instances("ORDERS"))
			select {
			case <-seen:
			default:
			}
			seen <- got
			if got == n+1 {
				return
			}
			select {
			case <-changed:
			case <-stop:
				return
			}
		}
	}()
	defer func() { close(stop); <-done }()
	for k := range n {
		testkit.MustRegister(t, s.Store, testkit.Inst("ORDERS", "o"+strconv.Itoa(k)), false)
	}
	last := 0
	testkit.Eventually(t, 10*time.Second, "the consumer reads every registration", func() bool {
		select {
		case last = <-seen:
		default:
		}
		return last == n+1
	})
}
