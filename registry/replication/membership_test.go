package replication_test

import (
	"context"
	"encoding/base64"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/eurekagate/eurekagate/eureka"
	"github.com/eurekagate/eurekagate/internal/testkit"
	"github.com/eurekagate/eurekagate/registry"
	"github.com/eurekagate/eurekagate/registry/httpapi"
	"github.com/eurekagate/eurekagate/registry/replication"
)

// dnsNode starts a registry on addr whose peers come from cfg (its
// PeersDNS), synced and replicating, stopped when the test ends.
func dnsNode(t *testing.T, addr string, cfg replication.Config) *node {
	t.Helper()
	store := registry.New(registry.Config{DisableSelfPreservation: true})
	peers, err := replication.New(store, cfg)
	if err != nil {
		t.Fatal(err)
	}
	srv := httpapi.NewServer(httpapi.NewAPI(store, httpapi.APIConfig{Peers: peers, Ready: peers.Synced()}), httpapi.ServerConfig{Addr: addr})
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	peers.Start()
	peers.SyncFrom(context.Background())
	n := &node{store: store, srv: srv, peers: peers, addr: addr}
	t.Cleanup(func() { n.stop(t) })
	return n
}

func peerURLs(n *node) []string {
	var out []string
	for _, s := range n.peers.Stats() {
		out = append(out, s.URL)
	}
	slices.Sort(out)
	return out
}

func register(t *testing.T, n *node, app, id string) {
	t.Helper()
	if st := httpDo(t, "POST", n.url()+"apps/"+app, eureka.AppendInstanceJSON(nil, testkit.Inst(app, id))); st != 204 {
		t.Fatalf("register %s/%s on %s: %d", app, id, n.addr, st)
	}
}

func holds(n *node, app, id string) bool {
	_, ok := n.store.Get(app, id)
	return ok
}

// A cluster whose peers are a DNS name's A records follows the records:
// each node leaves itself out, a node the records add gets the writes
// made from then on within the re-resolve interval, and one they drop
// gets no more.
func TestPeersFollowDNSRecords(t *testing.T) {
	dns := testkit.NewDNS(t)
	ips := []string{"127.0.0.2", "127.0.0.3", "127.0.0.4"}
	port := testkit.FreePortOn(t, ips...)
	addr := func(ip string) string { return net.JoinHostPort(ip, strconv.Itoa(port)) }
	base := func(ip string) string { return "http://" + addr(ip) + "/eureka/" }
	dns.SetA("eureka-peers.test", ips[0], ips[1])
	cfg := replication.Config{PeersDNS: []string{fmt.Sprintf("http://eureka-peers.test:%d/eureka/", port)},
		DNSResolver: dns.Addr(), ResolveInterval: 100 * time.Millisecond}

	n1, n2 := dnsNode(t, addr(ips[0]), cfg), dnsNode(t, addr(ips[1]), cfg)
	register(t, n1, "ORDERS", "o1")
	testkit.Eventually(t, 5*time.Second, "o1 on node 2", func() bool { return holds(n2, "ORDERS", "o1") })
	testkit.Eventually(t, 5*time.Second, "node 1 replicating to node 2 alone (itself left out)", func() bool {
		return slices.Equal(peerURLs(n1), []string{base(ips[1])})
	})

	dns.SetA("eureka-peers.test", ips...)
	n3 := dnsNode(t, addr(ips[2]), cfg)
	if !holds(n3, "ORDERS", "o1") {
		t.Error("node 3 did not sync o1 at its start")
	}
	testkit.Eventually(t, 5*time.Second, "nodes 1 and 2 replicating to node 3", func() bool {
		return slices.Contains(peerURLs(n1), base(ips[2])) && slices.Contains(peerURLs(n2), base(ips[2]))
	})
	register(t, n2, "ORDERS", "o2")
	testkit.Eventually(t, 5*time.Second, "o2 on nodes 1 and 3", func() bool { return holds(n1, "ORDERS", "o2") && holds(n3, "ORDERS", "o2") })

	dns.SetA("eureka-peers.test", ips[0], ips[2])
	testkit.Eventually(t, 5*time.Second, "node 1 replicating to node 3 alone", func() bool {
		return slices.Equal(peerURLs(n1), []string{base(ips[2])})
	})
	register(t, n1, "ORDERS", "o3")
	testkit.Eventually(t, 5*time.Second, "o3 on node 3", func() bool { return holds(n3, "ORDERS", "o3") })
	testkit.Eventually(t, 5*time.Second, "node 3 no longer replicating to node 2", func() bool {
		return !slices.Contains(peerURLs(n3), base(ips[1]))
	})
	if holds(n2, "ORDERS", "o3") {
		t.Error("node 2, dropped from the records, got o3")
	}
}

