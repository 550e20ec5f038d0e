package balancer

import (
	"bufio"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/eurekagate/eurekagate/eureka"
	"github.com/eurekagate/eurekagate/internal/testkit"
)

func loopbackInstance(id string, port int) *eureka.InstanceInfo {
	return &eureka.InstanceInfo{InstanceID: id, HostName: "127.0.0.1", App: "INVENTORY", Status: eureka.StatusUp,
		Port: eureka.Port{Number: port, Enabled: true}}
}

func namedServer(t *testing.T, name string) *httptest.Server {
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, name+" "+r.URL.Path)
	}))
	t.Cleanup(s.Close)
	return s
}

func serverPort(s *httptest.Server) int {
	port, _ := strconv.Atoi(s.URL[strings.LastIndex(s.URL, ":")+1:])
	return port
}

// Three instances, the middle one hung (it accepts and never answers).
// After the first request to it times out, no request reaches it until
// its cool-down is over: the callers see at most the requests that were in
// flight to it fail, and none with retries (GETs are idempotent). After
// the cool-down it gets requests again, now that it answers.
func TestHTTPClientStopsSendingToHungInstance(t *testing.T) {
	const timeout = 300 * time.Millisecond
	for _, tc := range []struct {
		name    string
		retries int
	}{{"no retries", -1}, {"default retries", 0}} {
		t.Run(tc.name, func(t *testing.T) {
			a, c := namedServer(t, "a"), namedServer(t, "c")
			hung := testkit.NewHung(t, "b")
			clock := &fakeNow{t: time.Unix(1000, 0)}
			src := staticInstancer{"INVENTORY": {
				loopbackInstance("a", serverPort(a)), loopbackInstance("b", hung.Port()), loopbackInstance("c", serverPort(c)),
			}}
			client := &HTTPClient{Balancer: New(src, Config{Now: clock.Now}), Retries: tc.retries, ResponseHeaderTimeout: timeout}
			get := func(n int) (string, error) {
				resp, err := client.Do(mustRequest("http://inventory/items/7?n=" + strconv.Itoa(n)))
				if err != nil {
					return "", err
				}
				defer resp.Body.Close()
				body, err := io.ReadAll(resp.Body)
				return string(body), err
			}
			run := testkit.RunAgainstHung(hung, 6, 100, 5*time.Second, get)
			run.Check(t, tc.retries >= 0, "a /items/7", "c /items/7")
			for _, o := range run.Outcomes {
				var ne interface{ Timeout() bool }
				if o.Err != nil && (!errors.As(o.Err, &ne) || !ne.Timeout() || !errors.Is(o.Err, os.ErrDeadlineExceeded)) {
					t.Errorf("not a timeout: %v", o.Err)
				}
			}

			// Recovered and past its cool-down, the instance takes its
			// turns again.
			hung.Recover()
			clock.Advance(30*time.Second + time.Nanosecond)
			seen := map[string]int{}
			for n := range 6 {
				body, err := get(-n)
				if err != nil {
					t.Fatal(err)
				}
				seen[body]++
			}
			if seen["b /items/7"] != 2 {
				t.Errorf("after recovery: %v", seen)
			}
		})
	}
}

// Retries after a timeout are for idempotent requests only: a POST that
// timed out may have been acted on, so it is not sent again; the instance
// is ejected all the same. A refused connection is retried whatever the
// method.
func TestHTTPClientRetriesOnlyIdempotentAfterTimeout(t *testing.T) {
	a := namedServer(t, "a")
	hung := testkit.NewHung(t, "b")
	dead := httptest.NewServer(http.NotFoundHandler())
	deadPort := serverPort(dead)
	dead.Close()
	src := staticInstancer{"INVENTORY": {loopbackInstance("b", hung.Port()), loopbackInstance("a", serverPort(a))}}
	client := &HTTPClient{Balancer: New(src, Config{}), ResponseHeaderTimeout: 100 * time.Millisecond}
	post := func() (*http.Response, error) {
		req, _ := http.NewRequest("POST", "http://inventory/orders", strings.NewReader("{}"))
		return client.Do(req)
	}
	if _, err := post(); err == nil || !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("POST to the hung instance: %v", err)
	}
	if resp, err := post(); err != nil {
		t.Fatalf("POST after the ejection: %v", err)
	} else {
		resp.Body.Close()
	}
	if n := len(hung.Arrivals()); n != 1 {
		t.Errorf("the hung instance got %d requests", n)
	}

	refused := &HTTPClient{Balancer: New(staticInstancer{"INVENTORY": {
		loopbackInstance("dead", deadPort), loopbackInstance("a", serverPort(a)),
	}}, Config{})}
	req, _ := http.NewRequest("POST", "http://inventory/orders", strings.NewReader("{}"))
	resp, err := refused.Do(req)
	if err != nil {
		t.Fatalf("POST not retried after a refused connection: %v", err)
	}
	resp.Body.Close()
}

// A connection closed before the response counts as a failure: with
// MaxFails 1 the instance is ejected, and a GET is retried on another
// instance, a POST is not.
func TestHTTPClientCountsBrokenConnections(t *testing.T) {
	broken := testkit.RawServer(t, func(c net.Conn) {
		http.ReadRequest(bufio.NewReader(c)) // then close without answering
		c.Close()
	})
	a := namedServer(t, "a")
	brokenPort := broken.Port
	src := staticInstancer{"INVENTORY": {loopbackInstance("broken", brokenPort), loopbackInstance("a", serverPort(a))}}
	b := New(src, Config{MaxFails: 1})
	client := &HTTPClient{Balancer: b}
	req, _ := http.NewRequest("POST", "http://inventory/orders", strings.NewReader("{}"))
	if _, err := client.Do(req); err == nil {
		t.Fatal("a POST to the broken instance was retried")
	}
	if got := picked(b, 4); got["broken"] != 0 {
		t.Fatalf("the broken instance was not ejected: %v", got)
	}

	b2 := New(src, Config{MaxFails: 1})
	client = &HTTPClient{Balancer: b2}
	resp, err := client.Do(mustRequest("http://inventory/items/7"))
	if err != nil {
		t.Fatalf("a GET was not retried after a broken connection: %v", err)
	}
	resp.Body.Close()
	if got := picked(b2, 4); got["broken"] != 0 {
		t.Fatalf("the broken instance was not ejected: %v", got)
	}
}
