package caddymodule

import (
	"encoding/json"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/eurekagate/eurekagate/internal/registrytest"
	"github.com/eurekagate/eurekagate/internal/testkit"
	"github.com/eurekagate/eurekagate/registry"
	"github.com/eurekagate/eurekagate/registry/httpapi"
)

// A reload that changes peers applies them to the running registry, as
// the DNS records' change does in cmd/eureka's process test: from three
// nodes to four and to two. The registry keeps every registration, no
// gateway request fails meanwhile, a peer that joins gets the writes
// made from then on and one that leaves gets none.
func TestPeersChangeByReload(t *testing.T) {
	name := newRegistry("peers-reload")
	var others []*registrytest.Server
	for range 3 {
		others = append(others, registrytest.Start(t, registry.New(registry.Config{}), httpapi.ServerConfig{Addr: "127.0.0.1:0"}))
	}
	n2, n3, n4 := others[0], others[1], others[2]
	config := func(peers ...*registrytest.Server) string {
		var urls []string
		for _, p := range peers {
			urls = append(urls, p.URL())
		}
		return graceful("registry "+name+"\n\t\tpeers "+strings.Join(urls, " "), "")
	}
	holds := func(s *registrytest.Server, ids ...string) bool {
		for _, id := range ids {
			if _, ok := s.Store.Get("ORDERS", id); !ok {
				return false
			}
		}
		return true
	}
	replicas := func(want ...*registrytest.Server) {
		t.Helper()
		var urls []string
		for _, p := range want {
			urls = append(urls, p.URL())
		}
		slices.Sort(urls)
		testkit.Eventually(t, 5*time.Second, "the registry's replicas to be "+strings.Join(urls, ", "), func() bool {
			_, body := get(t, registryURL+"status", "Accept", "application/json")
			var doc struct {
				ApplicationStats map[string]string `json:"applicationStats"`
			}
			json.Unmarshal([]byte(body), &doc)
			got := strings.Split(doc.ApplicationStats["registered-replicas"], ", ")
			slices.Sort(got)
			return slices.Equal(got, urls)
		})
	}

	loadConfig(t, config(n2, n3))
	registerVia(t, registryURL, newBackend(t, "a").instance("orders"))
	registerVia(t, registryURL, newBackend(t, "b").instance("orders"))
	testkit.Eventually(t, 5*time.Second, "a and b on the two peers", func() bool { return holds(n2, "a", "b") && holds(n3, "a", "b") })
	replicas(n2, n3)

	var failed, sent atomic.Int64
	stop := testkit.Loop(4, func(int) {
		status, body := getWith(keepAlive, gatewayURL+"/orders/x")
		sent.Add(1)
		if status != 200 {
			failed.Add(1)
			t.Errorf("during the reloads: %d %q", status, body)
		}
	})
	defer stop()
	testkit.Eventually(t, 5*time.Second, "load running", func() bool { return sent.Load() > 20 })

	reloaded := time.Now()
	loadConfig(t, config(n2, n3, n4))
	replicas(n2, n3, n4)
	t.Logf("four nodes: replicating to the new peer %v after the reload began", time.Since(reloaded).Round(time.Millisecond))
	registerVia(t, registryURL, newBackend(t, "c").instance("orders"))
	testkit.Eventually(t, 5*time.Second, "c on the three peers", func() bool { return holds(n2, "c") && holds(n3, "c") && holds(n4, "c") })

	reloaded = time.Now()
	loadConfig(t, config(n4))
	replicas(n4)
	t.Logf("two nodes: replicating to the remaining peer alone %v after the reload began", time.Since(reloaded).Round(time.Millisecond))
	registerVia(t, registryURL, newBackend(t, "d").instance("orders"))
	testkit.Eventually(t, 5*time.Second, "d on the remaining peer", func() bool { return holds(n4, "d") })
	if holds(n2, "d") || holds(n3, "d") {
		t.Error("a peer that left got a write made after it left")
	}
	stop()
	_, metrics := do(t, "GET", adminURL+"/metrics", nil)
	if !strings.Contains(metrics, `caddy_eureka_peer_queue_length{peer="`+n4.URL()+`"}`) || strings.Contains(metrics, n2.URL()) || strings.Contains(metrics, n3.URL()) {
		t.Errorf("/metrics does not follow the members:\n%s", grepLines(metrics, "caddy_eureka_peer"))
	}
	if status, body := get(t, registryURL+"apps/ORDERS"); status != 200 || !containsAll(body, "a", "b", "c", "d") {
		t.Errorf("the registry after the reloads: %d %s", status, body)
	}
	t.Logf("%d gateway requests during the reloads, %d failed", sent.Load(), failed.Load())
}

