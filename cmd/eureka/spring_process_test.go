package main

import (
	"encoding/json"
	"net/http"
	"os/exec"
	"strings"
	"testing"
	"time"

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
	setup := func(c *exec.Cmd) { c.Dir, c.Env = dir, env }

	cmd := exec.Command(bin, "-print-config")
	setup(cmd)
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

	p := startProcessWith(t, 30*time.Second, bin, false, setup)
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
