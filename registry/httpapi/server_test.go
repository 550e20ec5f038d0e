package httpapi

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/eurekagate/eurekagate/eureka"
	"github.com/eurekagate/eurekagate/internal/testkit"
	"github.com/eurekagate/eurekagate/registry"
)

// A request in flight when the server stops is finished, not dropped.
func TestServerStopFinishesInFlightRequests(t *testing.T) {
	s, _ := newTestStore(t, registry.Config{})
	srv := NewServer(NewAPI(s, APIConfig{}), ServerConfig{Addr: "127.0.0.1:0"})
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	conn, err := net.Dial("tcp", srv.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	reader := bufio.NewReader(conn)
	// A first request and its answer: the server has accepted the
	// connection and serves it.
	fmt.Fprintf(conn, "GET /eureka/apps HTTP/1.1\r\nHost: localhost\r\n\r\n")
	first, err := http.ReadResponse(reader, nil)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, first.Body)
	first.Body.Close()

	body := eureka.AppendInstanceJSON(nil, inst("A", "x"))
	half := len(body) / 2
	fmt.Fprintf(conn, "POST /eureka/apps/A HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n", len(body))
	conn.Write(body[:half])
	time.Sleep(200 * time.Millisecond) // let the server read the bytes already sent

	stopped := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		stopped <- srv.Stop(ctx)
	}()
	select {
	case err := <-stopped:
		t.Fatalf("Stop returned while a request was in flight: %v", err)
	case <-time.After(100 * time.Millisecond):
	}
	conn.Write(body[half:])
	resp, err := http.ReadResponse(reader, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 204 {
		t.Fatalf("in-flight register: %d", resp.StatusCode)
	}
	conn.Close()
	if err := <-stopped; err != nil {
		t.Fatal(err)
	}
	if _, ok := s.Get("A", "x"); !ok {
		t.Fatal("in-flight registration lost")
	}
}

// Stopping the server answers the watches it holds at once.
func TestServerStopReleasesWatches(t *testing.T) {
	s, _ := newTestStore(t, registry.Config{})
	api := NewAPI(s, APIConfig{})
	srv := NewServer(api, ServerConfig{Addr: "127.0.0.1:0"})
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	token := api.token(registry.Version{Local: s.Version()})
	done := make(chan error, 1)
	go func() {
		resp, err := http.Get("http://" + srv.Addr().String() + "/eureka/apps/delta?watch=" + token + "&wait=50")
		if err == nil {
			resp.Body.Close()
		}
		done <- err
	}()
	testkit.Eventually(t, 5*time.Second, "the watch to be held", func() bool { return srv.srv.GetOpenConnectionsCount() > 0 })
	stopped := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := srv.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	<-done
	if took := time.Since(stopped); took > 5*time.Second {
		t.Errorf("stop waited %v for a held watch", took)
	}
}

// Until Ready is closed (the start-up sync is done), registry reads answer
// 503 and writes are taken; then reads answer.
func TestReadsWaitForReady(t *testing.T) {
	s, _ := newTestStore(t, registry.Config{})
	ready := make(chan struct{})
	srv := httptest.NewServer(NewHTTPHandler(NewAPI(s, APIConfig{Ready: ready})))
	defer srv.Close()
	get := func(path string) int {
		resp, err := http.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	for _, p := range []string{"/eureka/apps/", "/eureka/apps/delta", "/eureka/apps/A", "/eureka/apps/A/x", "/eureka/instances/x", "/eureka/vips/a"} {
		if got := get(p); got != http.StatusServiceUnavailable {
			t.Errorf("GET %s while syncing: %d", p, got)
		}
	}
	if got := get("/eureka/status"); got != http.StatusOK {
		t.Errorf("GET /eureka/status while syncing: %d", got)
	}
	body := eureka.AppendInstanceJSON(nil, inst("A", "x"))
	resp, err := http.Post(srv.URL+"/eureka/apps/A", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNoContent {
		t.Errorf("register while syncing: %d", resp.StatusCode)
	}
	close(ready)
	if got := get("/eureka/apps/A/x"); got != http.StatusOK {
		t.Errorf("GET after the sync: %d", got)
	}
}

func startServer(t *testing.T, cfg ServerConfig) (*Server, *registry.Store) {
	t.Helper()
	s, _ := newTestStore(t, registry.Config{})
	mustRegister(t, s, inst("A", "x"), false)
	cfg.Addr = "127.0.0.1:0"
	if cfg.Other == nil {
		cfg.Other = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "other") })
	}
	srv := NewServer(NewAPI(s, APIConfig{}), cfg)
	startForTest(t, srv)
	return srv, s
}

// startForTest starts srv and stops it when the test ends.
func startForTest(t *testing.T, srv *Server) {
	t.Helper()
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.Stop(ctx)
	})
}

