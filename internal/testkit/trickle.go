package testkit

import (
	"net"
	"testing"
	"time"
)

// Slowloris dials addr and trickles s to it (Trickle), until the test
// ends: then the trickle stops and the connection closes.
func Slowloris(t testing.TB, addr, s string, interval time.Duration) net.Conn {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	done := Trickle(conn, s, interval, stop)
	t.Cleanup(func() {
		close(stop)
		<-done
		conn.Close()
	})
	return conn
}

// Trickle writes s to conn a byte every interval, as a slowloris client
// does, until it is written, a write fails, or stop closes; the channel it
// returns closes when it has stopped.
func Trickle(conn net.Conn, s string, interval time.Duration, stop <-chan struct{}) <-chan struct{} {
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 0; i < len(s); i++ {
			select {
			case <-stop:
				return
			case <-time.After(interval):
			}
			if _, err := conn.Write([]byte{s[i]}); err != nil {
				return
			}
		}
	}()
	return done
}
