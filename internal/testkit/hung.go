package testkit

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Hung is a backend on 127.0.0.1 that hangs: it accepts connections and
// reads each request, and answers none, until Recover is called. From then
// on it answers every request it reads with 200 and "<name> <path>". It
// records when each request arrived. Close (also run at the test's
// cleanup) closes the listener and every connection it holds.
type Hung struct {
	name      string
	ln        net.Listener
	recovered atomic.Bool
	wg        sync.WaitGroup

	mu       sync.Mutex
	arrivals []time.Time
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
	h := &Hung{name: name, ln: ln, conns: map[net.Conn]bool{}}
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

// Outcome is one request of a Load run: when it was sent and answered,
// the body it got or the error.
type Outcome struct {
	Start, End time.Time
	Body       string
	Err        error
}

// Load runs workers that each call send, one call after another, a pace
// apart, until stop returns true or max has passed, and returns every
// call's outcome.
func Load(workers int, pace, max time.Duration, send func() (string, error), stop func() bool) []Outcome {
	deadline := time.Now().Add(max)
	var mu sync.Mutex
	var out []Outcome
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for !stop() && time.Now().Before(deadline) {
				o := Outcome{Start: time.Now()}
				o.Body, o.Err = send()
				o.End = time.Now()
				mu.Lock()
				out = append(out, o)
				mu.Unlock()
				time.Sleep(pace)
			}
		}()
	}
	wg.Wait()
	return out
}