func readAll(t *testing.T, conn net.Conn) string {
	t.Helper()
	conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	b, err := io.ReadAll(conn)
	if err != nil {
		t.Fatalf("the server did not close the connection: %v (read %q)", err, b)
	}
	return string(b)
}

func TestIdleConnectionsCloseSilently(t *testing.T) {
	srv, _ := startServer(t, ServerConfig{ReadTimeout: 300 * time.Millisecond, IdleTimeout: 300 * time.Millisecond})
	fresh, err := net.Dial("tcp", srv.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer fresh.Close()
	if got := readAll(t, fresh); got != "" {
		t.Errorf("a connection that sent nothing got %q", got)
	}

	used, err := net.Dial("tcp", srv.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer used.Close()
	fmt.Fprintf(used, "GET /eureka/apps/A HTTP/1.1\r\nHost: localhost\r\n\r\n")
	br := bufio.NewReader(used)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	used.SetReadDeadline(time.Now().Add(10 * time.Second))
	if rest, err := io.ReadAll(br); err != nil || len(rest) != 0 {
		t.Errorf("an idle keep-alive connection got %q (%v)", rest, err)
	}
}

func TestSlowRequestGets408(t *testing.T) {
	srv, s := startServer(t, ServerConfig{ReadTimeout: 300 * time.Millisecond})
	for name, partial := range map[string]string{
		"headers": "PUT /eureka/apps/A/x HTTP/1.1\r\nHost: localhost\r\n",
		"body":    "POST /eureka/apps/A HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"instance\":",
	} {
		t.Run(name, func(t *testing.T) {
			conn, err := net.Dial("tcp", srv.Addr().String())
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			io.WriteString(conn, partial)
			conn.SetReadDeadline(time.Now().Add(10 * time.Second))
			resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusRequestTimeout {
				t.Errorf("status %d, want 408", resp.StatusCode)
			}
		})
	}
	if s.Len() != 1 {
		t.Error("a timed-out request changed the registry")
	}
}

func rawStatus(t *testing.T, addr, request string) int {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(10 * time.Second))
	go io.WriteString(conn, request)
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

func TestHeaderLimit(t *testing.T) {
	header := func(n int) string { return "X-Pad: " + strings.Repeat("p", n) + "\r\n" }
	def, _ := startServer(t, ServerConfig{})
	for _, c := range []struct {
		size, want int
	}{{60 << 10, 200}, {70 << 10, 431}} {
		if got := rawStatus(t, def.Addr().String(), "GET /eureka/apps/A HTTP/1.1\r\nHost: localhost\r\n"+header(c.size)+"\r\n"); got != c.want {
			t.Errorf("%d KiB of headers: %d, want %d", c.size>>10, got, c.want)
		}
	}
	big, _ := startServer(t, ServerConfig{MaxHeaderBytes: 1 << 20})
	if got := rawStatus(t, big.Addr().String(), "GET /eureka/apps/A HTTP/1.1\r\nHost: localhost\r\n"+header(900<<10)+"\r\n"); got != 200 {
		t.Errorf("900 KiB of headers with a 1 MiB limit: %d", got)
	}
}

func TestMalformedEscapeIs400(t *testing.T) {
	srv, _ := startServer(t, ServerConfig{})
	for _, p := range []string{"/eureka/apps/ORDERS/%zz", "/eureka/apps/%", "/dashboard/%zz", "/%4"} {
		if got := rawStatus(t, srv.Addr().String(), "GET "+p+" HTTP/1.1\r\nHost: localhost\r\n\r\n"); got != 400 {
			t.Errorf("GET %s: %d, want 400", p, got)
		}
	}
	if got := rawStatus(t, srv.Addr().String(), "GET /dashboard/%41 HTTP/1.1\r\nHost: localhost\r\n\r\n"); got != 200 {
		t.Errorf("a valid escape: %d", got)
	}
}

// ReadTimeout bounds a request header as a whole: one that trickles in a
// byte at a time, each well within the limit, is cut at the limit (408)
// as nginx's client_header_timeout cuts it.
func TestTrickledHeaderIsCut(t *testing.T) {
	const limit = 300 * time.Millisecond
	srv, s := startServer(t, ServerConfig{ReadTimeout: limit})
	conn := testkit.Slowloris(t, srv.Addr().String(), "PUT /eureka/apps/A/x HTTP/1.1\r\nHost: localhost\r\nX-Pad: "+strings.Repeat("p", 500), 20*time.Millisecond)
	began := time.Now()
	conn.SetReadDeadline(began.Add(10 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("no answer: %v", err)
	}
	resp.Body.Close()
	if took := time.Since(began); resp.StatusCode != http.StatusRequestTimeout || took > limit+2*time.Second {
		t.Errorf("status %d after %v, want 408 after about %v", resp.StatusCode, took, limit)
	}
	if s.Len() != 1 {
		t.Error("a timed-out request changed the registry")
	}
}
