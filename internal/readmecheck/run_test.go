package readmecheck

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/eurekagate/eurekagate/eureka"
	"github.com/eurekagate/eurekagate/internal/proc"
	"github.com/eurekagate/eurekagate/internal/registrytest"
	"github.com/eurekagate/eurekagate/internal/testkit"
	"github.com/eurekagate/eurekagate/registry"
	"github.com/eurekagate/eurekagate/registry/httpapi"
)

// buildSnippet builds src, with each old string replaced by the new one
// after it, inside the module (so it builds against this tree), and
// returns the binary.
func buildSnippet(t *testing.T, src string, replace ...string) string {
	t.Helper()
	src = strings.NewReplacer(replace...).Replace(src)
	// Named "_…": go list ./..., which doccheck runs meanwhile, skips it.
	dir, err := os.MkdirTemp(".", "_snippet")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(t.TempDir(), "snippet")
	if err := proc.GoBuild(context.Background(), "", nil, bin, "./"+filepath.Base(dir)); err != nil {
		t.Fatalf("%v\n%s", err, src)
	}
	return bin
}

// startProc starts bin, its output and errors collected, killed when
// the test ends (its output logged if the test failed).
func startProc(t *testing.T, bin string) *proc.Process {
	t.Helper()
	return testkit.StartProcess(t, context.Background(), "the snippet", proc.Config{}, os.Kill, 0, bin)
}

// signal sends sig and waits up to d for the process, what, to exit, and
// returns what Wait returned; it fails the test if the process has not
// exited by then.
func signal(t *testing.T, p *proc.Process, sig os.Signal, d time.Duration, what string) error {
	t.Helper()
	if err := p.Signal(sig); err != nil {
		t.Fatal(err)
	}
	err := p.Wait(d)
	if err == proc.ErrRunning {
		t.Fatalf("%s did not stop on %v", what, sig)
	}
	return err
}

// startRegistry starts a registry on a loopback port and returns it and
// its host:port.
func startRegistry(t *testing.T) (*registry.Store, string) {
	t.Helper()
	store := registry.New(registry.Config{})
	store.Start()
	t.Cleanup(store.Stop)
	return store, registrytest.Start(t, store, httpapi.ServerConfig{Addr: "127.0.0.1:0"}).Addr
}

func port(t *testing.T, addr string) string {
	t.Helper()
	return addr[strings.LastIndex(addr, ":")+1:]
}

// Every Go snippet of the documentation runs and does what the text
// around it says, against a registry (and services) the test starts on
// loopback.
func TestGoSnippetsRun(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the snippets")
	}
	for _, b := range blocksOf(t, "go") {
		src := b.body
		switch {
		case strings.Contains(src, "fxmodules.Discovery"):
			t.Run("fx", func(t *testing.T) { runFxSnippet(t, src) })
		case strings.Contains(src, "gateway.NewServer("):
			t.Run("gateway", func(t *testing.T) { runGatewaySnippet(t, src) })
		case strings.Contains(src, "registry.New("):
			t.Run("plain", func(t *testing.T) { runPlainSnippet(t, src) })
		default:
			t.Errorf("the Go snippet at %s has no test that runs it:\n%s", b.where(), src)
		}
	}
}

// The plain-constructor snippet prints its own registration, every run.
func runPlainSnippet(t *testing.T, src string) {
	addr := testkit.FreeAddr(t)
	bin := buildSnippet(t, src, "127.0.0.1:8761", addr)
	host, _ := os.Hostname()
	want := regexp.MustCompile(`(?m)^ORDERS is UP at ` + regexp.QuoteMeta(host) + `:8080$`)
	for run := range 3 {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		out, err := exec.CommandContext(ctx, bin).CombinedOutput()
		cancel()
		if err != nil || !want.Match(out) {
			t.Fatalf("run %d: %v, printed %q; want a line matching %s", run+1, err, out, want)
		}
	}
}