// A connection that fails has the names looked up at once, not after the
// interval (an hour here): the SRV record moved to where the peer is.
func TestPeersLookedUpAgainOnConnectFailure(t *testing.T) {
	dns := testkit.NewDNS(t)
	dead := testkit.FreePort(t)
	dns.SetSRV("eureka-peers.test", "localhost:"+strconv.Itoa(dead))
	live := testkit.FreeAddr(t)
	cfg := replication.Config{PeersDNS: []string{"srv://eureka-peers.test/eureka/"}, DNSResolver: dns.Addr(), ResolveInterval: time.Hour}
	a := dnsNode(t, testkit.FreeAddr(t), cfg)
	b := dnsNode(t, live, replication.Config{})
	register(t, a, "ORDERS", "o1")
	testkit.Eventually(t, 5*time.Second, "a failed batch to the dead peer, and the look-ups of the start done", func() bool {
		s := a.peers.Stats()
		return len(s) == 1 && s[0].Failures > 0 && dns.Queries("eureka-peers.test", "SRV") >= 2 // the sync's and the loop's
	})
	_, livePort, _ := net.SplitHostPort(live)
	dns.SetSRV("eureka-peers.test", "localhost:"+livePort)
	// The write made before the move reaches the peer by the instance's
	// next heartbeat, answered 404 and repaired with a registration.
	testkit.Eventually(t, 10*time.Second, "replicating to the moved peer", func() bool {
		s := a.peers.Stats()
		return len(s) == 1 && s[0].URL == "http://localhost:"+livePort+"/eureka/"
	})
	if st := httpDo(t, "PUT", a.url()+"apps/ORDERS/o1", nil); st != 200 {
		t.Fatalf("heartbeat: %d", st)
	}
	testkit.Eventually(t, 5*time.Second, "o1 on the moved peer", func() bool { return holds(b, "ORDERS", "o1") })
}

// SetPeers drops a peer that leaves with its queue, counted, and stops its
// sender; a refused change leaves the members as they were.
func TestSetPeersDropsTheQueueOfAPeerThatLeaves(t *testing.T) {
	down := "http://" + testkit.FreeAddr(t) + "/eureka/"
	a := dnsNode(t, testkit.FreeAddr(t), replication.Config{Peers: []string{down}})
	for n := range 3 {
		register(t, a, "ORDERS", "o"+strconv.Itoa(n))
	}
	testkit.Eventually(t, 5*time.Second, "three tasks queued for the down peer", func() bool {
		s := a.peers.Stats()
		return len(s) == 1 && s[0].QueueLength == 3 && s[0].Failures > 0
	})
	if err := a.peers.SetPeers([]string{"ftp://x"}, nil); err == nil {
		t.Error("SetPeers took a URL that does not parse")
	}
	if err := a.peers.SetPeers(nil, []string{"http://10.0.0.1:8761/eureka/"}); err == nil {
		t.Error("SetPeers took an address as a DNS name")
	}
	if got := peerURLs(a); !slices.Equal(got, []string{down}) {
		t.Fatalf("after refused changes the peers are %v, want %v", got, []string{down})
	}
	if err := a.peers.SetPeers(nil, nil); err != nil {
		t.Fatal(err)
	}
	if got := a.peers.Stats(); len(got) != 0 {
		t.Errorf("after SetPeers(none) the peers are %v", got)
	}
	if got := a.peers.LeftDropped(); got != 3 {
		t.Errorf("LeftDropped = %d, want the 3 queued tasks", got)
	}
}

// New credentials for a peer's URL take effect: the peer is replaced by
// one that sends them.
func TestSetPeersWithNewCredentials(t *testing.T) {
	var mu sync.Mutex
	var auth []string
	peer := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case strings.HasSuffix(r.URL.Path, "/peerreplication/batch/"):
			mu.Lock()
			auth = append(auth, r.Header.Get("Authorization"))
			mu.Unlock()
		case strings.HasSuffix(r.URL.Path, "/apps/"):
			w.Header().Set("Content-Type", "application/json")
			w.Write(eureka.AppendApplicationsJSON(nil, &eureka.Applications{})) // empty: a new cluster
		}
	}))
	defer peer.Close()
	withUser := func(pw string) string {
		return strings.Replace(peer.URL, "http://", "http://u:"+pw+"@", 1) + "/eureka/"
	}
	a := dnsNode(t, testkit.FreeAddr(t), replication.Config{Peers: []string{withUser("old")}})
	if err := a.peers.SetPeers([]string{withUser("new")}, nil); err != nil {
		t.Fatal(err)
	}
	register(t, a, "ORDERS", "o1")
	testkit.Eventually(t, 5*time.Second, "a batch to the peer", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(auth) > 0
	})
	mu.Lock()
	defer mu.Unlock()
	if want := "Basic " + base64.StdEncoding.EncodeToString([]byte("u:new")); auth[0] != want {
		t.Errorf("the batch's Authorization is %q, want %q", auth[0], want)
	}
}
