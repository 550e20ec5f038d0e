package interop

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/eurekagate/eurekagate/internal/xdstest"
	"github.com/eurekagate/eurekagate/routing"
	"github.com/eurekagate/eurekagate/xds"
)

// grpc-java's own xDS client (io.grpc:grpc-xds, java/grpcxds) calls
// xds:///orders through our xDS server: its RPCs reach ORDERS' default
// subset, and with a canary header, served as a traffic rule, the canary
// only.
func TestGRPCJavaXDSClient(t *testing.T) {
	j := jar(t, "grpcxds")
	store, api := xdstest.Registry(t)
	x := xdstest.Serve(t, store, xds.Config{})
	xdstest.Register(t, api, "ORDERS", "stable-1", xdstest.Backend(t, "stable-1"), map[string]string{"version": "1"})
	xdstest.Register(t, api, "ORDERS", "stable-2", xdstest.Backend(t, "stable-2"), map[string]string{"version": "1"})
	xdstest.Register(t, api, "ORDERS", "canary", xdstest.Backend(t, "canary"), map[string]string{"version": "2"})
	rules, err := routing.ParseRules("rules.yaml", []byte(`
apps:
  ORDERS:
    default: {version: "1"}
    rules:
      - match: {header: {X-Canary: "1"}}
        to: [{select: {version: "2"}}]
`))
	if err != nil {
		t.Fatal(err)
	}
	x.SetRules(rules)
	bootstrap := string(xdstest.Bootstrap(x.Addr().String(), `{"type":"insecure"}`, "grpc-java"))

	if got := callJava(t, j, bootstrap, "xds:///orders", "12"); got["stable-1"]+got["stable-2"] != 12 || got["stable-1"] == 0 || got["stable-2"] == 0 {
		t.Errorf("grpc-java's RPCs reached %v, want stable-1 and stable-2 only", got)
	}
	if got := callJava(t, j, bootstrap, "xds:///orders", "12", "x-canary", "1"); got["canary"] != 12 {
		t.Errorf("grpc-java's canary RPCs reached %v, want canary only", got)
	}
}

// callJava runs the grpc-java client with args and counts the backends
// that answered its calls (a failed call counts under its error).
func callJava(t *testing.T, jar, bootstrap string, args ...string) map[string]int {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "java", append([]string{"-jar", jar}, args...)...)
	cmd.Env = append(os.Environ(), "GRPC_XDS_BOOTSTRAP_CONFIG="+bootstrap)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("grpc-java client %v: %v\n%s", args, err, stderr.Bytes())
	}
	got := map[string]int{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		got[line]++
	}
	if t.Failed() || got[""] > 0 {
		t.Logf("grpc-java's log:\n%s", stderr.Bytes())
	}
	return got
}
