package main

import (
	"encoding/json"
	"net/http"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/eurekagate/eurekagate/internal/proc"
	"github.com/eurekagate/eurekagate/internal/testkit"
)

// The command, as a new user tries it: the server started with
// Spring's variables alone, in a directory with no file, takes them
// (self-preservation off, the peer), logs the typo with its closest
// name, and -print-config says where each setting came from.
func TestSpringEnvironmentOnlyProcess(t *testing.T) {
	bin := binary(t)
	env := []string{
		"EUREKA_SERVER_ENABLESELFPRESERVATION=false",
		"EUREKA_CLIENT_SERVICEURL_DEFAULTZONE=http://peer.invalid:8761/eureka/",
		"EUREKA_SERVER_ENABLESELFPRESERVATON=false",
		"SERVER_ADDRESS=127.0.0.1", "SERVER_PORT=0",
	}
	dir := t.TempDir()
	cmd := exec.Command(bin, "-print-config")
	cmd.Dir, cmd.Env = dir, env
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("-print-config: %v\n%s", err, out)
	}
	for _, want := range []string{
		"-self-preservation                  false",
		"variable EUREKA_SERVER_ENABLESELFPRESERVATION eureka.server.enableselfpreservation",
		"http://peer.invalid:8761/eureka/  variable EUREKA_CLIENT_SERVICEURL_DEFAULTZONE",
		"127.0.0.1:0",
	} {
		if !strings.Contains(string(out), want) {
			t.Errorf("-print-config lacks %q:\n%s", want, out)
		}
	}

	p := startProcessWith(t, 30*time.Second, bin, false, proc.Config{Dir: dir, Env: env, CleanEnv: true})
	typo := p.logs.line(t, "variable EUREKA_SERVER_ENABLESELFPRESERVATON")
	if msg := typo["msg"].(string); typo["level"] != "warn" || !strings.Contains(msg, "closest known: eureka.server.enable-self-preservation, EUREKA_SERVER_ENABLESELFPRESERVATION") {
		t.Errorf("the typo's line: %v", typo)
	}
	req := testkit.JSONRequest(t, "GET", p.registry+"/eureka/status", "")
	testkit.SetHeaders(req, "Accept", "application/json")
	resp, body := testkit.Do(t, &http.Client{}, req)
	var status struct {
		ApplicationStats map[string]string `json:"applicationStats"`
	}
	if err := json.Unmarshal([]byte(body), &status); resp.StatusCode != 200 || err != nil {
		t.Fatalf("GET /eureka/status: %d %v %.300s", resp.StatusCode, err, body)
	}
	if r := status.ApplicationStats["registered-replicas"]; !strings.Contains(r, "peer.invalid:8761") {
		t.Errorf("registered-replicas %q, want the peer", r)
	}
	p.stop(t)
}

// The Spring Cloud docs' peer-aware servers, one file, two nodes started
// with their profile alone: each recognises itself, replicates to the
// other, and an instance registered and renewed on one is read back from
// both.
func TestSpringPeerAwareProcesses(t *testing.T) {
	bin := binary(t)
	port := strconv.Itoa(testkit.FreePortOn(t, "127.0.0.2", "127.0.0.3")) // the nodes listen there
	file, err := filepath.Abs("testdata/spring/peer-aware/application.yml")
	if err != nil {
		t.Fatal(err)
	}
	start := func(profile string) *process {
		return startProcessWith(t, 30*time.Second, bin, false, proc.Config{Dir: t.TempDir(), Env: []string{"PORT=" + port}, CleanEnv: true},
			"--spring.config.location="+file, "--spring.profiles.active="+profile)
	}
	peer1, peer2 := start("peer1"), start("peer2")
	for n, p := range []*process{peer1, peer2} {
		want := []string{"http://127.0.0.2:" + port, "http://127.0.0.3:" + port}[n]
		if p.registry != want {
			t.Fatalf("node %d listens on %s, want %s", n+1, p.registry, want)
		}
		testkit.Eventually(t, 10*time.Second, p.registry+" ready", func() bool {
			code, _ := testkit.HTTPGet(t, p.registry+"/actuator/health/readiness")
			return code == 200
		})
	}
	register(t, peer1.registry, "ORDERS", "orders-1")
	req, _ := http.NewRequest(http.MethodPut, peer1.registry+"/eureka/apps/ORDERS/orders-1", nil)
	if resp, body := testkit.Do(t, http.DefaultClient, req); resp.StatusCode != 200 {
		t.Fatalf("heartbeat: %d %s", resp.StatusCode, body)
	}
	for _, p := range []*process{peer1, peer2} {
		testkit.Eventually(t, 10*time.Second, "orders-1 on "+p.registry, func() bool {
			code, body := getJSON(t, p.registry+"/eureka/apps/ORDERS/orders-1")
			return code == 200 && strings.Contains(body, `"instanceId":"orders-1"`)
		})
	}
	for _, p := range []*process{peer1, peer2} {
		_, body := getJSON(t, p.registry+"/eureka/status")
		other := map[string]string{peer1.registry: "127.0.0.3", peer2.registry: "127.0.0.2"}[p.registry]
		var status struct {
			ApplicationStats map[string]string `json:"applicationStats"`
		}
		json.Unmarshal([]byte(body), &status)
		if r := status.ApplicationStats["registered-replicas"]; !strings.Contains(r, other) || strings.Count(r, "http") != 1 {
			t.Errorf("%s replicates to %q, want the other node alone", p.registry, r)
		}
	}
	http.DefaultClient.CloseIdleConnections()
	peer1.stop(t)
	peer2.stop(t)
}
