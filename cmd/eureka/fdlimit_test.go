//go:build linux

package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"
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
	cmd := exec.CommandContext(ctx, "sh", "-c", `ulimit -n 160 && exec "$0" "$@"`, bin,
		"-addr", "127.0.0.1:0", "-gateway", "127.0.0.1:0", "-gateway-loops", loops, "-dashboard-path", "off")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	logs := newLogWatch(stderr)
	defer func() {
		cancel()
		cmd.Wait()
		logs.wait()
		if t.Failed() {
			t.Logf("the server's log:\n%s", logs.text())
		}
	}()
	registryAddr := logs.field(t, "registry listening", "addr")
	gatewayAddr := logs.field(t, "gateway listening", "addr")
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
	if !logs.seen("accepting a connection failed", 10*time.Second) {
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

// logWatch collects a process's JSON log lines as they come.
type logWatch struct {
	mu    sync.Mutex
	lines []string
	grew  chan struct{}
	done  chan struct{}
}

func newLogWatch(r io.Reader) *logWatch {
	w := &logWatch{grew: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(w.done)
		sc := bufio.NewScanner(r)
		for sc.Scan() {
			w.mu.Lock()
			w.lines = append(w.lines, sc.Text())
			close(w.grew)
			w.grew = make(chan struct{})
			w.mu.Unlock()
		}
	}()
	return w
}

func (w *logWatch) wait() { <-w.done }

func (w *logWatch) text() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return strings.Join(w.lines, "\n")
}

// find returns the first line whose msg starts with msg, waiting up to d
// for it.
func (w *logWatch) find(msg string, d time.Duration) (map[string]any, bool) {
	deadline := time.After(d)
	for i := 0; ; {
		w.mu.Lock()
		lines, grew := w.lines, w.grew
		w.mu.Unlock()
		for ; i < len(lines); i++ {
			var m map[string]any
			if json.Unmarshal([]byte(lines[i]), &m) == nil && strings.HasPrefix(fmt.Sprint(m["msg"]), msg) {
				return m, true
			}
		}
		select {
		case <-grew:
		case <-w.done:
			return nil, false
		case <-deadline:
			return nil, false
		}
	}
}

func (w *logWatch) seen(msg string, d time.Duration) bool {
	_, ok := w.find(msg, d)
	return ok
}

func (w *logWatch) field(t *testing.T, msg, key string) string {
	t.Helper()
	m, ok := w.find(msg, 20*time.Second)
	if !ok {
		t.Fatalf("the server never logged %q", msg)
	}
	return fmt.Sprint(m[key])
}
