package main

import (
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/eurekagate/eurekagate/registry"
	"github.com/eurekagate/eurekagate/registry/replication"
)

func TestPeerOptions(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad-peers")
	os.WriteFile(bad, []byte("# nodes\nhttp://127.0.0.1:8761/eureka/\nhttp://[::1/eureka/\n"), 0o600)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-peers-dns", "ftp://eureka.test:8761/eureka/"}, `-peers-dns: peer DNS name "ftp://eureka.test:8761/eureka/": the scheme is`},
		{[]string{"-peers-dns", "http://eureka.test/eureka/"}, "no port: give the port the peers listen on"},
		{[]string{"-peers-dns", "srv://eureka.test:8761/eureka/"}, "an SRV record gives the port"},
		{[]string{"-peers-dns", "http://10.0.0.1:8761/eureka/"}, "an address, not a DNS name"},
		{[]string{"-dns-resolver", "127.0.0.1:53"}, "-dns-resolver set without -peers-dns"},
		{[]string{"-peers-resolve-interval", "5s"}, "-peers-resolve-interval set without -peers-dns"},
		{[]string{"-peers-dns", "http://eureka.test:8761/eureka/", "-dns-resolver", "10.96.0.10"}, `-dns-resolver "10.96.0.10": give the DNS server as HOST:PORT`},
		{[]string{"-peers-dns", "http://eureka.test:8761/eureka/", "-peers-resolve-interval", "0s"}, "-peers-resolve-interval 0s: give a positive duration"},
		{[]string{"-peers-file", filepath.Join(dir, "none")}, "-peers-file: open"},
		{[]string{"-peers-file", bad}, "-peers-file: " + bad + ":3: peer URL"},
		{[]string{"-peers-file-interval", "5s"}, "-peers-file-interval set without -peers-file"},
		{[]string{"-peers-file", bad, "-peers-file-interval", "0s"}, "-peers-file-interval 0s: give a positive duration"},
	} {
		if _, err := parseOptions(tc.args, noEnv, new(strings.Builder)); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: %v, want an error with %q", tc.args, err, tc.want)
		}
	}

	good := filepath.Join(dir, "peers")
	os.WriteFile(good, []byte("http://127.0.0.2:8761/eureka/ # the second node\n\nhttp://127.0.0.3:8761/eureka/\n"), 0o600)
	o, err := parseOptions([]string{"-peers", "http://127.0.0.9:8761/eureka/", "-peers-file", good,
		"-peers-dns", "srv://eureka.test/eureka/", "-dns-resolver", "127.0.0.1:5353", "-peers-resolve-interval", "2s"}, noEnv, new(strings.Builder))
	if err != nil {
		t.Fatal(err)
	}
	pc := o.registry.Peers
	if want := []string{"http://127.0.0.9:8761/eureka/", "http://127.0.0.2:8761/eureka/", "http://127.0.0.3:8761/eureka/"}; !slices.Equal(pc.Peers, want) {
		t.Errorf("peers %v, want %v", pc.Peers, want)
	}
	if !slices.Equal(pc.PeersDNS, []string{"srv://eureka.test/eureka/"}) || pc.DNSResolver != "127.0.0.1:5353" || pc.ResolveInterval != 2*time.Second {
		t.Errorf("DNS settings %v %q %v", pc.PeersDNS, pc.DNSResolver, pc.ResolveInterval)
	}
	if !o.registry.PeersAlways || o.peersFile == nil || !slices.Equal(o.peersFile.fixed, []string{"http://127.0.0.9:8761/eureka/"}) {
		t.Errorf("the peers file is not kept for its reloads: %+v", o.peersFile)
	}
}

