package replication_test

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/eurekagate/eurekagate/discovery"
	"github.com/eurekagate/eurekagate/eureka"
	"github.com/eurekagate/eurekagate/internal/testkit"
	"github.com/eurekagate/eurekagate/registry"
	"github.com/eurekagate/eurekagate/registry/httpapi"
	"github.com/eurekagate/eurekagate/registry/replication"
)

// node is one registry of a loopback cluster.
type node struct {
	store *registry.Store
	srv   *httpapi.Server
	peers *replication.Peers
	addr  string
}

func (n *node) url() string { return "http://" + n.addr + "/eureka/" }

func (n *node) stop(t *testing.T) {
	t.Helper()
	n.peers.Stop()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	n.srv.Stop(ctx)
}

// cluster starts nodes on fixed loopback ports, each with the others as
// peers, all sharing one fake clock.
type cluster struct {
	t     *testing.T
	clock *testkit.FakeClock
	addrs []string
	nodes []*node
	peer  replication.Config
}

func newCluster(t *testing.T, size int, peer replication.Config) *cluster {
	c := &cluster{t: t, clock: testkit.NewFakeClock(), peer: peer}
	for range size {
		c.addrs = append(c.addrs, testkit.FreeAddr(t))
	}
	for n := range size {
		c.nodes = append(c.nodes, c.start(n, true))
	}
	t.Cleanup(func() {
		for _, n := range c.nodes {
			if n != nil {
				n.stop(t)
			}
		}
	})
	return c
}

// start starts node n; with sync, it first copies the registry of a peer.
func (c *cluster) start(n int, sync bool) *node {
	c.t.Helper()
	store := registry.New(registry.Config{Clock: c.clock, DisableSelfPreservation: true})
	cfg := c.peer
	cfg.Self, cfg.Clock = "http://"+c.addrs[n]+"/eureka/", c.clock
	for _, a := range c.addrs {
		cfg.Peers = append(cfg.Peers, "http://"+a+"/eureka/")
	}
	peers, err := replication.New(store, cfg)
	if err != nil {
		c.t.Fatal(err)
	}
	if len(peers.Stats()) != len(c.addrs)-1 {
		c.t.Fatalf("node %d replicates to %d peers, want %d: its own URL was not recognised", n, len(peers.Stats()), len(c.addrs)-1)
	}
	if sync {
		peers.SyncFrom(context.Background())
	}
	srv := httpapi.NewServer(httpapi.NewAPI(store, httpapi.APIConfig{Peers: peers}), httpapi.ServerConfig{Addr: c.addrs[n]})
	if err := srv.Start(); err != nil {
		c.t.Fatal(err)
	}
	peers.Start()
	return &node{store: store, srv: srv, peers: peers, addr: c.addrs[n]}
}

