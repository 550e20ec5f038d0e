package main

import (
	"io"
	"net"
	"net/http"
	"strings"
	"testing"

	"github.com/eurekagate/eurekagate/eureka"
	"github.com/eurekagate/eurekagate/internal/testkit"
	"github.com/eurekagate/eurekagate/registry/httpapi"
)

// The rebinding case of issue 51: a registry on loopback with no
// credentials, a page at rebind.attacker.example rebound to 127.0.0.1. Its
// write (with a matching Origin and the write guard's header) and its read
// of the dashboard's data get 403 naming -allowed-hosts; with the host in
// -allowed-hosts, 200; localhost and 127.0.0.1 keep working.
func TestAllowedHostsAgainstRebinding(t *testing.T) {
	for _, allowed := range []bool{false, true} {
		args := []string{"-addr", "127.0.0.1:0"}
		if allowed {
			args = append(args, "-allowed-hosts", "rebind.attacker.example,other.example:1")
		}
		var srv *httpapi.Server
		startApp(t, args, &srv)
		addr := srv.Addr().String()
		_, port, _ := net.SplitHostPort(addr)
		inst := string(eureka.AppendInstanceJSON(nil, testkit.Inst("CSRFT", "c1")))
		if got := testkit.StatusAs(t, "POST", "http://"+addr+"/eureka/apps/CSRFT", "", "", inst); got != http.StatusNoContent {
			t.Fatalf("registering from 127.0.0.1: %d", got)
		}
		for _, host := range []string{"rebind.attacker.example:" + port, "localhost:" + port, "127.0.0.1:" + port} {
			want := http.StatusOK
			if host == "rebind.attacker.example:"+port && !allowed {
				want = http.StatusForbidden
			}
			for _, c := range []struct{ method, path string }{
				{"PUT", "/eureka/apps/CSRFT/c1/status?value=OUT_OF_SERVICE"},
				{"GET", "/api/summary"},
				{"GET", "/"},
			} {
				code, body := testkit.Rebound(t, c.method, "http://"+addr+c.path, host)
				if code != want {
					t.Errorf("allowed %v: %s %s with Host %s: %d, want %d", allowed, c.method, c.path, host, code, want)
				}
				if want == http.StatusForbidden && !strings.Contains(body, "-allowed-hosts") {
					t.Errorf("the refusal does not name the setting: %q", body)
				}
			}
		}
	}
}

// A malformed -allowed-hosts entry is refused with the flag's name.
func TestAllowedHostsFlagRefused(t *testing.T) {
	_, err := parseOptions([]string{"-allowed-hosts", "ok.example,http://bad.example"}, noEnv, io.Discard)
	if err == nil || !strings.Contains(err.Error(), `-allowed-hosts: "http://bad.example" is not HOST or HOST:PORT`) {
		t.Fatalf("got %v", err)
	}
}
