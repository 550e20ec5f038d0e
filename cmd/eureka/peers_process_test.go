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
	w := testkit.NewWatcher(t, 250*time.Millisecond)
	for _, p := range nodes {
		c.watch(w, p)
	}
	for n, p := range nodes {
		id := "a" + strconv.Itoa(n)
		c.register(t, p, "", "ORDERS", id, 1)
		w.Live("ORDERS/" + id)
	}
	c.holdsOn(t, nodes, "ORDERS", "a0", "a1", "a2")
	c.replicasAre(t, nodes[0], url(ips[1]), url(ips[2]))

	// Four: the new node syncs what the others hold at its start, and
	// gets every write once the others have looked the name up again.
	changed := time.Now()
	dns.SetA(name, ips...)
	nodes = append(nodes, start(ips[3]))
	c.waitReads(t, nodes[3])
	c.watch(w, nodes[3])
	c.holdsOn(t, nodes[3:], "ORDERS", "a0", "a1", "a2")
	for n, p := range nodes[:3] {
		others := slices.Delete(slices.Clone(ips), n, n+1)
		c.replicasAre(t, p, url(others[0]), url(others[1]), url(others[2]))
	}
	t.Logf("four nodes: every node replicates to the new one %v after the records changed", time.Since(changed).Round(time.Millisecond))
	c.register(t, nodes[1], "", "ORDERS", "b1", 1)
	w.Live("ORDERS/b1")
	c.register(t, nodes[3], "", "ORDERS", "b3", 1)
	w.Live("ORDERS/b3")
	c.holdsOn(t, nodes, "ORDERS", "b1", "b3")
	w.Ending("ORDERS/a1")
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
	w.Live("ORDERS/c0")
	c.register(t, nodes[3], "", "ORDERS", "c3", 1)
	w.Live("ORDERS/c3")
	c.holdsOn(t, []*process{nodes[0], nodes[3]}, "ORDERS", "c0", "c3")
	for _, p := range nodes[1:3] {
		if got := ids(c.apps(t, p.registry+"/eureka/apps"))["ORDERS"]; slices.Contains(got, "c0") || slices.Contains(got, "c3") {
			t.Errorf("%s, which left, got a write made after it left: %v", p.registry, got)
		}
	}
	w.Close()
	w.Check(t)
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

// watch has w read p's registry: a process that syncs (503) or is
// stopped leaves nothing to judge.
func (c *regionCluster) watch(w *testkit.Watcher, p *process) {
	w.Add(p.registry, func([]string) (map[string]bool, error) {
		req, _ := http.NewRequest(http.MethodGet, p.registry+"/eureka/apps", nil)
		req.Header.Set("Accept", "application/json")
		resp, err := c.client.Do(req)
		if err != nil {
			return nil, err
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		if err == nil && resp.StatusCode != http.StatusOK {
			err = fmt.Errorf("%d", resp.StatusCode)
		}
		if err != nil {
			return nil, err
		}
		doc, err := eureka.DecodeApplicationsJSON(body)
		if err != nil {
			return nil, err
		}
		out := map[string]bool{}
		for app, list := range ids(doc) {
			for _, id := range list {
				out[app+"/"+id] = true
			}
		}
		return out, nil
	})
}
