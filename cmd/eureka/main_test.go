package main

import (
	"io"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/eurekagate/eurekagate/internal/testkit"
	"github.com/eurekagate/eurekagate/registry/httpapi"
)

func TestMain(m *testing.M) {
	testkit.VerifyTestMain(m, goleak.Cleanup(func(code int) {
		builds.Remove()
		os.Exit(code)
	}),
		// grpc-go's xDS client drops the stop function of the certificate
		// watcher its bootstrap's "tls" channel credentials start
		// (internal/xds/xdsclient/clientimpl.go, v1.84.0), so the mutual
		// TLS test's client leaves it running.
		goleak.IgnoreTopFunction("google.golang.org/grpc/credentials/tls/certprovider/pemfile.(*watcher).run"))
}

// builds holds this command, built once for the tests that run it as a
// process.
var builds = testkit.GoBuilds{Prefix: "eureka-bin-"}

// binary returns this command, built from this tree. Under -short it
// skips the test instead: every test that runs the command as a process
// asks for it first.
func binary(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds and runs the command")
	}
	return builds.Binary(t, "../..", "./cmd/eureka")
}

// noEnv is an empty process environment, for parseOptions.
func noEnv(string) string { return "" }

// envOf is a process environment holding vars, for parseOptions.
func envOf(vars map[string]string) func(string) string {
	return func(k string) string { return vars[k] }
}

func TestOptionsFromFlagsAndEnv(t *testing.T) {
	env := map[string]string{"EUREKA_EVICTION_INTERVAL": "5s", "EUREKA_ADDR": "127.0.0.1:9000", "EUREKA_SELF_PRESERVATION": "false"}
	o, err := parseOptions([]string{"-addr", "127.0.0.1:9001", "-legacy-lease-expiry", "-prefix", "/registry",
		"-peers", "http://a:8761/eureka/, http://u:p@b:8761/eureka/", "-self-url", "http://me:8761/eureka/"},
		envOf(env), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if o.server.Addr != "127.0.0.1:9001" {
		t.Errorf("flag must win over env: addr %q", o.server.Addr)
	}
	st := o.registry.Store
	if p := o.registry.Peers; len(p.Peers) != 2 || p.Peers[1] != "http://u:p@b:8761/eureka/" || p.Self != "http://me:8761/eureka/" ||
		p.SelfAddrs[0] != "127.0.0.1:9001" {
		t.Errorf("peers: %+v", p)
	}
	if st.EvictionInterval != 5*time.Second || !st.DisableSelfPreservation || !st.LegacyLeaseExpiry || o.registry.API.Prefix != "/registry" {
		t.Errorf("options: %+v %+v", st, o.registry.API)
	}

	h := func(pw string) string { return testkit.PasswordHash(t, pw) }
	a, err := parseOptions([]string{"-auth-users", "ops:" + h("a") + ",dev:" + h("b"), "-peer-auth", "peer:" + h("c"), "-auth-reads", "-dashboard-path", "off"},
		noEnv, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if auth := a.registry.API.Auth; len(auth.Users) != 2 || auth.Users[1].Username != "dev" || auth.Peer.Username != "peer" || !auth.RequireForReads || a.dashboardPath != "" {
		t.Errorf("auth options: %+v, dashboard %q", auth, a.dashboardPath)
	}

	d, err := parseOptions(nil, noEnv, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if d.server.Addr != ":8761" || d.registry.Store.DisableSelfPreservation || d.registry.API.MaxBodyBytes != httpapi.DefaultMaxBodyBytes ||
		d.server.MaxHeaderBytes != httpapi.DefaultMaxHeaderBytes {
		t.Errorf("defaults: %+v", d)
	}

	for _, bad := range [][]string{{"-eviction-interval", "soon"}, {"-renewal-percent-threshold", "2"}, {"extra"},
		{"-auth-users", "ops:plaintext"}, {"-peer-auth", "nohash"}} {
		if _, err := parseOptions(bad, noEnv, io.Discard); err == nil {
			t.Errorf("%v accepted", bad)
		}
	}
	// Settings that would not do what they say are refused with a reason.
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-auth-reads"}, "-auth-reads) is set without any user (-auth-users)"},
		{[]string{"-auth-users", "ops:$2a$10$abc"}, `the password hash of "ops" is not a bcrypt hash`},
		{[]string{"-auth-users", "ops:" + h("a"), "-peer-auth", "peer:$2y$10$" + strings.Repeat("x", 10)}, `the password hash of "peer" is not a bcrypt hash`},
		{[]string{"-prefix", "/"}, "the REST API under / would hide"},
		{[]string{"-prefix", "/", "-dashboard-path", "off"}, "would hide /metrics"},
		{[]string{"-prefix", "/ui", "-dashboard-path", "/ui"}, "the REST API under /ui would hide the dashboard (/ui)"},
		{[]string{"-dashboard-path", "/eureka/ui"}, "the REST API under /eureka would hide the dashboard"},
		{[]string{"-prefix", "metrics"}, "would hide /metrics (/metrics)"},
	} {
		_, err := parseOptions(c.args, noEnv, io.Discard)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v, want %q", c.args, err, c.want)
		}
	}
	if _, err := parseOptions(nil, envOf(map[string]string{"EUREKA_MAX_BODY_BYTES": "lots"}), io.Discard); err == nil {
		t.Error("bad env value accepted")
	}
}

// The assembled application serves the registry and shuts down cleanly.
func TestAppStartsAndStops(t *testing.T) {
	var srv *httpapi.Server
	startApp(t, []string{"-addr", "127.0.0.1:0"}, &srv)
	resp, err := http.Get("http://" + srv.Addr().String() + "/eureka/apps")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Errorf("GET /eureka/apps: %d", resp.StatusCode)
	}
	for path, want := range map[string]string{"/metrics": "eureka_renew_threshold", "/": "Eurekagate registry", "/api/summary": `"applications":[]`} {
		resp, err := http.Get("http://" + srv.Addr().String() + path)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || !strings.Contains(string(body), want) {
			t.Errorf("GET %s: %d, %q not in %.200s", path, resp.StatusCode, want, body)
		}
	}
	http.DefaultClient.CloseIdleConnections() // startApp stops the app, which must succeed, when the test ends
}

// A peer URL that does not parse is refused with one line naming the flag,
// the value and the fix, not fx's account of a failed constructor.
func TestBadPeerURL(t *testing.T) {
	for _, args := range [][]string{
		{"-peers", "http://ok:8761/eureka/,http://bad host:8761/eureka/"},
		{"-self-url", "eureka-1:8761"},
	} {
		_, err := parseOptions(args, noEnv, io.Discard)
		if err == nil || !strings.Contains(err.Error(), args[0]) || !strings.Contains(err.Error(), "http://host:8761/eureka/") {
			t.Errorf("%v: %v", args, err)
		}
	}
}

// go run ./cmd/eureka -version prints the version the module reports.
func TestVersionFlag(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the command")
	}
	out, err := exec.Command("go", "run", ".", "-version").CombinedOutput()
	if err != nil {
		t.Fatalf("go run . -version: %v\n%s", err, out)
	}
	fields := strings.Fields(string(out))
	if len(fields) < 2 || fields[0] != "eureka" || (fields[1] != "devel" && !strings.HasPrefix(fields[1], "devel-") && !strings.HasPrefix(fields[1], "v")) {
		t.Fatalf("printed %q, want eureka and the version", out)
	}
}
