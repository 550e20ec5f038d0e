package gateway

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/eurekagate/eurekagate/internal/testkit"
	"github.com/eurekagate/eurekagate/registry"
)

// headerLimit is the HeaderTimeout of the gateways startHeaderLimited
// starts: short, for the tests to wait it out.
const headerLimit = 300 * time.Millisecond

// startHeaderLimited starts a gateway, with loops as ServerConfig.Loops
// and HeaderTimeout headerLimit, in front of one instance of app that
// serves handler, and returns the gateway's base URL.
func startHeaderLimited(t *testing.T, loops int, app string, handler http.HandlerFunc) string {
	t.Helper()
	store := registry.New(registry.Config{})
	serve(t, store, app, "a", handler)
	base, _, _ := startServer(t, Config{}, ServerConfig{Loops: loops, HeaderTimeout: headerLimit}, store)
	return base
}

// echoRawBody answers with the request's body.
func echoRawBody(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	w.Write(b)
}

// echoPathBody answers with the request's path followed by its body.
func echoPathBody(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	io.WriteString(w, r.URL.Path+string(b))
}

// A request header trickled a byte at a time, each byte well within the
// read timeout, is cut HeaderTimeout after its first byte, in both modes;
// a body may take longer, and the gateway goes on serving.
func TestHeaderTimeoutCutsATrickledHeader(t *testing.T) {
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			base := startHeaderLimited(t, m.loops, "orders", echoRawBody)

			conn := testkit.Slowloris(t, strings.TrimPrefix(base, "http://"), "GET /orders/x HTTP/1.1\r\nHost: a\r\nX-Pad: "+strings.Repeat("p", 2000), 10*time.Millisecond)
			began := time.Now()
			conn.SetReadDeadline(began.Add(10 * time.Second))
			// 408, as fasthttp answers, then the connection closes.
			// (A reset may follow: the client still trickles.)
			got, err := io.ReadAll(conn)
			if !strings.HasPrefix(string(got), "HTTP/1.1 408 ") {
				t.Fatalf("the trickled header was not cut: %q, %v", got, err)
			}
			if took := time.Since(began); took < headerLimit || took > headerLimit+2*time.Second {
				t.Errorf("cut after %v, want about %v", took, headerLimit)
			}

			// A body that trickles past the header's limit is not cut.
			body := strings.Repeat("b", 40)
			slow, err := net.Dial("tcp", strings.TrimPrefix(base, "http://"))
			if err != nil {
				t.Fatal(err)
			}
			defer slow.Close()
			io.WriteString(slow, "POST /orders/x HTTP/1.1\r\nHost: a\r\nContent-Length: 40\r\n\r\n")
			stop := make(chan struct{})
			defer close(stop)
			bodyDone := testkit.Trickle(slow, body, 20*time.Millisecond, stop)
			slow.SetReadDeadline(time.Now().Add(10 * time.Second))
			resp, err := http.ReadResponse(bufio.NewReader(slow), nil)
			if err != nil {
				t.Fatal(err)
			}
			got, _ = io.ReadAll(resp.Body)
			resp.Body.Close()
			<-bodyDone
			if resp.StatusCode != 200 || string(got) != body {
				t.Errorf("slow body: %d %q", resp.StatusCode, got)
			}
		})
	}
	if got := NewServer(&Gateway{}, ServerConfig{}).cfg.HeaderTimeout; got != 60*time.Second {
		t.Errorf("default HeaderTimeout %v, want 60s as nginx", got)
	}
}

// A header that ends in bare line feeds, which RFC 9112 lets a server
// read and nginx reads: the loops read it (alone, pipelined, with a body
// that goes to fasthttp); fasthttp alone waits for a CRLF CRLF that never
// comes, and HeaderTimeout cuts it with 408.
func TestBareLineFeeds(t *testing.T) {
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			base := startHeaderLimited(t, m.loops, "orders", echoPathBody)
			c := dialRaw(t, base)
			if m.loops < 0 {
				c.send("GET /orders/a HTTP/1.1\nHost: gw\n\n")
				if resp, _ := c.read("GET"); resp.StatusCode != 408 {
					t.Fatalf("fasthttp alone: %d, want 408 at HeaderTimeout", resp.StatusCode)
				}
				return
			}
			c.send("GET /orders/a HTTP/1.1\nHost: gw\n\nGET /orders/b HTTP/1.1\nHost: gw\n\n")
			c.send("POST /orders/c HTTP/1.1\nHost: gw\nContent-Length: 4\n\nbody")
			for _, want := range []string{"/a", "/b", "/cbody"} {
				if resp, body := c.read("GET"); resp.StatusCode != 200 || body != want {
					t.Fatalf("%d %q, want %q", resp.StatusCode, body, want)
				}
			}
		})
	}
}