// A node's -peers-file is re-read on SIGHUP, and when it changes: a node
// started with none replicates to the one the file names once it is
// signalled, and stops once the file no longer names it. The signalled
// node checks its file every hour, so only the signal can apply the
// first change within the test; a second node at the default interval
// applies the file's change without one.
func TestPeersFileReloaded(t *testing.T) {
	bin := binary(t)
	c := &regionCluster{client: &http.Client{Timeout: 10 * time.Second}}
	t.Cleanup(c.client.CloseIdleConnections)
	file := filepath.Join(t.TempDir(), "peers")
	if err := os.WriteFile(file, []byte("# no peer yet\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	a := startProcess(t, bin, false, "-addr", "127.0.0.1:0", "-dashboard-path", "off", "-peers-file", file, "-peers-file-interval", "1h")
	b := startProcess(t, bin, false, "-addr", "127.0.0.1:0", "-dashboard-path", "off")
	c.waitReads(t, a, b)
	c.replicasAre(t, a)

	// Written in place without a pause, then signalled: applied at once.
	if err := os.WriteFile(file, []byte(b.registry+"/eureka/\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := a.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	c.replicasAre(t, a, b.registry+"/eureka/")
	c.register(t, a, "", "ORDERS", "o1", 1)
	c.holdsOn(t, []*process{b}, "ORDERS", "o1")
	a.stop(t)

	// Changed with no signal: applied once it has held still.
	d := startProcess(t, bin, false, "-addr", "127.0.0.1:0", "-dashboard-path", "off", "-peers-file", file)
	c.waitReads(t, d)
	c.replicasAre(t, d, b.registry+"/eureka/")
	if err := os.WriteFile(file, []byte("# none again\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	c.replicasAre(t, d)
	d.stop(t)
}

// The reloader applies a SIGHUP's read at once, and a change it finds by
// itself once a second check finds the file the same; a file refused
// leaves the peers in force.
func TestPeersReloaderChecks(t *testing.T) {
	file := filepath.Join(t.TempDir(), "peers")
	peers, err := replication.New(registry.New(registry.Config{}), replication.Config{Peers: []string{"http://127.0.0.9:1/eureka/"}})
	if err != nil {
		t.Fatal(err)
	}
	defer peers.Stop()
	r := &peersReloader{f: &peersFile{path: file, fixed: []string{"http://127.0.0.9:1/eureka/"}}, peers: peers, log: zap.NewNop(), hold: newPeersHold()}
	urls := func() []string {
		var out []string
		for _, s := range peers.Stats() {
			out = append(out, s.URL)
		}
		return out
	}
	fixed, two := "http://127.0.0.9:1/eureka/", "http://127.0.0.2:1/eureka/"
	os.WriteFile(file, []byte(two+"\n"), 0o600)
	r.check(true)
	if got := urls(); !slices.Equal(got, []string{fixed, two}) {
		t.Errorf("after SIGHUP: %v", got)
	}
	os.WriteFile(file, []byte("\n"), 0o600)
	r.check(false)
	if got := urls(); !slices.Equal(got, []string{fixed, two}) {
		t.Errorf("a change seen once was applied: %v", got)
	}
	r.check(false)
	if got := urls(); !slices.Equal(got, []string{fixed}) {
		t.Errorf("a change seen twice: %v", got)
	}
	os.WriteFile(file, []byte("http://[::1/eureka/\n"), 0o600)
	r.check(true)
	if got := urls(); !slices.Equal(got, []string{fixed}) || !strings.Contains(r.lastErr, file+":1: peer URL") {
		t.Errorf("a refused file: peers %v, error %q", got, r.lastErr)
	}
	// An emptied file (a writer truncated it) is held for a check like
	// any change (filewatch.HoldStill): the reloader's own check took ""
	// for "no change pending" and applied it at once.
	os.WriteFile(file, []byte(two+"\n"), 0o600)
	r.check(true)
	os.WriteFile(file, nil, 0o600)
	r.check(false)
	if got := urls(); !slices.Equal(got, []string{fixed, two}) {
		t.Errorf("an emptied file seen once was applied: %v", got)
	}
	r.check(false)
	if got := urls(); !slices.Equal(got, []string{fixed}) {
		t.Errorf("an emptied file seen twice: %v", got)
	}
}
