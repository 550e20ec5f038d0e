package fastserve

import (
	"errors"
	"net"
	"syscall"
	"testing"
	"time"

	"go.uber.org/zap"
)

// flakyListener fails its first n Accepts with EMFILE.
type flakyListener struct {
	net.Listener
	n int
}

func (l *flakyListener) Accept() (net.Conn, error) {
	if l.n > 0 {
		l.n--
		return nil, &net.OpError{Op: "accept", Net: "tcp", Err: syscall.EMFILE}
	}
	return l.Listener.Accept()
}

func TestAcceptOutlivesEMFILE(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	k := &keepAccepting{Listener: &flakyListener{ln, 3}, name: "test-emfile", log: zap.NewNop(), closed: make(chan struct{})}
	defer k.Close()
	client, err := net.Dial("tcp", ln.Addr().String()) // waits in the backlog
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	c, err := k.Accept()
	if err != nil {
		t.Fatalf("Accept gave up: %v", err)
	}
	c.Close()
	var counted uint64
	for _, a := range AcceptErrors() {
		if a.Name == "test-emfile" {
			counted = a.Count
		}
	}
	if counted != 3 {
		t.Errorf("%d failures counted, want 3", counted)
	}
	if got := []time.Duration{Backoff(1), Backoff(2), Backoff(20)}; got[0] != 5*time.Millisecond || got[1] != 10*time.Millisecond || got[2] != 500*time.Millisecond {
		t.Errorf("backoff %v", got)
	}

	// Close wakes an Accept that waits between tries.
	k2 := &keepAccepting{Listener: &flakyListener{ln, 1 << 30}, name: "test-emfile", log: zap.NewNop(), closed: make(chan struct{})}
	done := make(chan error)
	go func() {
		_, err := k2.Accept()
		done <- err
	}()
	time.Sleep(50 * time.Millisecond)
	k2.Close()
	select {
	case err := <-done:
		if !errors.Is(err, net.ErrClosed) {
			t.Errorf("after Close: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Close did not end a waiting Accept")
	}
}
