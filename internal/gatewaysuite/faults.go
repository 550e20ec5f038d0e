package gatewaysuite

import (
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/eurekagate/eurekagate/eureka"
	"github.com/eurekagate/eurekagate/internal/testkit"
)

// Faults of instances that the routing core's transports each meet in
// their own way: tunnels that stay quiet, informational answers before a
// hang, and kept-alive TLS connections the instance closes.

// A WebSocket may stay quiet for longer than ReadTimeout: tunnels have no
// idle limit on either gateway.
func quietWebSocket(t *testing.T, start Starter) {
	base, store, _ := start(t)
	a := newBackend(t, "a", wsEcho(t))
	register(t, store, instance("quiet", "quiet-a", a.port))
	wsRoundTripPausing(t, strings.TrimPrefix(base, "http://"), "/quiet/ws", []string{"hello", "after a silence"}, ReadTimeout+ReadTimeout/2)
}

// An instance that sends an informational answer (103 Early Hints) and
// then hangs has still not answered: after ResponseHeaderTimeout the PUT
// goes to another instance, and the one that hung gets no more requests
// (passive health), exactly as one that sent nothing.
func interimThenHang(t *testing.T, start Starter) {
	base, store, _ := start(t)
	var hinting methodHits
	release := make(chan struct{})
	var once sync.Once
	h := newBackend(t, "hinting", counting(&hinting, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Link", "</style.css>; rel=preload")
		w.WriteHeader(http.StatusEarlyHints)
		select {
		case <-release:
		case <-r.Context().Done():
		}
	})))
	t.Cleanup(func() { once.Do(func() { close(release) }) })
	live := newBackend(t, "live", nil)
	register(t, store, instance("hints", "hints-hinting", h.port))
	register(t, store, instance("hints", "hints-live", live.port))
	for n := range 3 {
		r := send(t, "PUT", base+"/hints/p", "x")
		if s := decode(t, r); s.Name != "live" {
			t.Errorf("PUT %d answered by %s", n, s.Name)
		}
	}
	expect(t, "PUTs the hinting instance got", hinting.get("PUT"), 1)
}

// A secure instance that closes its kept-alive connections when they are
// idle (a short keep-alive, as Node's 5 s) costs no request: a closed
// pooled connection is not used, over TLS as over plain HTTP, so even a
// POST, which is never sent twice, gets through.
func secureIdleClosed(t *testing.T, start Starter) {
	base, store, _ := start(t)
	v := newTLSBackend(t, "vault", nil, func(s *http.Server) { s.IdleTimeout = 100 * time.Millisecond })
	i := instance("vault", "vault-idle", testkit.FreePort(t))
	i.Port.Enabled = false
	i.SecurePort = eureka.Port{Number: v.port, Enabled: true}
	register(t, store, i)
	for n := range 3 {
		if n > 0 {
			time.Sleep(300 * time.Millisecond) // past the instance's idle timeout
		}
		r := send(t, "POST", base+"/vault/p", fmt.Sprint(n))
		if r.status != 200 {
			t.Fatalf("POST %d after the instance closed its idle connection: %d %q", n, r.status, r.body)
		}
	}
}
