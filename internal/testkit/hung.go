package testkit

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Hung is a backend on 127.0.0.1 that hangs: it accepts connections and
// reads each request, and answers none, until Recover is called. From then
// on it answers every request it reads with 200 and "<name> <path>". It
// records when each request arrived, and which (by an n=<n> query
// parameter, see RunAgainstHung). Close (also run at the test's
// cleanup) closes the listener and every connection it holds.
type Hung struct {
	name      string
	ln        net.Listener
	recovered atomic.Bool
	wg        sync.WaitGroup

	mu       sync.Mutex
	arrivals []time.Time
	numbers  map[int]bool // the n=<n> query values of the requests read
	conns    map[net.Conn]bool
	closed   bool
}

// NewHung starts a hung backend named name.
func NewHung(t testing.TB, name string) *Hung {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	h := &Hung{name: name, ln: ln, numbers: map[int]bool{}, conns: map[net.Conn]bool{}}
	h.wg.Add(1)
	go h.accept()
	t.Cleanup(h.Close)
	return h
}

// Addr returns the backend's host:port.
func (h *Hung) Addr() string { return h.ln.Addr().String() }

// Port returns the backend's port.
func (h *Hung) Port() int {
	_, port, _ := net.SplitHostPort(h.Addr())
	n, _ := strconv.Atoi(port)
	return n
}

// Arrivals returns when each request arrived, in order.
func (h *Hung) Arrivals() []time.Time {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]time.Time(nil), h.arrivals...)
}

// reached reports whether request number n (query n=<n>) arrived.
func (h *Hung) reached(n int) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.numbers[n]
}

// Recover makes the backend answer the requests it reads from now on
// (those it holds stay unanswered).
func (h *Hung) Recover() { h.recovered.Store(true) }

// Close stops the backend and waits for its goroutines.
func (h *Hung) Close() {
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		return
	}
	h.closed = true
	h.ln.Close()
	for c := range h.conns {
		c.Close()
	}
	h.mu.Unlock()
	h.wg.Wait()
}

func (h *Hung) accept() {
	defer h.wg.Done()
	for {
		c, err := h.ln.Accept()
		if err != nil {
			return
		}
		h.mu.Lock()
		if h.closed {
			h.mu.Unlock()
			c.Close()
			return
		}
		h.conns[c] = true
		h.wg.Add(1)
		h.mu.Unlock()
		go h.serve(c)
	}
}

func (h *Hung) serve(c net.Conn) {
	defer h.wg.Done()
	defer func() {
		h.mu.Lock()
		delete(h.conns, c)
		h.mu.Unlock()
		c.Close()
	}()
	br := bufio.NewReader(c)
	for {
		req, err := http.ReadRequest(br)
		if err != nil {
			return
		}
		h.mu.Lock()
		h.arrivals = append(h.arrivals, time.Now())
		if n, err := strconv.Atoi(req.URL.Query().Get("n")); err == nil {
			h.numbers[n] = true
		}
		h.mu.Unlock()
		if !h.recovered.Load() {
			// Hold the connection until the client or Close drops it.
			io.Copy(io.Discard, br)
			return
		}
		body := h.name + " " + req.URL.Path
		if _, err := fmt.Fprintf(c, "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: %d\r\n\r\n%s", len(body), body); err != nil {
			return
		}
	}
}

// Outcome is one request of a RunAgainstHung run: its number, when it
// was sent and answered, the body it got or the error.
type Outcome struct {
	N          int
	Start, End time.Time
	Body       string
	Err        error
}

// HungRun is what RunAgainstHung saw.
type HungRun struct {
	Outcomes []Outcome
	// Reached holds the numbers of the requests the hung backend received.
	Reached map[int]bool
	// FirstBack is when the first request that reached the hung backend
	// came back to its client (failed, or answered by a retry). Whatever
	// took it out of rotation happened before.
	FirstBack time.Time
}

