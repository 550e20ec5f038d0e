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
	fmt.Fprintf(conn, "GET /eureka/apps HTTP/1.1\r\nHost: x\r\n\r\n")
	first, err := http.ReadResponse(reader, nil)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, first.Body)
	first.Body.Close()

	body := eureka.AppendInstanceJSON(nil, inst("A", "x"))
	half := len(body) / 2
	fmt.Fprintf(conn, "POST /eureka/apps/A HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n", len(body))
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
	token := api.token(s.Version())
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
