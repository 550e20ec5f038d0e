package main

import (
	"context"
	"fmt"
	"time"

	"github.com/eurekagate/eurekagate/internal/testkit"
	"github.com/eurekagate/eurekagate/registry"
	"github.com/eurekagate/eurekagate/registry/httpapi"
	"github.com/eurekagate/eurekagate/registry/replication"
)

// replicationResult is what the replication phase measured.
type replicationResult struct {
	instances int
	converged time.Duration // from the first registration until all nodes agree
	batches   uint64        // batches sent by node 1, to both peers
}

// benchReplication runs three registry nodes on loopback, registers n
// instances on node 1 and measures how long until nodes 2 and 3 hold them
// all.
func benchReplication(n int) (*replicationResult, error) {
	ports, err := freePorts(3)
	if err != nil {
		return nil, err
	}
	var urls []string
	for _, p := range ports {
		urls = append(urls, "http://127.0.0.1:"+p+"/eureka/")
	}
	type node struct {
		store *registry.Store
		peers *replication.Peers
		srv   *httpapi.Server
	}
	var nodes []*node
	defer func() {
		for _, nd := range nodes {
			nd.peers.Stop()
			nd.srv.Stop(context.Background())
		}
	}()
	for k, p := range ports {
		store := registry.New(registry.Config{})
		peers, err := replication.New(store, replication.Config{Peers: urls, Self: urls[k]})
		if err != nil {
			return nil, err
		}
		srv := httpapi.NewServer(httpapi.NewAPI(store, httpapi.APIConfig{}), httpapi.ServerConfig{Addr: "127.0.0.1:" + p})
		if err := srv.Start(); err != nil {
			return nil, err
		}
		peers.Start()
		nodes = append(nodes, &node{store, peers, srv})
	}
	start := time.Now()
	for i := range n {
		if err := nodes[0].store.Register(testkit.SampleInstance(i), false); err != nil {
			return nil, err
		}
	}
	deadline := start.Add(2 * time.Minute)
	for nodes[1].store.Len() < n || nodes[2].store.Len() < n {
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("replication did not converge: %d and %d of %d", nodes[1].store.Len(), nodes[2].store.Len(), n)
		}
		time.Sleep(time.Millisecond)
	}
	res := &replicationResult{instances: n, converged: time.Since(start)}
	for _, ps := range nodes[0].peers.Stats() {
		res.batches += ps.BatchesSent
	}
	return res, nil
}
