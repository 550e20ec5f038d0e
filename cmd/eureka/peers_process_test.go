package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/eurekagate/eurekagate/eureka"
	"github.com/eurekagate/eurekagate/internal/testkit"
)

// Three nodes, processes of this command on 127.0.0.2 to .4, whose peers
// are the A records of a DNS name served on loopback; the records change
// to four nodes (a fourth process starts on .5) and then to two (.2 and
// .5), and no node restarts. A watcher reads every node's registry four
// times a second for the whole run: no registration a node served may
// go missing from it, no cancelled instance a node stopped serving may
// come back.
func TestPeersFromDNSProcesses(t *testing.T) {
	bin := binary(t)
	dns := testkit.NewDNS(t)
	ips := []string{"127.0.0.2", "127.0.0.3", "127.0.0.4", "127.0.0.5"}
	port := testkit.FreePortOn(t, ips...)
	const name = "eureka-peers.test"
	c := &regionCluster{client: &http.Client{Timeout: 10 * time.Second}}
	t.Cleanup(c.client.CloseIdleConnections)
	start := func(ip string) *process {
		return startProcessFor(t, 3*time.Minute, bin, false, "-addr", net.JoinHostPort(ip, strconv.Itoa(port)),
			"-peers-dns", fmt.Sprintf("http://%s:%d/eureka/", name, port), "-dns-resolver", dns.Addr(),
			"-peers-resolve-interval", "1s", "-dashboard-path", "off")
	}
	url := func(ip string) string { return fmt.Sprintf("http://%s:%d/eureka/", ip, port) }

	dns.SetA(name, ips[:3]...)
	nodes := []*process{start(ips[0]), start(ips[1]), start(ips[2])}
	c.waitReads(t, nodes...)
	w := newRegistryWatcher(c, nodes...)
	defer w.close()
	for n, p := range nodes {
		id := "a" + strconv.Itoa(n)
		c.register(t, p, "", "ORDERS", id, 1)
		w.live("ORDERS/" + id)
	}
	c.holdsOn(t, nodes, "ORDERS", "a0", "a1", "a2")
	c.replicasAre(t, nodes[0], url(ips[1]), url(ips[2]))

	// Four: the new node syncs what the others hold at its start, and
	// gets every write once the others have looked the name up again.
	changed := time.Now()
	dns.SetA(name, ips...)
	nodes = append(nodes, start(ips[3]))
	c.waitReads(t, nodes[3])
	w.add(nodes[3])
	c.holdsOn(t, nodes[3:], "ORDERS", "a0", "a1", "a2")
	for n, p := range nodes[:3] {
		others := slices.Delete(slices.Clone(ips), n, n+1)
		c.replicasAre(t, p, url(others[0]), url(others[1]), url(others[2]))
	}
	t.Logf("four nodes: every node replicates to the new one %v after the records changed", time.Since(changed).Round(time.Millisecond))
	c.register(t, nodes[1], "", "ORDERS", "b1", 1)
	w.live("ORDERS/b1")
	c.register(t, nodes[3], "", "ORDERS", "b3", 1)
	w.live("ORDERS/b3")
	c.holdsOn(t, nodes, "ORDERS", "b1", "b3")
	w.ending("ORDERS/a1")
	c.cancel(t, nodes[2], "", "ORDERS", "a1")
	c.eventually(t, "a1 cancelled on every node", func() bool { return c.without(t, nodes, "ORDERS", "a1") })

	// Two: .3 and .4 leave (they still run); .2 and .5 stop replicating
	// to them.
	changed = time.Now()
	dns.SetA(name, ips[0], ips[3])
	c.replicasAre(t, nodes[0], url(ips[3]))
	c.replicasAre(t, nodes[3], url(ips[0]))
	t.Logf("two nodes: the remaining nodes replicate to each other alone %v after the records changed", time.Since(changed).Round(time.Millisecond))
	c.register(t, nodes[0], "", "ORDERS", "c0", 1)
	w.live("ORDERS/c0")
	c.register(t, nodes[3], "", "ORDERS", "c3", 1)
	w.live("ORDERS/c3")
	c.holdsOn(t, []*process{nodes[0], nodes[3]}, "ORDERS", "c0", "c3")
	for _, p := range nodes[1:3] {
		if got := ids(c.apps(t, p.registry+"/eureka/apps"))["ORDERS"]; slices.Contains(got, "c0") || slices.Contains(got, "c3") {
			t.Errorf("%s, which left, got a write made after it left: %v", p.registry, got)
		}
	}
	w.close()
	w.check(t)
}

