package apisuite

import (
	"bufio"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/eurekagate/eurekagate/internal/testkit"
	"github.com/eurekagate/eurekagate/registry"
	"github.com/eurekagate/eurekagate/registry/httpapi"
)

// raw sends one request as written (for paths a client library would not
// send) and returns its answer's status.
func raw(t *testing.T, base, request string) int {
	t.Helper()
	u, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	conn, err := net.DialTimeout("tcp", u.Host, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(10 * time.Second))
	go conn.Write([]byte(request)) // the server may answer before it has read it all
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("%.60q: %v", request, err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// A malformed percent-escape is a bad request. Headers far beyond
// fasthttp's default 4 KiB pass (Caddy's default limit is 16 KiB, the
// standalone server's 64 KiB): long metadata queries, large cookies;
// megabytes of them get 431.
func limits(t *testing.T, start Starter) {
	base, s := start(t, registry.Config{}, httpapi.APIConfig{})
	register(t, base, "A", "x")
	for _, req := range []string{
		"GET /eureka/apps/ORDERS/%zz HTTP/1.1\r\nHost: localhost\r\n\r\n",
		"PUT /eureka/apps/A/%x HTTP/1.1\r\nHost: localhost\r\n\r\n",
		"DELETE /eureka/apps/A/x% HTTP/1.1\r\nHost: localhost\r\n\r\n",
	} {
		if got := raw(t, base, req); got != http.StatusBadRequest {
			t.Errorf("%q: %d, want 400", strings.Fields(req)[1], got)
		}
	}
	if _, ok := s.Get("A", "x"); !ok {
		t.Fatal("a malformed path cancelled an instance")
	}

	cookie := "Cookie: " + strings.Repeat("c=4096-byte-cookie-"+strings.Repeat("c", 4070)+"; ", 3) + "\r\n"
	if got := raw(t, base, "GET /eureka/apps/A HTTP/1.1\r\nHost: localhost\r\n"+cookie+"\r\n"); got != http.StatusOK {
		t.Errorf("12 KiB of cookies: %d", got)
	}
	long := strings.Repeat("v", 10<<10)
	r := call(t, "PUT", base+"/eureka/apps/A/x/metadata?note="+long, nil)
	if r.status != http.StatusOK || testkit.MustGet(t, s, "A", "x").Metadata["note"] != long {
		t.Errorf("metadata with a 10 KiB query: %d", r.status)
	}
	huge := "X-Huge: " + strings.Repeat("h", 2<<20) + "\r\n"
	if got := raw(t, base, "GET /eureka/apps/A HTTP/1.1\r\nHost: localhost\r\n"+huge+"\r\n"); got != http.StatusRequestHeaderFieldsTooLarge {
		t.Errorf("2 MiB of headers: %d, want 431", got)
	}
}
