//go:build linux

package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/eurekagate/eurekagate/internal/proc"
)

// A process that runs out of file descriptors for a moment goes on
// serving once they come back: the registry's port and the gateway's
// (with its event loops and without) answer within a second of the
// connections that used them up closing, and the failed accepts are
// logged and counted in /metrics. Before, fasthttp's accept loop returned
// on EMFILE and the port stayed dead until a restart.
func TestListenersOutliveFileDescriptorExhaustion(t *testing.T) {
	bin := binary(t)
	for _, loops := range []string{"0", "-1"} {
		t.Run("loops="+loops, func(t *testing.T) { exhaustAndRecover(t, bin, loops) })
	}
}

func exhaustAndRecover(t *testing.T, bin, loops string) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	// 160 descriptors: a few dozen for the runtime and the listeners,
	// the rest for clients.
	p, err := proc.Start(ctx, "the server", proc.Config{Stdout: io.Discard}, "sh", "-c", `ulimit -n 160 && exec "$0" "$@"`, bin,
		"-addr", "127.0.0.1:0", "-gateway", "127.0.0.1:0", "-gateway-loops", loops, "-dashboard-path", "off")
	if err != nil {
		t.Fatal(err)
	}
	logs := &processLog{p.Output}
	defer func() {
		p.Kill()
		if t.Failed() {
			t.Logf("the server's log:\n%s", logs.String())
		}
	}()
	registryAddr := logField(t, logs, "registry listening", "addr")
	gatewayAddr := logField(t, logs, "gateway listening", "addr")
	c := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	for _, u := range []string{"http://" + registryAddr + "/eureka/apps", "http://" + gatewayAddr + "/nope/x"} {
		resp, err := c.Get(u)
		if err != nil {
			t.Fatalf("before: %v", err)
		}
		resp.Body.Close()
	}

	// Use the descriptors up with connections that send half a header.
	var held []net.Conn
	for i := 0; i < 300; i++ {
		addr := registryAddr
		if i%2 == 1 {
			addr = gatewayAddr
		}
		conn, err := net.DialTimeout("tcp", addr, time.Second)
		if err != nil {
			break // the backlog is full: enough
		}
		io.WriteString(conn, "GET /eureka/apps HTTP/1.1\r\nHo")
		held = append(held, conn)
	}
	if _, seen := logs.find("accepting a connection failed", 10*time.Second); !seen {
		t.Fatalf("the server never ran out of file descriptors with %d connections held", len(held))
	}
	// Long enough for the wait between tries to reach its longest.
	time.Sleep(2 * time.Second)
	for _, conn := range held {
		conn.Close()
	}
	closed := time.Now()

	for _, u := range []string{"http://" + registryAddr + "/eureka/apps", "http://" + gatewayAddr + "/nope/x"} {
		for {
			resp, err := c.Get(u)
			if err == nil {
				resp.Body.Close()
				break
			}
			if time.Since(closed) > 5*time.Second {
				t.Fatalf("%s still fails %v after the connections closed: %v", u, time.Since(closed), err)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	if took := time.Since(closed); took > time.Second {
		t.Errorf("answered %v after the descriptors came back, want within 1s", took)
	}
	resp, err := c.Get("http://" + registryAddr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	metrics, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(metrics), "eureka_accept_errors_total{server=") {
		t.Errorf("/metrics counts no failed accept:\n%s", metrics)
	}
}

// logField waits up to 20 s for the line whose msg starts with msg and
// returns its field key.
func logField(t *testing.T, logs *processLog, msg, key string) string {
	t.Helper()
	m, ok := logs.find(msg, 20*time.Second)
	if !ok {
		t.Fatalf("the server never logged %q", msg)
	}
	return fmt.Sprint(m[key])
}
