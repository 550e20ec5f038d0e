package eurekahttp

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

// What goes on the wire: the path joined to the base path, basic auth from
// the URL's user info, JSON and gzip asked for, the body as JSON, extra
// headers.
func TestRequestOnTheWire(t *testing.T) {
	type seen struct {
		method, path, query, auth, accept, encoding, contentType, replication, agent, body string
	}
	var (
		mu  sync.Mutex
		got []seen
	)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		got = append(got, seen{r.Method, r.URL.Path, r.URL.RawQuery, r.Header.Get("Authorization"), r.Header.Get("Accept"),
			r.Header.Get("Accept-Encoding"), r.Header.Get("Content-Type"), r.Header.Get("x-netflix-discovery-replication"),
			r.Header.Get("User-Agent"), string(body)})
		mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	}))
	defer srv.Close()
	c := newClient(t, Config{UserAgent: "eurekagate-test"})
	// No trailing slash on the base path, and a leading one on the path:
	// the join still makes one slash.
	server := parse(t, strings.Replace(srv.URL, "http://", "http://user:p%40ss@", 1)+"/eureka")

	ctx := context.Background()
	if _, err := c.Do(ctx, server, Request{Path: "/apps/"}); err != nil {
		t.Fatal(err)
	}
	resp, err := c.Do(ctx, server, Request{Method: http.MethodPost, Path: "peerreplication/batch/", Body: []byte(`{"replicationList":[]}`),
		Header: http.Header{"X-Netflix-Discovery-Replication": {"true"}}})
	if err != nil {
		t.Fatal(err)
	}
	if resp.Status != http.StatusNoContent || resp.Server != server {
		t.Errorf("response %+v", resp)
	}
	if _, err := c.Do(ctx, server, Request{Method: http.MethodPut, Path: "apps/ORDERS/h1%3Aorders?status=UP&lastDirtyTimestamp=5"}); err != nil {
		t.Fatal(err)
	}

	basic := "Basic dXNlcjpwQHNz" // user:p@ss
	want := []seen{
		{"GET", "/eureka/apps/", "", basic, "application/json", "gzip", "", "", "eurekagate-test", ""},
		{"POST", "/eureka/peerreplication/batch/", "", basic, "application/json", "gzip", "application/json", "true", "eurekagate-test", `{"replicationList":[]}`},
		{"PUT", "/eureka/apps/ORDERS/h1:orders", "status=UP&lastDirtyTimestamp=5", basic, "application/json", "gzip", "", "", "eurekagate-test", ""},
	}
	if len(got) != len(want) {
		t.Fatalf("server saw %d requests: %+v", len(got), got)
	}
	for n := range want {
		if got[n] != want[n] {
			t.Errorf("request %d:\n got %+v\nwant %+v", n, got[n], want[n])
		}
	}
}

func TestNonSuccessStatusIsAnAnswer(t *testing.T) {
	f := newFakeServer(t, http.StatusServiceUnavailable, `{"error":"busy"}`)
	c := newClient(t, Config{})
	resp, err := c.Do(context.Background(), parse(t, f.url()), Request{Path: "apps/"})
	if err != nil {
		t.Fatalf("a 503 is an answer for Client.Do: %v", err)
	}
	if resp.Status != 503 || string(resp.Body) != `{"error":"busy"}` {
		t.Errorf("response %d %q", resp.Status, resp.Body)
	}
}

func TestGzipAnswerIsDecoded(t *testing.T) {
	doc := []byte(`{"applications":{"versions__delta":"1","apps__hashcode":"","application":[]}}`)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.Contains(r.Header.Get("Accept-Encoding"), "gzip") {
			t.Error("gzip not asked for")
		}
		w.Header().Set("Content-Encoding", "gzip")
		w.Header().Set("Content-Type", "application/json")
		w.Write(gzipped(t, doc))
	}))
	defer srv.Close()
	c := newClient(t, Config{})
	resp, err := c.Do(context.Background(), parse(t, srv.URL+"/eureka/"), Request{Path: "apps/"})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(resp.Body, doc) {
		t.Errorf("body %q", resp.Body)
	}
}

// A body that is not gzip though it says so, and a Content-Encoding the
// client does not decode, are errors that name the encoding and the request.
func TestBadEncodingIsAnError(t *testing.T) {
	for _, tc := range []struct{ encoding, body string }{
		{"gzip", "not gzip at all"},
		{"br", "???"},
	} {
		t.Run(tc.encoding, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Encoding", tc.encoding)
				w.Write([]byte(tc.body))
			}))
			defer srv.Close()
			c := newClient(t, Config{})
			_, err := c.Do(context.Background(), parse(t, srv.URL+"/eureka/"), Request{Path: "apps/"})
			if err == nil || !strings.Contains(err.Error(), tc.encoding) || !strings.Contains(err.Error(), "GET "+srv.URL+"/eureka/apps/") {
				t.Fatalf("%s answer: %v", tc.encoding, err)
			}
		})
	}
}

