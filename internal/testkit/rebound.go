package testkit

import (
	"net/http"
	"testing"
	"time"
)

// Rebound sends method url as a page at host whose name was rebound to
// the server's loopback address would: with that Host, a matching Origin
// and the write guard's header (Eurekagate-CSRF). It returns the status
// and the body; the tests of the registry's allowed hosts use it.
func Rebound(t testing.TB, method, url, host string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Host = host
	SetHeaders(req, "Origin", "http://"+host, "Eurekagate-CSRF", "1")
	resp, body := Do(t, &http.Client{Timeout: 10 * time.Second}, req)
	return resp.StatusCode, body
}