func httpDo(t *testing.T, method, url string, body []byte) int {
	t.Helper()
	req, _ := http.NewRequest(method, url, strings.NewReader(string(body)))
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

func TestClusterReplication(t *testing.T) {
	c := newCluster(t, 3, replication.Config{})
	n1, n2, n3 := c.nodes[0], c.nodes[1], c.nodes[2]
	if status := httpDo(t, "POST", n1.url()+"apps/ORDERS", eureka.AppendInstanceJSON(nil, testkit.Inst("ORDERS", "x"))); status != 204 {
		t.Fatalf("register: %d", status)
	}
	testkit.Eventually(t, time.Second, "the registration on nodes 2 and 3", func() bool {
		_, ok2 := n2.store.Get("ORDERS", "x")
		_, ok3 := n3.store.Get("ORDERS", "x")
		return ok2 && ok3
	})

	// Heartbeats sent only to node 1 keep the lease alive on all three,
	// past its 90 s duration.
	for range 3 {
		c.clock.Advance(60 * time.Second)
		if status := httpDo(t, "PUT", n1.url()+"apps/ORDERS/x", nil); status != 200 {
			t.Fatalf("heartbeat: %d", status)
		}
		renewed := c.clock.Now().UnixMilli()
		testkit.Eventually(t, 2*time.Second, "the heartbeat on nodes 2 and 3", func() bool {
			i2, _ := n2.store.Get("ORDERS", "x")
			i3, _ := n3.store.Get("ORDERS", "x")
			return i2 != nil && i3 != nil && i2.LeaseInfo.LastRenewalTimestamp == renewed && i3.LeaseInfo.LastRenewalTimestamp == renewed
		})
		for _, n := range c.nodes {
			if ev := n.store.Evict(); len(ev) > 0 {
				t.Fatalf("evicted %v despite heartbeats", ev)
			}
		}
	}

	// A status override propagates, and so does its removal.
	if status := httpDo(t, "PUT", n1.url()+"apps/ORDERS/x/status?value=OUT_OF_SERVICE", nil); status != 200 {
		t.Fatalf("override: %d", status)
	}
	testkit.Eventually(t, 2*time.Second, "the override on nodes 2 and 3", func() bool {
		i2, _ := n2.store.Get("ORDERS", "x")
		i3, _ := n3.store.Get("ORDERS", "x")
		return i2.Status == eureka.StatusOutOfService && i3.Status == eureka.StatusOutOfService
	})
	httpDo(t, "DELETE", n1.url()+"apps/ORDERS/x/status?value=UP", nil)
	testkit.Eventually(t, 2*time.Second, "the override removal on nodes 2 and 3", func() bool {
		i2, _ := n2.store.Get("ORDERS", "x")
		i3, _ := n3.store.Get("ORDERS", "x")
		return i2.Status == eureka.StatusUp && i3.Status == eureka.StatusUp && len(n3.store.Overrides()) == 0
	})

	// A cancel propagates.
	if status := httpDo(t, "DELETE", n1.url()+"apps/ORDERS/x", nil); status != 200 {
		t.Fatalf("cancel: %d", status)
	}
	testkit.Eventually(t, 2*time.Second, "the cancel on nodes 2 and 3", func() bool {
		_, ok2 := n2.store.Get("ORDERS", "x")
		_, ok3 := n3.store.Get("ORDERS", "x")
		return !ok2 && !ok3
	})
	// The status endpoint reports each peer's replication state.
	req, _ := http.NewRequest("GET", n1.url()+"status", nil)
	req.Header.Set("Accept", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var status httpapi.StatusInfo
	err = json.NewDecoder(resp.Body).Decode(&status)
	resp.Body.Close()
	if err != nil || len(status.Peers) != 2 || status.Peers[0].BatchesSent == 0 ||
		!strings.Contains(status.ApplicationStats["available-replicas"], n2.addr) {
		t.Errorf("status peers: %v %+v %v", err, status.Peers, status.ApplicationStats)
	}

	// Replicated writes are not replicated again, and evictions never.
	for _, n := range c.nodes {
		for _, ps := range n.peers.Stats() {
			if ps.QueueLength != 0 {
				t.Errorf("%s still queues %d tasks", ps.URL, ps.QueueLength)
			}
		}
	}
}

func TestRestartedNodeSyncsBeforeServing(t *testing.T) {
	c := newCluster(t, 3, replication.Config{})
	for k := range 20 {
		testkit.MustRegister(t, c.nodes[0].store, testkit.Inst("APP"+string(rune('A'+k%3)), "i"+string(rune('a'+k))), false)
	}
	testkit.Eventually(t, 2*time.Second, "replication to node 2", func() bool { return c.nodes[1].store.Len() == 20 })
	c.nodes[1].stop(t)
	c.nodes[1] = c.start(1, true)
	// Reads are answered from the synced registry at once.
	if got := c.nodes[1].store.Len(); got != 20 {
		t.Fatalf("restarted node holds %d of 20 instances", got)
	}
	if sp := c.nodes[1].store.Stats().SelfPreservation(); sp.ExpectedRenewingClients != 20 {
		t.Errorf("expected renewing clients after sync = %d, want 20", sp.ExpectedRenewingClients)
	}
	// And no registration was lost anywhere.
	for n, node := range c.nodes {
		if node.store.Len() != 20 {
			t.Errorf("node %d holds %d", n+1, node.store.Len())
		}
	}
}

func TestPeerDownThenBack(t *testing.T) {
	c := newCluster(t, 2, replication.Config{MaxQueue: 500})
	n1 := c.nodes[0]
	c.nodes[1].stop(t)
	c.nodes[1] = nil

	// The peer is down: writers are not blocked and the queue stays bounded.
	for k := range 2000 {
		testkit.MustRegister(t, n1.store, testkit.SampleInstance(k), false)
		if q := n1.peers.Stats()[0].QueueLength; q > 500 {
			t.Fatalf("queue grew to %d", q)
		}
	}
	testkit.Eventually(t, 2*time.Second, "failed deliveries to be counted", func() bool { return n1.peers.Stats()[0].Failures > 0 })
	ps := n1.peers.Stats()[0]
	if !ps.Down || ps.Dropped < 1500 {
		t.Fatalf("stats while down: %+v", ps)
	}
	// A minute later every queued task is stale.
	c.clock.Advance(time.Minute)

	// The peer returns empty. Heartbeats to node 1 reach it as unknown
	// instances (404), and node 1 answers with registrations.
	back := c.start(1, false)
	c.nodes[1] = back
	testkit.Eventually(t, 2*time.Second, "stale tasks dropped", func() bool { return n1.peers.Stats()[0].QueueLength == 0 })
	for k := range 5 {
		i := testkit.SampleInstance(k)
		if res, _ := n1.store.Renew(i.App, i.InstanceID, registry.RenewRequest{}); res != registry.RenewOK {
			t.Fatal(res)
		}
	}
	testkit.Eventually(t, 3*time.Second, "the returned peer to converge", func() bool {
		for k := range 5 {
			i := testkit.SampleInstance(k)
			if _, ok := back.store.Get(i.App, i.InstanceID); !ok {
				return false
			}
		}
		return true
	})
	if ps := n1.peers.Stats()[0]; ps.Down {
		t.Errorf("peer still reported down: %+v", ps)
	}
}

// A heartbeat older than the peer's copy is answered 409 with the peer's
// instance, which the sender adopts without replicating it back.
func TestConflictAdoptsPeersNewerCopy(t *testing.T) {
	c := newCluster(t, 2, replication.Config{})
	n1, n2 := c.nodes[0], c.nodes[1]
	old := testkit.Inst("A", "x")
	old.LastDirtyTimestamp = 1000
	testkit.MustRegister(t, n1.store, old, false)
	testkit.Eventually(t, time.Second, "replication", func() bool { _, ok := n2.store.Get("A", "x"); return ok })
	newer := testkit.Inst("A", "x")
	newer.LastDirtyTimestamp, newer.HostName = 2000, "moved.local"
	testkit.MustRegister(t, n2.store, newer, true) // as if node 2 had it from elsewhere
	n1.store.Renew("A", "x", registry.RenewRequest{})
	testkit.Eventually(t, 2*time.Second, "node 1 to adopt node 2's newer copy", func() bool {
		i, _ := n1.store.Get("A", "x")
		return i.HostName == "moved.local"
	})
}

func TestSelfRecognised(t *testing.T) {
	s := registry.New(registry.Config{})
	p, err := replication.New(s, replication.Config{
		Peers:     []string{"http://a:8761/eureka", "http://me:8761/eureka/", "http://b:8761/eureka/", "http://127.0.0.1:9/eureka/"},
		Self:      "http://me:8761/eureka/",
		SelfAddrs: []string{"127.0.0.1:9"},
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := len(p.Stats()); got != 2 {
		t.Fatalf("peers = %d, want a and b", got)
	}
	if _, err := replication.New(s, replication.Config{Peers: []string{"ftp://x"}}); err == nil {
		t.Error("bad peer URL accepted")
	}
}

// A peer that accepts connections but never answers cannot hold the
// start-up sync past its deadline.
func TestSyncFromRespectsDeadline(t *testing.T) {
	silent, err := net.Listen("tcp", "127.0.0.1:0") // never accepts: requests hang
	if err != nil {
		t.Fatal(err)
	}
	defer silent.Close()
	s := registry.New(registry.Config{})
	p, err := replication.New(s, replication.Config{Peers: []string{"http://" + silent.Addr().String() + "/eureka/"}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 400*time.Millisecond)
	defer cancel()
	start := time.Now()
	if n := p.SyncFrom(ctx); n != 0 {
		t.Fatalf("synced %d from a silent peer", n)
	}
	if took := time.Since(start); took > 2*time.Second {
		t.Fatalf("sync took %v past a 400ms deadline", took)
	}
	p.Stop()
}

// A write on node 1 reaches a client watching node 3 through replication
// and the watch, within seconds, with default client settings.
func TestWriteOnOneNodeReachesAWatcherOnAnother(t *testing.T) {
	c := newCluster(t, 3, replication.Config{})
	client, err := discovery.New(discovery.Config{ServiceURLs: []string{c.nodes[2].url()}})
	if err != nil {
		t.Fatal(err)
	}
	client.Start()
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		client.Stop(ctx)
	}()
	<-client.Ready()
	for k := range 5 {
		id := "w" + string(rune('a'+k))
		if status := httpDo(t, "POST", c.nodes[0].url()+"apps/ORDERS", eureka.AppendInstanceJSON(nil, testkit.Inst("ORDERS", id))); status != 204 {
			t.Fatalf("register: %d", status)
		}
		testkit.Eventually(t, 5*time.Second, id+" on the watcher of node 3", func() bool {
			for _, i := range client.Instances("ORDERS") {
				if i.ID() == id {
					return true
				}
			}
			return false
		})
	}
}

// One node is cut off (its server stopped, its state and senders kept)
// while instances are cancelled on another; the cancel tasks for it expire
// meanwhile. When it comes back, heartbeats of the cancelled instances are
// still pending there (as in a paused process's sockets): it renews them
// and replicates them. No other node ever serves a cancelled instance
// again, and the node drops them within seconds.
func TestNothingCancelledComesBack(t *testing.T) {
	c := newCluster(t, 3, replication.Config{CancelTTL: time.Second, TaskTTL: time.Second})
	n1, n2, n3 := c.nodes[0], c.nodes[1], c.nodes[2]
	var ids []string
	for k := range 10 {
		id := "i" + strconv.Itoa(k)
		ids = append(ids, id)
		testkit.MustRegister(t, n1.store, testkit.Inst("ORDERS", id), false)
	}
	testkit.Eventually(t, 5*time.Second, "registrations everywhere", func() bool { return n2.store.Len() == 10 && n3.store.Len() == 10 })

	// Cut node 3 off and cancel half the instances on node 1.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	n3.srv.Stop(ctx)
	cancelled := ids[:5]
	for _, id := range cancelled {
		if !n1.store.Cancel("ORDERS", id, false) {
			t.Fatal("cancel failed")
		}
	}
	testkit.Eventually(t, 5*time.Second, "the cancels on node 2", func() bool { return n2.store.Len() == 5 })
	// The cancels for node 3 wait, then expire: node 3 never hears of them.
	testkit.Eventually(t, 5*time.Second, "node 1 to try node 3", func() bool {
		for _, ps := range n1.peers.Stats() {
			if strings.Contains(ps.URL, n3.addr) && ps.Failures > 0 {
				return true
			}
		}
		return false
	})
	c.clock.Advance(time.Minute)

	// Node 3 comes back and processes the heartbeats it held.
	n3.srv = httpapi.NewServer(httpapi.NewAPI(n3.store, httpapi.APIConfig{}), httpapi.ServerConfig{Addr: n3.addr})
	if err := n3.srv.Start(); err != nil {
		t.Fatal(err)
	}
	for _, id := range ids {
		n3.store.Renew("ORDERS", id, registry.RenewRequest{})
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		for _, n := range []*node{n1, n2} {
			for _, id := range cancelled {
				if _, ok := n.store.Get("ORDERS", id); ok {
					t.Fatalf("%s came back on %s", id, n.addr)
				}
			}
		}
		gone := 0
		for _, id := range cancelled {
			if _, ok := n3.store.Get("ORDERS", id); !ok {
				gone++
			}
		}
		if gone == len(cancelled) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("node 3 still holds %d cancelled instances", len(cancelled)-gone)
		}
		time.Sleep(10 * time.Millisecond)
	}
	// The live instances are untouched everywhere.
	for _, n := range c.nodes {
		if n.store.Len() != 5 {
			t.Errorf("%s holds %d instances, want 5", n.addr, n.store.Len())
		}
	}
}

// Every node gets the same peer list, naming itself too (once as
// localhost), and no self URL: each recognises itself by its identity and
// never replicates to itself, whether it learns so in the start-up sync or
// before its first batch.
func TestSelfRecognisedByIdentity(t *testing.T) {
	addrs := []string{testkit.FreeAddr(t), testkit.FreeAddr(t), testkit.FreeAddr(t)}
	urls := []string{"http://" + addrs[0] + "/eureka/", "http://" + strings.Replace(addrs[1], "127.0.0.1", "localhost", 1) + "/eureka/",
		"http://" + addrs[2] + "/eureka/"}
	var stores []*registry.Store
	for n, addr := range addrs {
		store := registry.New(registry.Config{DisableSelfPreservation: true})
		peers, err := replication.New(store, replication.Config{Peers: urls})
		if err != nil {
			t.Fatal(err)
		}
		srv := httpapi.NewServer(httpapi.NewAPI(store, httpapi.APIConfig{Peers: peers}), httpapi.ServerConfig{Addr: addr})
		if err := srv.Start(); err != nil {
			t.Fatal(err)
		}
		if n != 2 { // node 3 learns who it is before its first batch instead
			peers.SyncFrom(context.Background())
		}
		peers.Start()
		t.Cleanup(func() { peers.Stop(); srv.Stop(context.Background()) })
		stores = append(stores, store)
	}
	for n, store := range stores {
		testkit.MustRegister(t, store, testkit.Inst("A", "x"+strconv.Itoa(n)), false)
	}
	testkit.Eventually(t, 5*time.Second, "every registration on every node", func() bool {
		return stores[0].Len() == 3 && stores[1].Len() == 3 && stores[2].Len() == 3
	})
	for n, store := range stores {
		store.Renew("A", "x"+strconv.Itoa(n), registry.RenewRequest{})
	}
	testkit.Eventually(t, 5*time.Second, "the heartbeats replicated", func() bool {
		for _, s := range stores {
			if s.Stats().Totals().Renewals != 3 {
				return false
			}
		}
		return true
	})
	time.Sleep(100 * time.Millisecond) // a heartbeat sent to itself would land within this
	for n, s := range stores {
		// One heartbeat of its own, two from the peers: a node that
		// replicated to itself would count its own twice.
		if got := s.Stats().Totals().Renewals; got != 3 {
			t.Errorf("node %d counted %d renewals, want 3", n+1, got)
		}
	}
}

// A malformed self URL is refused.
func TestMalformedSelfURLRefused(t *testing.T) {
	_, err := replication.New(registry.New(registry.Config{}), replication.Config{Peers: []string{"http://a:1/eureka/"}, Self: "http://bad host:8761/eureka/"})
	if err == nil || !strings.Contains(err.Error(), "self URL") {
		t.Fatalf("malformed self URL: %v", err)
	}
}

// A single task over the batch limit is dropped unsent, as one the peer
// refuses, and does not hold the tasks behind it: sent, it would get the
// peer's reset rather than its 413, again and again until it expired.
func TestTaskOverTheBatchLimitDropped(t *testing.T) {
	const limit = 256 << 10
	addr := testkit.FreeAddr(t)
	peerStore := registry.New(registry.Config{})
	srv := httpapi.NewServer(httpapi.NewAPI(peerStore, httpapi.APIConfig{MaxBatchBytes: limit}), httpapi.ServerConfig{Addr: addr})
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Stop(context.Background()) })
	store := registry.New(registry.Config{})
	peers, err := replication.New(store, replication.Config{Peers: []string{"http://" + addr + "/eureka/"}, MaxBatchBytes: limit, MaxBatchDelay: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	peers.Start()
	t.Cleanup(peers.Stop)
	huge := testkit.Inst("HUGE", "h")
	huge.Metadata = map[string]string{"blob": strings.Repeat("v", 32<<20)} // larger than the buffers
	testkit.MustRegister(t, store, huge, false)
	for k := range 5 {
		testkit.MustRegister(t, store, testkit.Inst("SMALL", "s"+strconv.Itoa(k)), false)
	}
	testkit.Eventually(t, 10*time.Second, "the small registrations on the peer", func() bool { return peerStore.Len() == 5 })
	testkit.Eventually(t, 5*time.Second, "the huge one dropped", func() bool { return peers.Stats()[0].Dropped == 1 })
}

// 250 registrations of metadata-heavy instances replicate whole: the
// batch endpoint has its own limit, and a sender splits a batch the peer
// finds too large (413) instead of dropping it, and one over its own
// MaxBatchBytes before sending it: the peer answers a batch over its
// limit before reading it, so one larger than the connection's buffers
// gets a reset rather than the 413, and would never arrive.
func TestHeavyRegistrationsReplicate(t *testing.T) {
	for _, c := range []struct {
		name             string
		limit, senderCap int64
		value            int // bytes of each of an instance's 60 metadata values
	}{
		{"default limits", 0, 0, 64},
		{"a peer's small limit: split after its 413", 256 << 10, 0, 64},
		{"a 15 MB batch: split before it is sent", 256 << 10, 256 << 10, 1000},
	} {
		t.Run(c.name, func(t *testing.T) {
			addrs := []string{testkit.FreeAddr(t), testkit.FreeAddr(t)}
			var stores []*registry.Store
			var peerList []*replication.Peers
			for n, addr := range addrs {
				store := registry.New(registry.Config{})
				peers, err := replication.New(store, replication.Config{Peers: []string{"http://" + addrs[1-n] + "/eureka/"}, MaxBatchDelay: 50 * time.Millisecond, MaxBatchBytes: c.senderCap})
				if err != nil {
					t.Fatal(err)
				}
				srv := httpapi.NewServer(httpapi.NewAPI(store, httpapi.APIConfig{MaxBatchBytes: c.limit}), httpapi.ServerConfig{Addr: addr})
				if err := srv.Start(); err != nil {
					t.Fatal(err)
				}
				peers.Start()
				t.Cleanup(func() { peers.Stop(); srv.Stop(context.Background()) })
				stores, peerList = append(stores, store), append(peerList, peers)
			}
			for k := range 250 {
				i := testkit.Inst("HEAVY", "h"+strconv.Itoa(k))
				i.Metadata = map[string]string{}
				for m := range 60 {
					i.Metadata["key-"+strconv.Itoa(m)] = strings.Repeat("v", c.value)
				}
				testkit.MustRegister(t, stores[0], i, false)
			}
			testkit.Eventually(t, 20*time.Second, "250 heavy registrations on the peer", func() bool { return stores[1].Len() == 250 })
			// A batch of 1.2 MB sent whole may still be reset before its
			// 413 reaches the sender, and is sent again; one split first
			// never fails.
			if ps := peerList[0].Stats()[0]; ps.Dropped != 0 || c.senderCap != 0 && ps.Failures != 0 {
				t.Errorf("%d tasks dropped, %d batches failed", ps.Dropped, ps.Failures)
			}
		})
	}
}