// A gzip bomb, 512 MiB of zeros in about half a megabyte, is refused at the
// limit without decoding it all.
func TestGzipBombRefused(t *testing.T) {
	bomb := gzipBomb(t, 512)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Encoding", "gzip")
		w.Header().Set("Content-Type", "application/json")
		w.Write(bomb)
	}))
	defer srv.Close()
	const limit = 1 << 20
	c := newClient(t, Config{MaxBodySize: limit})
	server := parse(t, srv.URL+"/eureka/")

	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err := c.Do(context.Background(), server, Request{Path: "apps/"})
	runtime.ReadMemStats(&after)
	if !errors.Is(err, ErrBodyTooLarge) {
		t.Fatalf("gzip bomb: %v", err)
	}
	var e *Error
	if !errors.As(err, &e) || e.URL != srv.URL+"/eureka/apps/" || e.Method != "GET" {
		t.Errorf("error does not name the request: %v", err)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 32<<20 {
		t.Errorf("refusing the bomb allocated %d MiB", alloc>>20)
	}

	// The same limit passes an answer that decodes to exactly the limit.
	exact := gzipped(t, make([]byte, limit))
	srv.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Encoding", "gzip")
		w.Write(exact)
	})
	resp, err := c.Do(context.Background(), server, Request{Path: "apps/"})
	if err != nil || len(resp.Body) != limit {
		t.Fatalf("an answer of exactly the limit: %v, %d bytes", err, len(resp.Body))
	}
}

func TestPlainBodyOverLimitRefused(t *testing.T) {
	f := newFakeServer(t, http.StatusOK, strings.Repeat("x", 4096))
	c := newClient(t, Config{MaxBodySize: 1024})
	_, err := c.Do(context.Background(), parse(t, f.url()), Request{Path: "apps/"})
	if !errors.Is(err, ErrBodyTooLarge) {
		t.Fatalf("4 KiB body with a 1 KiB limit: %v", err)
	}
}

func TestDefaults(t *testing.T) {
	cfg := Config{}.withDefaults()
	if cfg.ConnectTimeout != 5*time.Second || cfg.ReadTimeout != 8*time.Second || cfg.MaxBodySize != 1<<30 || cfg.MaxBodySizeSetting != "MaxBodySize" || cfg.UserAgent != "eurekagate" {
		t.Errorf("defaults %+v", cfg)
	}
	cl, err := NewCluster(NewClient(Config{}), parseAll(t, "http://a/eureka/"), ClusterConfig{})
	if err != nil {
		t.Fatal(err)
	}
	if cl.cfg.QuarantineDuration != 30*time.Second || cl.cfg.Now == nil {
		t.Errorf("cluster defaults %+v", cl.cfg)
	}
}

// The body belongs to the caller: later requests do not overwrite it.
func TestBodyIsTheCallersCopy(t *testing.T) {
	var n int
	var mu sync.Mutex
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		n++
		body := strings.Repeat(string(rune('a'+n%26)), 100)
		mu.Unlock()
		w.Write([]byte(body))
	}))
	defer srv.Close()
	c := newClient(t, Config{})
	server := parse(t, srv.URL+"/eureka/")
	first, err := c.Do(context.Background(), server, Request{Path: "apps/"})
	if err != nil {
		t.Fatal(err)
	}
	kept := string(first.Body)
	for range 5 {
		if _, err := c.Do(context.Background(), server, Request{Path: "apps/"}); err != nil {
			t.Fatal(err)
		}
	}
	if string(first.Body) != kept {
		t.Errorf("body changed from %q to %q", kept, first.Body)
	}
}

// A server that accepts and never answers: the read timeout ends the
// request, which is not resent to it.
func TestHungServerTimesOut(t *testing.T) {
	url, accepted := hungServer(t)
	c := newClient(t, Config{ReadTimeout: 100 * time.Millisecond})
	_, err := c.Do(context.Background(), parse(t, url), Request{Path: "apps/"})
	if !IsTimeout(err) {
		t.Fatalf("hung server: %v", err)
	}
	if !strings.Contains(err.Error(), "GET "+url+"apps/") {
		t.Errorf("error does not name the request: %v", err)
	}
	if n := accepted(); n != 1 {
		t.Errorf("the timed-out request was sent on %d connections", n)
	}
}

// A context deadline shorter than the read timeout ends the request.
func TestContextDeadlineBoundsTheRequest(t *testing.T) {
	url, _ := hungServer(t)
	c := newClient(t, Config{}) // read timeout 8s
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := c.Do(ctx, parse(t, url), Request{Path: "apps/"})
	if !errors.Is(err, context.DeadlineExceeded) || !IsTimeout(err) {
		t.Fatalf("deadline: %v", err)
	}
	if elapsed := time.Since(start); elapsed > 4*time.Second {
		t.Errorf("the request outlived its deadline: %v", elapsed)
	}
	cancelled, stop := context.WithCancel(context.Background())
	stop()
	if _, err := c.Do(cancelled, parse(t, url), Request{Path: "apps/"}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled context: %v", err)
	}
}

func TestConnectionRefused(t *testing.T) {
	url := refusedURL(t)
	c := newClient(t, Config{})
	_, err := c.Do(context.Background(), parse(t, url), Request{Method: http.MethodDelete, Path: "apps/A/1"})
	var e *Error
	if !errors.As(err, &e) || e.Method != "DELETE" || e.URL != url+"apps/A/1" || e.Err == nil || IsTimeout(err) {
		t.Fatalf("refused: %v", err)
	}
}

// A service URL with an IPv6 literal: the client dials both stacks.
func TestIPv6ServiceURL(t *testing.T) {
	ln, err := net.Listen("tcp", "[::1]:0")
	if err != nil {
		t.Skip("no IPv6 loopback:", err)
	}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("{}")) }))
	srv.Listener = ln
	srv.Start()
	defer srv.Close()
	c := newClient(t, Config{})
	resp, err := c.Do(context.Background(), parse(t, srv.URL+"/eureka/"), Request{Path: "apps/"})
	if err != nil || resp.Status != 200 {
		t.Fatalf("%s: %v %+v", srv.URL, err, resp)
	}
}
