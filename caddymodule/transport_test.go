package caddymodule

import (
	"bufio"
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
)

// A transport that is neither eureka_gateway's own nor reverse_proxy is
// refused with the value and the choices: in a Caddyfile with its line,
// in JSON when provisioned.
func TestTransportConfigErrors(t *testing.T) {
	expectCaddyfileErrors(t, []caddyfileError{
		{"transport unknown", "http://:1 {\n\teureka_gateway {\n\t\ttransport fasthttp\n\t}\n}\n",
			[]string{`transport "fasthttp" is not one of eureka (the default) or reverse_proxy`, "Caddyfile:3"}},
		{"transport without a value", "http://:1 {\n\teureka_gateway {\n\t\ttransport\n\t}\n}\n",
			[]string{"Caddyfile:3"}},
	})
	g := &Gateway{Transport: "h2"}
	if _, err := g.routerConfig(); err == nil || err.Error() != `transport "h2" is not one of eureka (the default) or reverse_proxy` {
		t.Errorf("JSON transport h2: %v", err)
	}
}

// The instance gets the same request head, and the client the same
// response head, with the gateway's own transport as with
// reverse_proxy: hop-by-hop headers removed both ways, the forwarded
// ones, Via, the instance's Server and trailers.
func TestTransportsSendTheSameHeaders(t *testing.T) {
	inst := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen := map[string]any{"host": r.Host, "uri": r.RequestURI, "proto": r.Proto, "header": r.Header}
		w.Header().Set("Connection", "X-Hop")
		w.Header().Set("X-Hop", "1")
		w.Header().Set("Server", "instance")
		w.Header().Set("Trailer", "X-Sum")
		w.Header().Add("Via", "1.0 upstream")
		json.NewEncoder(w).Encode(seen)
		w.Header().Set("X-Sum", "42")
	}))
	t.Cleanup(inst.Close)
	heads := map[string][2]string{}
	for _, transport := range []string{"eureka", "reverse_proxy"} {
		loadConfig(t, gatewayConfig("registry "+newRegistry("transport-headers"), "transport "+transport+"\n\t\trequest_id off"))
		registerVia(t, registryURL, serverBackend("h", inst).instance("heads"))
		conn := dialGateway(t)
		fmt.Fprintf(conn, "GET /heads/a/b?q=1 HTTP/1.1\r\nHost: gw.example\r\nConnection: X-Hop-Req, keep-alive, x-forwarded-prefix\r\nX-Hop-Req: 1\r\n"+
			"Te: trailers, deflate\r\nVia: 1.0 client\r\nX-Forwarded-For: 6.6.6.6\r\nX-End: kept\r\n\r\n")
		resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
		if err != nil {
			t.Fatalf("%s: %v", transport, err)
		}
		body, err := io.ReadAll(resp.Body)
		conn.Close()
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("%s: %d %v", transport, resp.StatusCode, err)
		}
		resp.Header.Del("Date")
		got, _ := json.Marshal(map[string]any{"header": resp.Header, "trailer": resp.Trailer})
		heads[transport] = [2]string{string(body), string(got)}
	}
	own, rp := heads["eureka"], heads["reverse_proxy"]
	if own[0] != rp[0] {
		t.Errorf("the instance got\n%s with the own transport,\n%s with reverse_proxy", own[0], rp[0])
	}
	if own[1] != rp[1] {
		t.Errorf("the client got\n%s with the own transport,\n%s with reverse_proxy", own[1], rp[1])
	}
	for _, want := range []string{`"Te":["trailers"]`, `"Via":["1.0 client","1.1 Caddy"]`, `"X-Forwarded-For":["127.0.0.1"]`, `"X-End":["kept"]`} {
		if !strings.Contains(own[0], want) {
			t.Errorf("the instance's head lacks %s: %s", want, own[0])
		}
	}
	// The client's Connection names a field of the gateway's own, set
	// before the hop-by-hop ones are removed: reverse_proxy removes it.
	for _, unwanted := range []string{"X-Hop-Req", "X-Forwarded-Prefix"} {
		if strings.Contains(own[0], unwanted) {
			t.Errorf("the instance's head has %s: %s", unwanted, own[0])
		}
	}
	for _, want := range []string{`"Server":["instance"]`, `"X-Sum":["42"]`} {
		if !strings.Contains(own[1], want) {
			t.Errorf("the client's head lacks %s: %s", want, own[1])
		}
	}
}