// grepLines returns the lines of text that contain s.
func grepLines(text, s string) string {
	var out []string
	for _, l := range strings.Split(text, "\n") {
		if strings.Contains(l, s) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// Peers from DNS in Caddy: peers_dns's SRV records, looked up at
// dns_resolver every peers_resolve_interval, are the registry's peers,
// and it follows their change.
func TestPeersDNSInCaddy(t *testing.T) {
	name := newRegistry("peers-dns")
	dns := testkit.NewDNS(t)
	n2 := registrytest.Start(t, registry.New(registry.Config{}), httpapi.ServerConfig{Addr: "127.0.0.1:0"})
	n3 := registrytest.Start(t, registry.New(registry.Config{}), httpapi.ServerConfig{Addr: "127.0.0.1:0"})
	srv := func(s *registrytest.Server) string {
		_, port, _ := strings.Cut(s.Addr, ":")
		return "localhost:" + port
	}
	dns.SetSRV("eureka-peers.test", srv(n2))
	loadConfig(t, graceful("registry "+name+"\n\t\tpeers_dns srv://eureka-peers.test/eureka/\n\t\tdns_resolver "+dns.Addr()+
		"\n\t\tpeers_resolve_interval 100ms", ""))
	registerVia(t, registryURL, newBackend(t, "a").instance("orders"))
	testkit.Eventually(t, 5*time.Second, "a on the peer the SRV record names", func() bool {
		_, ok := n2.Store.Get("ORDERS", "a")
		return ok
	})
	dns.SetSRV("eureka-peers.test", srv(n3))
	testkit.Eventually(t, 5*time.Second, "the registry replicating to the SRV record's new target alone", func() bool {
		_, body := get(t, registryURL+"status", "Accept", "application/json")
		return strings.Contains(body, `"registered-replicas":"http://`+srv(n3)+`/eureka/"`)
	})
	registerVia(t, registryURL, newBackend(t, "b").instance("orders"))
	testkit.Eventually(t, 5*time.Second, "b on the new target", func() bool {
		_, ok := n3.Store.Get("ORDERS", "b")
		return ok
	})
	if _, ok := n2.Store.Get("ORDERS", "b"); ok {
		t.Error("the old target got a write made after the record moved")
	}
}

func containsAll(body string, ids ...string) bool {
	for _, id := range ids {
		if !strings.Contains(body, "<instanceId>"+id+"</instanceId>") {
			return false
		}
	}
	return true
}

// The peers' DNS options are refused with the option, the value and the
// reason: in a Caddyfile with its line, in JSON when provisioned.
func TestPeersDNSConfigErrors(t *testing.T) {
	expectCaddyfileErrors(t, []caddyfileError{
		{"peers_dns scheme", withEurekaOptions("\t\tpeers_dns ftp://eureka-peers:8761/eureka/\n"),
			[]string{`peer DNS name "ftp://eureka-peers:8761/eureka/"`, "srv://NAME/eureka/", "Caddyfile:3"}},
		{"peers_dns without a name", withEurekaOptions("\t\tpeers_dns\n"),
			[]string{"peers_dns needs at least one DNS name", "Caddyfile:3"}},
		{"peers_dns srv with a port", withEurekaOptions("\t\tpeers_dns srv://eureka-peers:8761/eureka/\n"),
			[]string{"an SRV record gives the port", "Caddyfile:3"}},
		{"dns_resolver", withEurekaOptions("\t\tpeers_dns http://eureka-peers:8761/eureka/\n\t\tdns_resolver 10.96.0.10\n"),
			[]string{`dns_resolver "10.96.0.10"`, "host:port", "Caddyfile:4"}},
		{"peers_resolve_interval", withEurekaOptions("\t\tpeers_dns http://eureka-peers:8761/eureka/\n\t\tpeers_resolve_interval 0s\n"),
			[]string{"peers_resolve_interval 0s", "default, 30s", "Caddyfile:4"}},
	})
	expectAppErrors(t, []appError{
		{`{"registry":"json-peers-1","peers_dns":["http://10.0.0.1:8761/eureka/"]}`, []string{"peers_dns", "an address, not a DNS name"}},
		{`{"registry":"json-peers-2","dns_resolver":"127.0.0.1:53"}`, []string{"dns_resolver", "peers_dns, which is not set"}},
		{`{"registry":"json-peers-3","peers_dns":["http://eureka-peers:8761/eureka/"],"peers_resolve_interval":-1000000000}`, []string{"peers_resolve_interval -1s"}},
		{`{"remote":["http://e:8761/eureka/"],"peers_dns":["http://eureka-peers:8761/eureka/"]}`, []string{"peers_dns", "remote"}},
	})
}
