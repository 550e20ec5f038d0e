package caddymodule

import (
	"context"
	"io"
	"net"
	"net/http"
	"runtime"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/eurekagate/eurekagate/internal/testkit"
)

// The sweeper closes the connections idle for the idle timeout; close
// stops it and waits for it, and closes what is left: no goroutine of
// the pool outlives it.
func TestLeanPoolSweepsAndCloses(t *testing.T) {
	before := goleak.IgnoreCurrent()
	t.Cleanup(func() { goleak.VerifyNone(t, before) }) // after the server's cleanup
	closed := make(chan int, 4)
	n := 0
	inst := testkit.RawServer(t, func(c net.Conn) {
		n++
		go func(id int) { // ends when the pool closes its side
			io.Copy(io.Discard, c)
			c.Close()
			closed <- id
		}(n)
	})
	clock := testkit.NewFakeClock()
	p := newLeanPool(time.Second, time.Second, time.Minute, time.Millisecond, 4, clock.Now)
	get := func() *leanConn {
		c, err := p.get(context.Background(), inst.String())
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	a, b := get(), get()
	p.put(a)
	clock.Advance(30 * time.Second)
	p.put(b)
	clock.Advance(30 * time.Second) // a idle a minute, b half
	next := func(what string) int {
		select {
		case id := <-closed:
			return id
		case <-time.After(10 * time.Second): // a bound, not a wait
			t.Fatalf("no connection closed by %s", what)
			return 0
		}
	}
	if id := next("the sweeper"); id != 1 {
		t.Errorf("the sweeper closed connection %d, want 1", id)
	}
	testkit.Want(t, "idle connections after the sweep", p.idleCount(), 1)
	p.close()
	if id := next("close"); id != 2 {
		t.Errorf("close closed connection %d, want 2", id)
	}
	testkit.Want(t, "idle connections after close", p.idleCount(), 0)
}

// A connection the instance closed while it was idle is not used again:
// the next request, a POST say, goes on a new one.
func TestLeanPoolDropsConnectionsClosedWhileIdle(t *testing.T) {
	accepted := make(chan net.Conn, 2)
	inst := testkit.RawServer(t, func(c net.Conn) { accepted <- c })
	clock := testkit.NewFakeClock()
	p := newLeanPool(time.Second, time.Second, time.Minute, time.Minute, 4, clock.Now)
	defer p.close()
	first, err := p.get(context.Background(), inst.String())
	if err != nil {
		t.Fatal(err)
	}
	p.put(first)
	(<-accepted).Close() // the instance's idle timeout
	testkit.Eventually(t, 5*time.Second, "the instance's close to arrive", func() bool { return !first.stillOpen() })
	next, err := p.get(context.Background(), inst.String())
	if err != nil {
		t.Fatal(err)
	}
	defer next.close()
	if next == first {
		t.Fatal("the connection the instance closed was used again")
	}
	(<-accepted).Close()
}

// A connection idle longer than the read timeout, whose last read's
// deadline has passed, is still looked at and used again: the look does
// not wait on the deadline.
func TestLeanPoolReusesAConnectionPastItsReadDeadline(t *testing.T) {
	accepted := make(chan net.Conn, 2)
	inst := testkit.RawServer(t, func(c net.Conn) { accepted <- c })
	p := newLeanPool(time.Second, time.Second, time.Minute, time.Minute, 4, testkit.NewFakeClock().Now)
	defer p.close()
	first, err := p.get(context.Background(), inst.String())
	if err != nil {
		t.Fatal(err)
	}
	defer (<-accepted).Close()
	// As the last answer's read left it once the read timeout has passed.
	first.conn.SetReadDeadline(time.Now().Add(-time.Second))
	p.put(first)
	next, err := p.get(context.Background(), inst.String())
	if err != nil {
		t.Fatal(err)
	}
	defer next.close()
	if next != first {
		t.Error("an open connection idle past its read deadline was dialed anew")
	}
}

// A config unloaded closes its gateway's idle connections to instances
// and stops its pool's sweeper: none is left beside the new config's.
func TestLeanPoolEndsWithItsConfig(t *testing.T) {
	inst := newScripted(t, func(conn, req int, r *http.Request) (string, bool) {
		return "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok", false
	})
	inst.behind(t, "unload", "")
	if status, body, _ := send(t, "GET", "/unload/a"); status != 200 || body != "ok" {
		t.Fatalf("%d %q", status, body)
	}
	loadConfig(t, gatewayConfig("registry "+newRegistry("unload"), "")) // unloads the first
	testkit.Eventually(t, 5*time.Second, "the unloaded gateway's idle connection to close", func() bool { return inst.closed() == 1 })
	testkit.Eventually(t, 5*time.Second, "one sweeper, the new config's", func() bool { return sweepers() == 1 })
}

// sweepers is how many lean pools' sweepers run.
func sweepers() int {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			return strings.Count(string(buf[:n]), "caddymodule.newLeanPool.func1")
		}
		buf = make([]byte, 2*len(buf))
	}
}
