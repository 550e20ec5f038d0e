// Package testkit holds what the test suites share: the goleak settings,
// a poll for conditions reached over the network, a graceful stop at the
// end of a test (StopOnCleanup), free loopback ports, requests sent and
// read whole (Do, HTTPGet, HTTPPost), a fake clock, a hung backend, a
// slowloris writer (Trickle), a small load generator for failover tests,
// goroutines racing each other (Loop, InParallel), a steady load until the
// test ends (TickUntilEnd), a process's output
// (Output), a process of its own for a test (StartProcess, over
// internal/proc), registrations to test and benchmark with (Inst and
// SampleInstance, from internal/fixture), a
// deep-equality check (Want), test certificates (CA), password hashes
// (PasswordHash), how far the heap grows while a function runs
// (HeapGrowth) and hostile traffic rules documents (AliasBomb).
package testkit

import (
	"context"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/eurekagate/eurekagate/internal/freeport"
)

// Ignored are goroutines that fasthttp and gnet own and that we cannot
// wait for: process-wide ones (the Date header ticker, the dialer's address cache
// cleaner) and per-server or per-client cleaners that notice a stop only at
// their next tick.
var Ignored = []goleak.Option{
	goleak.IgnoreAnyFunction("github.com/valyala/fasthttp.updateServerDate.func1"),
	goleak.IgnoreAnyFunction("github.com/valyala/fasthttp.(*workerPool).Start.func2"),
	goleak.IgnoreAnyFunction("github.com/valyala/fasthttp.(*TCPDialer).tcpAddrsClean"),
	goleak.IgnoreAnyFunction("github.com/valyala/fasthttp.(*HostClient).connsCleaner"),
	goleak.IgnoreAnyFunction("github.com/valyala/fasthttp.(*Client).mCleaner"),
	// gnet's process-wide goroutine pool (ants), which it makes at init
	// and which the gateway's loops use to enroll new connections: its
	// cleaners, and idle workers that expire after 10 s.
	goleak.IgnoreAnyFunction("github.com/panjf2000/ants/v2.(*poolCommon).purgeStaleWorkers"),
	goleak.IgnoreAnyFunction("github.com/panjf2000/ants/v2.(*poolCommon).ticktock"),
	goleak.IgnoreAnyFunction("github.com/panjf2000/ants/v2.(*goWorker).run.func1"),
}

// VerifyTestMain runs the tests and fails if any other goroutine outlives
// them.
func VerifyTestMain(m *testing.M, extra ...goleak.Option) {
	goleak.VerifyTestMain(m, append(append([]goleak.Option{}, Ignored...), extra...)...)
}

// Eventually polls cond until it holds, and fails the test if it does not
// within d. It waits for network round trips and background loops, never
// for leases to expire: those tests move a fake clock.
func Eventually(t testing.TB, d time.Duration, what string, cond func() bool) {
	t.Helper()
	EventuallyEvery(t, d, 5*time.Millisecond, what, cond)
}

// EventuallyEvery is Eventually polling every interval, for a condition
// that costs more to check (requests to several processes).
func EventuallyEvery(t testing.TB, d, interval time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("not within %v: %s", d, what)
		}
		time.Sleep(interval)
	}
}

// StopOnCleanup has stop called when the test ends, with a context that
// times out after d, for servers and clients that stop gracefully.
func StopOnCleanup(t testing.TB, d time.Duration, stop func(ctx context.Context)) {
	StopOnCleanupChecked(t, d, func(ctx context.Context) error {
		stop(ctx)
		return nil
	})
}

// StopOnCleanupChecked is StopOnCleanup for a stop that returns an error:
// the test fails with it.
func StopOnCleanupChecked(t testing.TB, d time.Duration, stop func(ctx context.Context) error) {
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), d)
		defer cancel()
		if err := stop(ctx); err != nil {
			t.Errorf("stop: %v", err)
		}
	})
}

// FreeAddr returns a loopback address with a port that was free a moment
// ago, for servers whose address must be known before they start.
func FreeAddr(t testing.TB) string {
	t.Helper()
	return "127.0.0.1:" + strconv.Itoa(FreePort(t))
}

// FreePort returns a loopback port that was free a moment ago: one for a
// server to bind when its port must be known before it starts, or one
// that refuses connections, for a registration that must not answer. It
// is below the kernel's ephemeral range, where no outgoing connection or
// ":0" listener takes it, and held until the test ends against the tests
// of packages run beside this one (freeport.Tests).
func FreePort(t testing.TB) int {
	t.Helper()
	return FreePortOn(t)
}

// FreePortOn returns a port free on 127.0.0.1 and every one of ips
// (loopback addresses, such as 127.0.0.2) a moment ago, held until the
// test ends (freeport.Tests): for servers on several addresses that
// share a port, as the nodes behind a DNS name's A records do.
func FreePortOn(t testing.TB, ips ...string) int {
	t.Helper()
	for range 50 {
		port, release, err := freeport.Tests.Hold()
		if err != nil {
			t.Fatal(err)
		}
		ok := true
		for _, ip := range ips {
			ln, err := net.Listen("tcp", net.JoinHostPort(ip, strconv.Itoa(port)))
			if err != nil {
				ok = false
				break
			}
			ln.Close()
		}
		if ok {
			t.Cleanup(release)
			return port
		}
		release()
	}
	t.Fatalf("no port free on every one of %v", ips)
	return 0
}

// HTTPGet fetches url with http.DefaultClient and returns the status code
// and the body; it fails the test if the request fails.
func HTTPGet(t testing.TB, url string) (int, string) {
	t.Helper()
	return httpSend(t, http.MethodGet, url, "", "")
}

// HTTPPost posts body as contentType to url with http.DefaultClient and
// returns the status code and the answer's body; it fails the test if the
// request fails.
func HTTPPost(t testing.TB, url, contentType, body string) (int, string) {
	t.Helper()
	return httpSend(t, http.MethodPost, url, contentType, body)
}

// httpSend is HTTPGet and HTTPPost: it sends body, with the Content-Type
// contentType unless that is empty.
func httpSend(t testing.TB, method, url, contentType, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	resp, answer := Do(t, http.DefaultClient, req)
	return resp.StatusCode, answer
}

// JSONRequest is a request of method for url with body, typed as JSON
// when there is one; it fails the test if the request cannot be made.
func JSONRequest(t testing.TB, method, url, body string) *http.Request {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	return req
}

// StatusAs sends body (as JSON, when there is one) to url with method, as
// user with password when user is not empty, on a connection of its own,
// and returns the answer's status code; it fails the test if the request
// fails.
func StatusAs(t testing.TB, method, url, user, password, body string) int {
	t.Helper()
	req := JSONRequest(t, method, url, body)
	if user != "" {
		req.SetBasicAuth(user, password)
	}
	c := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	resp, _ := Do(t, c, req)
	return resp.StatusCode
}

// SetHeaders sets each name and value pair of headers (name, value,
// name, value, ...) on req; a name without a value is left out.
func SetHeaders(req *http.Request, headers ...string) {
	for n := 0; n+1 < len(headers); n += 2 {
		req.Header.Set(headers[n], headers[n+1])
	}
}

// Do sends req with c and returns the response, its body already read
// whole and closed, and the body; it fails the test if sending or reading
// fails.
func Do(t testing.TB, c *http.Client, req *http.Request) (*http.Response, string) {
	t.Helper()
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, string(b)
}
