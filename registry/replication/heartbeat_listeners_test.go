package replication_test

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/eurekagate/eurekagate/eureka"
	"github.com/eurekagate/eurekagate/internal/testkit"
	"github.com/eurekagate/eurekagate/registry"
	"github.com/eurekagate/eurekagate/registry/replication"
)

// Three listeners to renewals on a node of a two-node cluster hear every
// heartbeat, and replication, itself a listener, still carries each to
// the other node, whose listener hears them as replicated.
func TestHeartbeatListenersBesideReplication(t *testing.T) {
	c := newCluster(t, 2, replication.Config{})
	n1, n2 := c.nodes[0], c.nodes[1]
	var heard [3]atomic.Int64
	for n := range heard {
		defer n1.store.OnHeartbeat(func(hb registry.Heartbeat) {
			if !hb.Replicated {
				heard[n].Add(1)
			}
		})()
	}
	var replicated atomic.Int64
	defer n2.store.OnHeartbeat(func(hb registry.Heartbeat) {
		if hb.Replicated {
			replicated.Add(1)
		}
	})()
	if status := httpDo(t, "POST", n1.url()+"apps/ORDERS", eureka.AppendInstanceJSON(nil, testkit.Inst("ORDERS", "x"))); status != 204 {
		t.Fatalf("register: %d", status)
	}
	testkit.Eventually(t, 2*time.Second, "the registration on node 2", func() bool {
		_, ok := n2.store.Get("ORDERS", "x")
		return ok
	})
	const beats = 5
	for b := range beats {
		c.clock.Advance(30 * time.Second)
		if status := httpDo(t, "PUT", n1.url()+"apps/ORDERS/x", nil); status != 200 {
			t.Fatalf("heartbeat %d: %d", b, status)
		}
		renewed := c.clock.Now().UnixMilli()
		testkit.Eventually(t, 2*time.Second, "the heartbeat on node 2", func() bool {
			i, _ := n2.store.Get("ORDERS", "x")
			return i != nil && i.LeaseInfo.LastRenewalTimestamp == renewed
		})
	}
	for n := range heard {
		if got := heard[n].Load(); got != beats {
			t.Errorf("listener %d heard %d heartbeats, want %d", n, got, beats)
		}
	}
	if got := replicated.Load(); got != beats {
		t.Errorf("node 2's listener heard %d replicated heartbeats, want %d", got, beats)
	}
}
