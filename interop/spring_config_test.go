package interop

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// peerAwareYML is the Spring Cloud docs' "Two Peer Aware Eureka Servers"
// with the hostnames peer1 and peer2 as 127.0.0.2 and 127.0.0.3 and a
// port, and a base document that puts each node on its own address.
const peerAwareYML = `server:
  port: %[1]d
  address: ${eureka.instance.hostname}
---
spring:
  profiles: peer1
eureka:
  instance:
    hostname: 127.0.0.2
  client:
    serviceUrl:
      defaultZone: http://127.0.0.3:%[1]d/eureka/
---
spring:
  profiles: peer2
eureka:
  instance:
    hostname: 127.0.0.3
  client:
    serviceUrl:
      defaultZone: http://127.0.0.2:%[1]d/eureka/
`

// lastRenewal reads an instance's lastRenewalTimestamp from a node, 0
// when the node does not hold it UP.
func lastRenewal(t *testing.T, node, app, id string) (int64, string) {
	status, body, err := tryCall("GET", node+"/eureka/apps/"+app+"/"+id, nil, "Accept", "application/json")
	if err != nil || status != 200 {
		return 0, fmt.Sprintf("%d %v %.200s", status, err, body)
	}
	var doc struct {
		Instance struct {
			Status    string
			LeaseInfo struct {
				LastRenewalTimestamp int64
			}
		}
	}
	if err := json.Unmarshal([]byte(body), &doc); err != nil || doc.Instance.Status != "UP" {
		return 0, fmt.Sprintf("%v %.200s", err, body)
	}
	return doc.Instance.LeaseInfo.LastRenewalTimestamp, body
}

// Our two nodes started from the docs' peer-aware application.yml alone
// (with --spring.profiles.active, as Spring starts them): the Spring Boot
// client of each line registers on one, renews, and is read back UP from
// both, its renewals replicated to the other.
func TestSpringPeerAwareConfig(t *testing.T) {
	requireJava(t)
	port := freePort(t, "127.0.0.2")
	file := filepath.Join(t.TempDir(), "application.yml")
	if err := os.WriteFile(file, []byte(fmt.Sprintf(peerAwareYML, port)), 0o644); err != nil {
		t.Fatal(err)
	}
	var nodes []string
	for _, profile := range []string{"peer1", "peer2"} {
		p := start(t, profile, goBinary(t, "cmd/eureka"), "--spring.config.location="+file, "--spring.profiles.active="+profile)
		addr := p.await(`"registry listening","addr":"([0-9.:]+)"`, 30*time.Second)[1]
		nodes = append(nodes, "http://"+addr)
	}
	if want := fmt.Sprintf("http://127.0.0.2:%d", port); nodes[0] != want {
		t.Fatalf("peer1 listens on %s, want %s", nodes[0], want)
	}
	for _, line := range springLines {
		t.Run(line.name, func(t *testing.T) {
			id := "orders-" + line.name
			c := startSpringClientOf(t, line.project, "orders", id, nodes[0]+"/eureka/")
			for _, node := range nodes {
				eventually(t, 10*time.Second, id+" UP on "+node, func() (bool, string) {
					ts, got := lastRenewal(t, node, "ORDERS", id)
					return ts > 0, got
				})
			}
			first, _ := lastRenewal(t, nodes[1], "ORDERS", id)
			eventually(t, 10*time.Second, "a renewal of "+id+" replicated to peer2", func() (bool, string) {
				ts, got := lastRenewal(t, nodes[1], "ORDERS", id)
				return ts > first, got
			})
			c.stop()
			for _, node := range nodes {
				eventually(t, 10*time.Second, id+" cancelled on "+node, func() (bool, string) {
					status, body, _ := tryCall("GET", node+"/eureka/apps/ORDERS/"+id, nil, "Accept", "application/json")
					return status == 404, fmt.Sprintf("%d %s", status, strings.TrimSpace(body))
				})
			}
		})
	}
}