// The gateway snippet serves a registry's REST API and the fasthttp
// gateway over it: an app it does not know gets 503 with the reason, an
// instance registered through the API is routed to at once, and it stops
// on an interrupt. It listens on loopback ports here instead of 8761 and
// 8080.
func runGatewaySnippet(t *testing.T, src string) {
	regAddr, gwAddr := testkit.FreeAddr(t), testkit.FreeAddr(t)
	bin := buildSnippet(t, src, `"127.0.0.1:8761"`, `"`+regAddr+`"`, `"127.0.0.1:8080"`, `"`+gwAddr+`"`)
	p := startProc(t, bin)
	get := func(path string) (int, string, error) {
		resp, err := http.Get("http://" + gwAddr + path)
		if err != nil {
			return 0, "", err
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b), nil
	}
	var status int
	var body string
	testkit.Eventually(t, 20*time.Second, "the gateway to answer", func() bool {
		var err error
		status, body, err = get("/orders/items")
		return err == nil
	})
	if status != http.StatusServiceUnavailable || body == "" {
		t.Fatalf("unknown app through the gateway: %d %q", status, body)
	}

	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "orders got %s", r.URL.Path)
	}))
	defer backend.Close()
	bport, _ := strconv.Atoi(port(t, backend.Listener.Addr().String()))
	inst := &eureka.InstanceInfo{InstanceID: "o-1", HasInstanceID: true, App: "ORDERS",
		HostName: "127.0.0.1", IPAddr: "127.0.0.1", Status: eureka.StatusUp, Port: eureka.Port{Number: bport, Enabled: true},
		DataCenterInfo: eureka.DataCenterInfo{Name: eureka.DataCenterMyOwn}}
	resp, err := http.Post("http://"+regAddr+"/eureka/apps/ORDERS", "application/json", bytes.NewReader(eureka.AppendInstanceJSON(nil, inst)))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNoContent {
		t.Fatalf("registering through the snippet's REST API: %d", resp.StatusCode)
	}
	if status, body, err = get("/orders/items"); err != nil || status != http.StatusOK || body != "orders got /items" {
		t.Fatalf("a registered app through the gateway: %d %q %v", status, body, err)
	}
	http.DefaultClient.CloseIdleConnections()

	if err := signal(t, p, os.Interrupt, 10*time.Second, "the gateway"); err != nil {
		t.Fatalf("the gateway did not stop cleanly on an interrupt: %v\n%s", err, p.String())
	}
}

// The fx snippet logs its registration, registers UP once it serves, calls
// INVENTORY by name for /stock, and cancels on SIGINT; with the registry
// unreachable it says so.
func runFxSnippet(t *testing.T, src string) {
	store, regAddr := startRegistry(t)
	inventory := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/items" {
			fmt.Fprint(w, "7 items")
			return
		}
		http.NotFound(w, r)
	}))
	defer inventory.Close()
	invPort, _ := strconv.Atoi(port(t, inventory.Listener.Addr().String()))
	testkit.MustRegister(t, store, &eureka.InstanceInfo{InstanceID: "inv-1", HasInstanceID: true, App: "INVENTORY",
		HostName: "127.0.0.1", IPAddr: "127.0.0.1", Status: eureka.StatusUp, Port: eureka.Port{Number: invPort, Enabled: true},
		DataCenterInfo: eureka.DataCenterInfo{Name: eureka.DataCenterMyOwn}}, false)

	listen := testkit.FreeAddr(t)
	svcPort := port(t, listen)
	bin := buildSnippet(t, src, "localhost:8761", regAddr, "8080", svcPort)

	p := startProc(t, bin)

	registered := func() *eureka.InstanceInfo {
		for _, i := range store.AllInstances("ORDERS") {
			return i
		}
		return nil
	}
	testkit.Eventually(t, 20*time.Second, "ORDERS registered UP", func() bool {
		i := registered()
		return i != nil && i.Status == eureka.StatusUp && strconv.Itoa(i.Port.Number) == svcPort
	})
	testkit.Eventually(t, 10*time.Second, "the log line of the registration", func() bool {
		return strings.Contains(p.String(), "instance registered")
	})
	var body string
	testkit.Eventually(t, 10*time.Second, "GET /stock answered by INVENTORY", func() bool {
		resp, err := http.Get("http://127.0.0.1:" + svcPort + "/stock")
		if err != nil {
			return false
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		body = string(b)
		return resp.StatusCode == http.StatusOK && body == "7 items"
	})
	http.DefaultClient.CloseIdleConnections()

	signal(t, p, syscall.SIGINT, 15*time.Second, "the snippet")
	if i := registered(); i != nil {
		t.Errorf("the registration was not cancelled: %+v", i)
	}

	// Unreachable registry: a warning, not silence.
	dead := testkit.FreeAddr(t)
	bin = buildSnippet(t, src, "localhost:8761", dead, "8080", port(t, testkit.FreeAddr(t)))
	unreachable := startProc(t, bin)
	testkit.Eventually(t, 20*time.Second, "a warning that the registry cannot be reached", func() bool {
		s := unreachable.String()
		return strings.Contains(s, "WARN") && strings.Contains(s, dead)
	})
}
