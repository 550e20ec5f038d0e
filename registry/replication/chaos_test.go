package replication_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/eurekagate/eurekagate/discovery"
	"github.com/eurekagate/eurekagate/eureka"
	"github.com/eurekagate/eurekagate/internal/testkit"
	"github.com/eurekagate/eurekagate/registry"
	"github.com/eurekagate/eurekagate/registry/httpapi"
	"github.com/eurekagate/eurekagate/registry/replication"
)

// chaosNode is one node of the chaos cluster: killed, it loses its state;
// cut off, it keeps its state and its senders but takes no requests.
type chaosNode struct {
	addr   string
	store  *registry.Store
	peers  *replication.Peers
	srv    *httpapi.Server
	killed bool
}

func (n *chaosNode) up() bool { return n.srv != nil }

// TestChaos: three nodes, twelve instances heartbeating with failover, and
// for ten seconds a random fault or write every ~200 ms: a node killed and
// restarted empty (it syncs from the others), a node cut off and back,
// instances cancelled, status overrides set and removed. At the end every
// node holds exactly the instances that were not cancelled, each with the
// status last set. Leases are 2 s and eviction runs every 500 ms, so an
// instance whose cancel died with a node leaves by eviction, as in Eureka.
func TestChaos(t *testing.T) {
	if testing.Short() {
		t.Skip("runs for about 20 s")
	}
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rnd := rand.New(rand.NewPCG(seed, 7))
	var urls []string
	nodes := make([]*chaosNode, 3)
	for k := range nodes {
		nodes[k] = &chaosNode{addr: testkit.FreeAddr(t)}
		urls = append(urls, "http://"+nodes[k].addr+"/eureka/")
	}
	storeCfg := registry.Config{DisableSelfPreservation: true, EvictionInterval: 500 * time.Millisecond}
	start := func(n *chaosNode, fresh bool) {
		t.Helper()
		if fresh {
			n.store = registry.New(storeCfg)
			p, err := replication.New(n.store, replication.Config{Peers: urls, StartupSyncTimeout: 2 * time.Second})
			if err != nil {
				t.Fatal(err)
			}
			n.peers = p
		}
		n.srv = httpapi.NewServer(httpapi.NewAPI(n.store, httpapi.APIConfig{Peers: n.peers, Ready: n.peers.Synced()}), httpapi.ServerConfig{Addr: n.addr})
		if err := n.srv.Start(); err != nil {
			t.Fatal(err)
		}
		if fresh {
			n.peers.SyncFrom(context.Background())
			n.store.Start()
			n.peers.Start()
		}
	}
	stopServer := func(n *chaosNode) {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		n.srv.Stop(ctx)
		n.srv = nil
	}
	for _, n := range nodes {
		start(n, true)
	}
	defer func() {
		for _, n := range nodes {
			if n.up() {
				stopServer(n)
			}
			n.peers.Stop()
			n.store.Stop()
		}
	}()

	type want struct {
		alive  bool
		status eureka.Status
	}
	wanted := map[string]*want{}
	clients := map[string]*discovery.Client{}
	for k := range 12 {
		id := "c" + strconv.Itoa(k)
		c, err := discovery.New(discovery.Config{
			ServiceURLs: slices.Clone(urls), DisableFetch: true, QuarantineDuration: 200 * time.Millisecond,
			ConnectTimeout: 200 * time.Millisecond, ReadTimeout: time.Second,
			Instance: &discovery.InstanceConfig{AppName: "chaos", InstanceID: id, HostName: "127.0.0.1", IPAddr: "127.0.0.1",
				LeaseRenewalInterval: 100 * time.Millisecond, LeaseDuration: 2 * time.Second},
		})
		if err != nil {
			t.Fatal(err)
		}
		c.Start()
		clients[id] = c
		wanted[id] = &want{alive: true, status: eureka.StatusUp}
	}
	defer func() {
		for _, c := range clients {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			c.Stop(ctx)
			cancel()
		}
	}()
	allUp := func() bool { return nodes[0].up() && nodes[1].up() && nodes[2].up() }
	holds := func(n *chaosNode, id string, st eureka.Status) bool {
		i, ok := n.store.Get("CHAOS", id)
		return ok && i.Status == st
	}

	var log []string
	down := -1 // the node that is down, if any; one at a time
	var downSince time.Time
	for end := time.Now().Add(10 * time.Second); time.Now().Before(end); time.Sleep(time.Duration(100+rnd.IntN(200)) * time.Millisecond) {
		if down >= 0 && time.Since(downSince) > time.Duration(500+rnd.IntN(1500))*time.Millisecond {
			start(nodes[down], nodes[down].killed) // a killed node starts empty and syncs
			nodes[down].killed = false
			log = append(log, fmt.Sprintf("node %d back", down))
			down = -1
			continue
		}
		switch op := rnd.IntN(4); {
		case op == 0 && down < 0: // kill a node: it loses everything
			down, downSince = rnd.IntN(3), time.Now()
			n := nodes[down]
			stopServer(n)
			n.peers.Stop()
			n.store.Stop()
			n.killed = true
			log = append(log, fmt.Sprintf("node %d killed", down))
		case op == 1 && down < 0: // cut a node off: it keeps its state
			down, downSince = rnd.IntN(3), time.Now()
			stopServer(nodes[down])
			log = append(log, fmt.Sprintf("node %d cut off", down))
		case op == 2: // cancel an instance
			var alive []string
			for id, w := range wanted {
				if w.alive {
					alive = append(alive, id)
				}
			}
			if len(alive) <= 4 {
				continue
			}
			slices.Sort(alive)
			id := alive[rnd.IntN(len(alive))]
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
			err := clients[id].Stop(ctx)
			cancel()
			delete(clients, id)
			wanted[id].alive = false
			log = append(log, fmt.Sprintf("%s cancelled (%v)", id, err))
		case op == 3 && allUp(): // an override, set on one node, waited for on all
			id := "c" + strconv.Itoa(rnd.IntN(12))
			if !wanted[id].alive {
				continue
			}
			st := []eureka.Status{eureka.StatusOutOfService, eureka.StatusUp}[rnd.IntN(2)]
			n := nodes[rnd.IntN(3)]
			req, _ := http.NewRequest("PUT", "http://"+n.addr+"/eureka/apps/CHAOS/"+id+"/status?value="+st.String(), nil)
			resp, err := http.DefaultClient.Do(req)
			if err != nil || resp.StatusCode != 200 {
				continue // not registered there yet: no change asked
			}
			resp.Body.Close()
			wanted[id].status = st
			testkit.Eventually(t, 5*time.Second, "the override on every node", func() bool {
				return holds(nodes[0], id, st) && holds(nodes[1], id, st) && holds(nodes[2], id, st)
			})
			log = append(log, fmt.Sprintf("%s set %v", id, st))
		}
	}
	if down >= 0 {
		start(nodes[down], nodes[down].killed)
		nodes[down].killed = false
		log = append(log, fmt.Sprintf("node %d back", down))
	}
	t.Logf("chaos: %v", log)

	// Every node converges on what the clients did.
	testkit.Eventually(t, 20*time.Second, "every node to agree with the clients", func() bool {
		for _, n := range nodes {
			if n.store.Len() != len(clients) {
				return false
			}
			for id, w := range wanted {
				i, ok := n.store.Get("CHAOS", id)
				if ok != w.alive || (ok && i.Status != w.status) {
					return false
				}
			}
		}
		return true
	})
}
