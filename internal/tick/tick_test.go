package tick

import (
	"sync"
	"testing"
	"time"
)

// notifier is a notify.Notifier whose changes the test makes, counting
// the channels taken.
type notifier struct {
	mu    sync.Mutex
	ch    chan struct{}
	taken int
}

func (n *notifier) Changed() <-chan struct{} {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.taken++
	return n.ch
}

func (n *notifier) change() {
	n.mu.Lock()
	defer n.mu.Unlock()
	close(n.ch)
	n.ch = make(chan struct{})
}

func (n *notifier) takenSoFar() int {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.taken
}

// OnChange calls f once per change, having taken the next channel before
// f runs (a loop that kept the closed one would call f without end), and
// starts from the channel its caller took.
func TestOnChangeTakesTheNextChannelBeforeF(t *testing.T) {
	n := &notifier{ch: make(chan struct{})}
	changed := n.Changed()
	n.change() // before the loop runs: not missed
	stop, done := make(chan struct{}), make(chan struct{})
	calls := make(chan int)
	go func() {
		defer close(done)
		OnChange(time.Hour, stop, n, changed, func() {
			select {
			case calls <- n.takenSoFar():
			case <-stop:
			}
		})
	}()
	defer func() { close(stop); <-done }()
	for want := 2; want <= 4; want++ {
		if got := <-calls; got != want {
			t.Fatalf("call %d: %d channels taken before f, want %d", want-1, got, want)
		}
		n.change()
	}
}

// A nil Notifier and a nil channel: only the ticker calls f.
func TestOnChangeWithoutNotifier(t *testing.T) {
	stop, done := make(chan struct{}), make(chan struct{})
	calls := make(chan struct{})
	go func() {
		defer close(done)
		OnChange(time.Millisecond, stop, nil, nil, func() {
			select {
			case calls <- struct{}{}:
			case <-stop:
			}
		})
	}()
	<-calls
	<-calls
	close(stop)
	<-done
}