// holdsOn waits until every node of ps serves app's ids.
func (c *regionCluster) holdsOn(t *testing.T, ps []*process, app string, want ...string) {
	t.Helper()
	for _, p := range ps {
		c.eventually(t, fmt.Sprintf("%s to serve %s %v", p.registry, app, want), func() bool {
			st, body := c.get(t, p.registry+"/eureka/apps/"+app)
			return st == http.StatusOK && !slices.ContainsFunc(want, func(id string) bool { return !strings.Contains(body, `"`+id+`"`) })
		})
	}
}

// without reports whether no node of ps serves app/id.
func (c *regionCluster) without(t *testing.T, ps []*process, app, id string) bool {
	for _, p := range ps {
		if st, _ := c.get(t, p.registry+"/eureka/apps/"+app+"/"+id); st != http.StatusNotFound {
			return false
		}
	}
	return true
}

// replicasAre waits until p's /eureka/status names want (in any order) as
// its registered and available replicas, and no other.
func (c *regionCluster) replicasAre(t *testing.T, p *process, want ...string) {
	t.Helper()
	slices.Sort(want)
	var got []string
	c.eventually(t, fmt.Sprintf("%s to replicate to %v", p.registry, want), func() bool {
		st, body := c.get(t, p.registry+"/eureka/status")
		var doc struct {
			ApplicationStats map[string]string `json:"applicationStats"`
		}
		if st != http.StatusOK || json.Unmarshal([]byte(body), &doc) != nil {
			return false
		}
		got = nil
		if r := doc.ApplicationStats["registered-replicas"]; r != "" {
			got = strings.Split(r, ", ")
		}
		slices.Sort(got)
		return slices.Equal(got, want) && doc.ApplicationStats["available-replicas"] == doc.ApplicationStats["registered-replicas"]
	})
}

// registryWatcher reads every node's registry four times a second and
// records what must never happen: a live registration a node served
// missing from it, and a cancelled one a node stopped serving coming back.
type registryWatcher struct {
	c       *regionCluster
	mu      sync.Mutex
	nodes   []*process
	tracked map[string]bool            // tracked keys: live, or cancelled
	seen    map[string]map[string]bool // key -> node -> served it (live) or stopped (cancelled)
	bad     []string
	stop    chan struct{}
	done    chan struct{}
	once    sync.Once
}

func newRegistryWatcher(c *regionCluster, nodes ...*process) *registryWatcher {
	w := &registryWatcher{c: c, nodes: nodes, tracked: map[string]bool{}, seen: map[string]map[string]bool{},
		stop: make(chan struct{}), done: make(chan struct{})}
	go w.run()
	return w
}

func (w *registryWatcher) add(p *process) { w.mu.Lock(); w.nodes = append(w.nodes, p); w.mu.Unlock() }

// live: a node that has served key must keep serving it.
func (w *registryWatcher) live(key string) { w.track(key, true) }

// ending: key is about to be cancelled; a node that stopped serving it
// must never serve it again.
func (w *registryWatcher) ending(key string) { w.track(key, false) }

func (w *registryWatcher) track(key string, live bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.tracked[key], w.seen[key] = live, map[string]bool{}
}

func (w *registryWatcher) close() {
	w.once.Do(func() { close(w.stop) })
	<-w.done
}

func (w *registryWatcher) check(t *testing.T) {
	t.Helper()
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, b := range w.bad {
		t.Error(b)
	}
}

func (w *registryWatcher) run() {
	defer close(w.done)
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-w.stop:
			return
		case <-tick.C:
		}
		w.mu.Lock()
		nodes := slices.Clone(w.nodes)
		w.mu.Unlock()
		for _, p := range nodes {
			if reg, ok := w.read(p); ok {
				w.judge(p.registry, reg)
			}
		}
	}
}

// read returns p's registry, not ok while it syncs (503) or is stopped:
// nothing to judge then.
func (w *registryWatcher) read(p *process) (map[string][]string, bool) {
	req, _ := http.NewRequest(http.MethodGet, p.registry+"/eureka/apps", nil)
	req.Header.Set("Accept", "application/json")
	resp, err := w.c.client.Do(req)
	if err != nil {
		return nil, false
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		return nil, false
	}
	doc, err := eureka.DecodeApplicationsJSON(body)
	if err != nil {
		return nil, false
	}
	return ids(doc), true
}

func (w *registryWatcher) judge(node string, reg map[string][]string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	at := time.Now().Format("15:04:05.000")
	for key, live := range w.tracked {
		app, id, _ := strings.Cut(key, "/")
		present := slices.Contains(reg[app], id)
		switch {
		case live && present:
			w.seen[key][node] = true
		case live && w.seen[key][node]:
			w.bad = append(w.bad, fmt.Sprintf("%s: LOST registration %s at %s", node, key, at))
			w.seen[key][node] = false
		case !live && !present:
			w.seen[key][node] = true
		case !live && w.seen[key][node]:
			w.bad = append(w.bad, fmt.Sprintf("%s: RESURRECTED %s at %s", node, key, at))
			w.seen[key][node] = false
		}
	}
}
