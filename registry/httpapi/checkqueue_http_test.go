package httpapi

import (
	"fmt"
	"net"
	"net/http"
	"sync"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/eurekagate/eurekagate/internal/testkit"
	"github.com/eurekagate/eurekagate/registry"
)

// clientFrom is an HTTP client whose connections come from the loopback
// address ip (127.0.0.2, ...), so that the server tells clients apart.
func clientFrom(t *testing.T, ip string) *http.Client {
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}}
	tr := &http.Transport{DialContext: d.DialContext}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr, Timeout: 30 * time.Second}
}

func putFrom(t *testing.T, c *http.Client, url, user, pass string) (int, http.Header) {
	req, _ := http.NewRequest("PUT", url, nil)
	req.SetBasicAuth(user, pass)
	resp, err := c.Do(req)
	if err != nil {
		t.Error(err)
		return 0, nil
	}
	resp.Body.Close()
	return resp.StatusCode, resp.Header
}

// While one address floods distinct wrong passwords, clients from other
// addresses whose valid credentials were never seen before get in on
// their first request: the flood delays their check by at most one check
// and its rest is its own. The flood's excess gets 503 with Retry-After.
func TestFloodFromOneAddressLetsOthersIn(t *testing.T) {
	s, _ := newTestStore(t, registry.Config{})
	mustRegister(t, s, inst("A", "x"), false)
	const services = 5
	var users []Account
	for _, u := range []string{"ops", "svc0", "svc1", "svc2", "svc3", "svc4"} {
		hash, err := bcrypt.GenerateFromPassword([]byte("pw-"+u), 8)
		if err != nil {
			t.Fatal(err)
		}
		users = append(users, Account{Username: u, PasswordHash: string(hash)})
	}
	api := NewAPI(s, APIConfig{Auth: AuthConfig{Users: users}})
	for name, base := range frontDoorURLs(t, api) {
		t.Run(name, func(t *testing.T) {
			api.auth.mu.Lock()
			clear(api.auth.valid)
			api.auth.mu.Unlock()
			url := base + "/eureka/apps/A/x"
			flooder := clientFrom(t, "127.0.0.1")
			stop := make(chan struct{})
			var wg sync.WaitGroup
			var mu sync.Mutex
			var refused, busy int
			retryAfter := ""
			for w := range 8 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for n := 0; ; n++ {
						select {
						case <-stop:
							return
						default:
						}
						code, h := putFrom(t, flooder, url, "ops", fmt.Sprint("guess-", name, w, "-", n))
						mu.Lock()
						switch code {
						case 401:
							refused++
						case 503:
							busy++
							retryAfter = h.Get("Retry-After")
						default:
							t.Errorf("a wrong password got %d", code)
						}
						mu.Unlock()
					}
				}()
			}
			// The flood under way: its checks have started refusing.
			testkit.Eventually(t, 10*time.Second, "the flood's first refusals", func() bool {
				mu.Lock()
				defer mu.Unlock()
				return refused >= 2
			})
			for n := range services {
				c := clientFrom(t, fmt.Sprintf("127.0.0.%d", 2+n))
				u := fmt.Sprint("svc", n)
				start := time.Now()
				if code, _ := putFrom(t, c, url, u, "pw-"+u); code != 200 {
					t.Errorf("%s from 127.0.0.%d, first request during the flood: %d, want 200", u, 2+n, code)
				} else {
					t.Logf("%s got in after %v", u, time.Since(start))
				}
			}
			close(stop)
			wg.Wait()
			t.Logf("flood: %d refused (401), %d turned away (503)", refused, busy)
			if busy > 0 && retryAfter != "1" {
				t.Errorf("the flood's 503 had Retry-After %q, want 1", retryAfter)
			}
		})
	}
}