// A tunnel the gateway's own transport carries is closed when its config
// is unloaded: the handler that owns it returns.
func TestTunnelClosedWithItsConfig(t *testing.T) {
	inst := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Upgrade", "x-test")
		w.Header().Set("Connection", "Upgrade")
		w.WriteHeader(http.StatusSwitchingProtocols)
		c, brw, err := http.NewResponseController(w).Hijack()
		if err != nil {
			return
		}
		defer c.Close()
		io.Copy(c, brw) // an echo, until the gateway closes its side
	}))
	t.Cleanup(inst.Close)
	loadConfig(t, gatewayConfig("registry "+newRegistry("tunnel-unload"), ""))
	registerVia(t, registryURL, serverBackend("t", inst).instance("tunnel"))
	conn := dialGateway(t)
	defer conn.Close()
	fmt.Fprintf(conn, "GET /tunnel/t HTTP/1.1\r\nHost: gw\r\nConnection: Upgrade\r\nUpgrade: x-test\r\n\r\n")
	br := bufio.NewReader(conn)
	resp, err := http.ReadResponse(br, nil)
	if err != nil || resp.StatusCode != 101 {
		t.Fatalf("upgrade: %v %v", resp, err)
	}
	io.WriteString(conn, "ping")
	echo := make([]byte, 4)
	if _, err := io.ReadFull(br, echo); err != nil || string(echo) != "ping" {
		t.Fatalf("through the tunnel: %q %v", echo, err)
	}
	loadConfig(t, gatewayConfig("registry "+newRegistry("tunnel-unload"), "")) // unloads the first
	if n, err := br.Read(echo); err == nil {
		t.Fatalf("the tunnel is open after its config was unloaded: read %q", echo[:n])
	} else if ne, ok := err.(net.Error); ok && ne.Timeout() {
		t.Fatal("the tunnel is open after its config was unloaded")
	}
}

// dialGateway connects to the gateway, for a client that writes its
// own bytes, its reads and writes given 10 s.
func dialGateway(t *testing.T) net.Conn {
	t.Helper()
	conn, err := net.DialTimeout("tcp", "127.0.0.1:"+gatewayPort, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	conn.SetDeadline(time.Now().Add(10 * time.Second))
	return conn
}

// serverBackend is srv, a test server of the test's own, as the backend
// named name.
func serverBackend(name string, srv *httptest.Server) *backend {
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	b := &backend{name: name, srv: srv}
	b.port, _ = strconv.Atoi(port)
	return b
}

// slowBody is an upload from a slow client: pieces of 16 KiB, a pause
// before each but the first.
type slowBody struct {
	pieces int
	pause  time.Duration
	sent   int
}

func (b *slowBody) Read(p []byte) (int, error) {
	if b.sent == b.pieces {
		return 0, io.EOF
	}
	if b.sent > 0 {
		time.Sleep(b.pause) // the client's pace, not a wait for the gateway
	}
	b.sent++
	return copy(p, make([]byte, min(len(p), 16<<10))), nil
}

// An upload that takes longer than read_timeout gets through: the
// instance reading it is not silent.
func TestSlowUploadLongerThanReadTimeout(t *testing.T) {
	inst := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n, err := io.Copy(io.Discard, r.Body)
		fmt.Fprintf(w, "%d %v", n, err)
	}))
	t.Cleanup(inst.Close)
	loadConfig(t, gatewayConfig("registry "+newRegistry("slow-upload"), "read_timeout 200ms"))
	registerVia(t, registryURL, serverBackend("u", inst).instance("uploads"))
	body := &slowBody{pieces: 6, pause: 100 * time.Millisecond}
	req, _ := http.NewRequest("POST", gatewayURL+"/uploads/u", body)
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.HasPrefix(string(got), strconv.Itoa(body.pieces*16<<10)+" ") {
		t.Errorf("a 500 ms upload with read_timeout 200ms: %d %q", resp.StatusCode, got)
	}
}
