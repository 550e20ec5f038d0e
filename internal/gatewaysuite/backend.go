// Package gatewaysuite is the test suite that both gateways pass, where
// their behaviour is meant to be the same: Caddy's eureka_gateway and the
// fasthttp gateway (package gateway). Each test starts a fresh gateway over
// a fresh registry through the host's Starter, registers instances (real
// HTTP servers on loopback) in the registry, and talks to the gateway over
// loopback HTTP.
package gatewaysuite

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/eurekagate/eurekagate/eureka"
	"github.com/eurekagate/eurekagate/registry"
)

// seen is what a backend saw of a request, as it answers it.
type seen struct {
	Name    string      `json:"name"`
	Method  string      `json:"method"`
	Path    string      `json:"path"`
	Query   string      `json:"query"`
	Host    string      `json:"host"`
	Header  http.Header `json:"header"`
	Body    string      `json:"body,omitempty"`
	Trailer http.Header `json:"trailer,omitempty"`
	// TLS is whether the request came over TLS.
	TLS bool `json:"tls"`
}

// backend is an instance: an HTTP server on loopback.
type backend struct {
	name string
	srv  *httptest.Server
	port int
}

// newBackend starts an instance that answers every request with what it
// saw, as JSON, unless handler is given.
func newBackend(t *testing.T, name string, handler http.Handler) *backend {
	t.Helper()
	if handler == nil {
		handler = echoHandler(name)
	}
	b := &backend{name: name, srv: httptest.NewServer(handler)}
	t.Cleanup(b.srv.Close)
	_, port, _ := net.SplitHostPort(b.srv.Listener.Addr().String())
	b.port, _ = strconv.Atoi(port)
	return b
}

func echoHandler(name string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<10)) // the trailer comes after it
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(seen{Name: name, Method: r.Method, Path: r.URL.Path, Query: r.URL.RawQuery, Host: r.Host, Header: r.Header,
			Body: string(body), Trailer: r.Trailer, TLS: r.TLS != nil})
	})
}

// instance is a registration of app at port on loopback, UP.
func instance(app, id string, port int) *eureka.InstanceInfo {
	return &eureka.InstanceInfo{
		InstanceID: id, HasInstanceID: true, HostName: "127.0.0.1", App: strings.ToUpper(app), IPAddr: "127.0.0.1",
		Status: eureka.StatusUp, Port: eureka.Port{Number: port, Enabled: true},
		DataCenterInfo: eureka.DataCenterInfo{Name: eureka.DataCenterMyOwn},
	}
}

func register(t *testing.T, store *registry.Store, i *eureka.InstanceInfo) {
	t.Helper()
	if err := store.Register(i, false); err != nil {
		t.Fatalf("register %s: %v", i.InstanceID, err)
	}
}

// client is the suite's HTTP client: bounded, and without keep-alive so
// that no connection outlives a test (the suites check for leaked
// goroutines).
func client() *http.Client {
	return &http.Client{
		Timeout:   20 * time.Second,
		Transport: &http.Transport{DisableKeepAlives: true, DisableCompression: true},
	}
}

type reply struct {
	status int
	header http.Header
	body   string
}

func get(t *testing.T, url string, headers ...string) reply {
	t.Helper()
	r, err := ask(client(), url, headers...)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// decode reads a backend's answer.
func decode(t *testing.T, r reply) seen {
	t.Helper()
	var s seen
	if r.status != 200 {
		t.Fatalf("status %d: %q", r.status, r.body)
	}
	if err := json.Unmarshal([]byte(r.body), &s); err != nil {
		t.Fatalf("not a backend's answer: %v: %q", err, r.body)
	}
	return s
}

// names sends n requests and returns the backend that answered each.
func names(t *testing.T, url string, n int) []string {
	t.Helper()
	var out []string
	for range n {
		out = append(out, decode(t, get(t, url)).Name)
	}
	return out
}

func alternates(got []string, a, b string) bool {
	for n := range got {
		if (got[n] != a && got[n] != b) || (n > 0 && got[n] == got[n-1]) {
			return false
		}
	}
	return len(got) > 1
}

func expect(t *testing.T, what string, got, want any) {
	t.Helper()
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("%s = %v, want %v", what, got, want)
	}
}