// Failed returns the number of requests that failed.
func (r HungRun) Failed() int {
	n := 0
	for _, o := range r.Outcomes {
		if o.Err != nil {
			n++
		}
	}
	return n
}

// After returns the number of requests sent after FirstBack.
func (r HungRun) After() int {
	n := 0
	for _, o := range r.Outcomes {
		if !r.FirstBack.IsZero() && o.Start.After(r.FirstBack) {
			n++
		}
	}
	return n
}

// Late returns the requests that reached the hung backend though they
// were sent after FirstBack: none, if the first timeout took the backend
// out of rotation.
func (r HungRun) Late() []Outcome {
	var late []Outcome
	for _, o := range r.Outcomes {
		if r.Reached[o.N] && o.Start.After(r.FirstBack) {
			late = append(late, o)
		}
	}
	return late
}

// RunAgainstHung sends requests from workers, each one after another a
// few milliseconds apart, until want requests were sent after the first
// request that reached hung came back, or max has passed. send(n) sends
// request number n, which must carry n=<n> in its query so that hung can
// tell which requests it received.
func RunAgainstHung(hung *Hung, workers, want int, max time.Duration, send func(n int) (string, error)) HungRun {
	deadline := time.Now().Add(max)
	var next atomic.Int64
	var firstBack atomic.Int64 // unix nanos
	var after atomic.Int64
	var mu sync.Mutex
	var out []Outcome
	InParallel(workers, func(int) {
		for after.Load() < int64(want) && time.Now().Before(deadline) {
			o := Outcome{N: int(next.Add(1)), Start: time.Now()}
			if fb := firstBack.Load(); fb != 0 && o.Start.UnixNano() > fb {
				after.Add(1)
			}
			o.Body, o.Err = send(o.N)
			o.End = time.Now()
			if hung.reached(o.N) {
				for {
					fb := firstBack.Load()
					if (fb != 0 && fb <= o.End.UnixNano()) || firstBack.CompareAndSwap(fb, o.End.UnixNano()) {
						break
					}
				}
			}
			mu.Lock()
			out = append(out, o)
			mu.Unlock()
			time.Sleep(5 * time.Millisecond)
		}
	})
	run := HungRun{Outcomes: out, Reached: map[int]bool{}}
	if fb := firstBack.Load(); fb != 0 {
		run.FirstBack = time.Unix(0, fb)
	}
	for _, o := range out {
		if hung.reached(o.N) {
			run.Reached[o.N] = true
		}
	}
	return run
}

// Check checks a run against instances of which one hung: no request
// reached the hung instance after the first one that did came back (its
// first timeout took it out of rotation); at most the requests that did
// reach it failed, and none when retried is set; at least 20 requests were
// sent after the first timeout; the others got one of the bodies.
func (run HungRun) Check(t testing.TB, retried bool, bodies ...string) {
	t.Helper()
	if len(run.Reached) == 0 {
		t.Fatal("no request reached the hung instance")
	}
	for _, o := range run.Late() {
		t.Errorf("request %d reached the hung instance, sent %v after the first timeout came back",
			o.N, o.Start.Sub(run.FirstBack))
	}
	failed := run.Failed()
	t.Logf("%d requests: %d reached the hung instance (all sent before the first timeout), %d failed, %d sent after the first timeout",
		len(run.Outcomes), len(run.Reached), failed, run.After())
	if failed > len(run.Reached) {
		t.Errorf("%d requests failed, more than the %d in flight to the hung instance", failed, len(run.Reached))
	}
	if retried && failed > 0 {
		t.Errorf("%d requests failed despite retries", failed)
	}
	if !retried && failed == 0 {
		t.Error("no request failed without retries")
	}
	if run.After() < 20 {
		t.Errorf("only %d requests after the first timeout", run.After())
	}
	for _, o := range run.Outcomes {
		if o.Err == nil && !slices.Contains(bodies, o.Body) {
			t.Errorf("body %q", o.Body)
		}
	}
}
