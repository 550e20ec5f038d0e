package interop

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"

	process "github.com/eurekagate/eurekagate/internal/proc"
	"github.com/eurekagate/eurekagate/internal/testkit"
)

// TestMain runs no test, in one line saying why, on a machine without a
// JDK or Maven (and fails under CI=true, where they must be there).
func TestMain(m *testing.M) {
	if msg := missingJava(); msg != "" {
		fmt.Println(msg)
		if os.Getenv("CI") == "true" {
			os.Exit(1)
		}
		os.Exit(0)
	}
	// Caddy, run in this process by some tests, keeps its storage under
	// the XDG directories: keep them out of the home directory.
	dir, err := os.MkdirTemp("", "interop-caddy-")
	if err != nil {
		panic(err)
	}
	os.Setenv("XDG_DATA_HOME", dir)
	os.Setenv("XDG_CONFIG_HOME", dir)
	code := m.Run()
	os.RemoveAll(dir)
	goBuilds.Remove()
	if code == 0 {
		// Caddy's cache of dynamic upstreams forgets hosts an hour after
		// their last use, from a goroutine nothing stops.
		err := goleak.Find(append(append([]goleak.Option{}, testkit.Ignored...),
			goleak.IgnoreAnyFunction("github.com/caddyserver/caddy/v2/modules/caddyhttp/reverseproxy.(*Upstream).fillDynamicHost.func1.1"))...)
		if err != nil {
			fmt.Println("goleak:", err)
			code = 1
		}
	}
	os.Exit(code)
}

// missingJava says which of the JDK and Maven this machine lacks, and
// how to run the tests once it has them; "" when it has both.
func missingJava() string {
	var missing []string
	for _, tool := range []string{"java", "mvn"} {
		if _, err := exec.LookPath(tool); err != nil {
			missing = append(missing, tool)
		}
	}
	if len(missing) == 0 {
		return ""
	}
	return fmt.Sprintf("interop: skipped: %s not found; install OpenJDK 17 and Maven, then run: go test -count=1 -v ./interop/", strings.Join(missing, " and "))
}

// requireJava skips the test (fails it under CI=true) on a machine
// without a JDK or Maven.
func requireJava(t *testing.T) {
	t.Helper()
	if msg := missingJava(); msg != "" {
		if os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
}

var (
	buildMu sync.Mutex
	built   = map[string]string{} // project -> jar, or "" after a failed build
)

// goBuilds holds the module's commands, built once per test run.
var goBuilds = testkit.GoBuilds{Prefix: "interop-bin-"}

// jar builds the Maven project java/<project> once per test run and
// returns its executable jar.
func jar(t *testing.T, project string) string {
	t.Helper()
	requireJava(t)
	buildMu.Lock()
	defer buildMu.Unlock()
	if j, ok := built[project]; ok {
		if j == "" {
			t.Fatalf("the %s project did not build (see the first test that built it)", project)
		}
		return j
	}
	// "client-boot4" is the client project built by its pom-boot4.xml:
	// the same code on Spring Boot 4.0.7 and Spring Cloud 2025.1.4.
	dir, pom, target := filepath.Join("java", project), "pom.xml", "target"
	if base, ok := strings.CutSuffix(project, "-boot4"); ok {
		dir, pom, target = filepath.Join("java", base), "pom-boot4.xml", "target-boot4"
	}
	cmd := exec.Command("mvn", "-B", "-ntp", "-q", "-f", pom, "package", "-DskipTests")
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		built[project] = ""
		t.Fatalf("mvn package in %s: %v\n%s", dir, err, out)
	}
	j, _ := filepath.Abs(filepath.Join(dir, target, "interop-"+project+".jar"))
	built[project] = j
	return j
}

// goBinary builds one of the module's commands (./cmd/eureka) once per
// test run.
func goBinary(t *testing.T, pkg string) string {
	t.Helper()
	buildMu.Lock() // not alongside a Maven build
	defer buildMu.Unlock()
	return goBuilds.Binary(t, "..", "./"+pkg)
}

// proc is a child process of a test, its output kept as lines that can
// be waited for.
type proc struct {
	t *testing.T
	*process.Process
}

// start runs name's command until the test ends (or stop), showing its
// output if the test fails.
func start(t *testing.T, name string, bin string, args ...string) *proc {
	t.Helper()
	return startIn(t, name, "", bin, args...)
}

// startIn is start in the working directory dir ("" for the test's).
func startIn(t *testing.T, name, dir, bin string, args ...string) *proc {
	t.Helper()
	return &proc{t: t, Process: testkit.StartProcess(t, context.Background(), name, process.Config{Dir: dir}, syscall.SIGTERM, stopGrace, bin, args...)}
}

// stopGrace is how long a process has to stop after SIGTERM before it is
// killed: a Spring app deregisters first.
const stopGrace = 20 * time.Second

// stop ends the process gracefully (SIGTERM; a Spring app deregisters),
// killing it after 20 s, and waits for it.
func (p *proc) stop() { p.Stop(syscall.SIGTERM, stopGrace) }

func (p *proc) output() string { return p.String() }

// count is how many lines of the output match re so far.
func (p *proc) count(re string) int { return p.Count(regexp.MustCompile(re)) }

// await waits up to d for a line matching re and returns its submatches.
func (p *proc) await(re string, d time.Duration) []string {
	p.t.Helper()
	return testkit.AwaitLine(p.t, p.Process, re, d)
}

// freePort returns a port free on ip a moment ago, held for the test
// (testkit.FreePortOn).
func freePort(t *testing.T, ip string) int {
	t.Helper()
	return testkit.FreePortOn(t, ip)
}

// javaArgs are the JVM settings of every Java peer: a small heap and the
// C1 compiler only, which starts a Spring app fastest on two cores.
var javaArgs = []string{"-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-Xss512k", "-Xmx256m"}

// quiet are the Spring settings every peer gets: no banner, and the
// output the tests read.
var quiet = []string{"--spring.main.banner-mode=off", "--logging.level.root=WARN",
	"--logging.level.demo=INFO", // "Started ClientApp in ..." is the main class's
	"--logging.level.org.springframework.boot.web.embedded=INFO"}

// startJava runs a Java peer's jar with args and waits until Spring says
// it has started.
func startJava(t *testing.T, name, project string, args ...string) *proc {
	t.Helper()
	all := append(append(append([]string(nil), javaArgs...), "-jar", jar(t, project)), quiet...)
	p := start(t, name, "java", append(all, args...)...)
	p.await(`Started \w+ in [0-9.]+ seconds`, 90*time.Second)
	return p
}

// startJavaOnFreePort runs a Java peer listening on a free port of ip,
// args(port) its arguments, and waits until Spring says it has started.
// A JVM takes seconds from the port's pick to its bind, long enough for
// another test's process to take the port (seen on a loaded machine:
// "Port 35917 was already in use"): a start that fails so is tried again
// on another port, three times in all.
func startJavaOnFreePort(t *testing.T, name, project, ip string, args func(port int) []string) (*proc, int) {
	t.Helper()
	all := append(append(append([]string(nil), javaArgs...), "-jar", jar(t, project)), quiet...)
	started := regexp.MustCompile(`Started \w+ in [0-9.]+ seconds`)
	for try := 1; ; try++ {
		port := freePort(t, ip)
		p := start(t, name, "java", append(all, args(port)...)...)
		_, err := p.Await(started, 90*time.Second)
		if err == nil {
			return p, port
		}
		if try == 3 || !p.Exited() || !strings.Contains(p.Tail(4000), "was already in use") {
			t.Fatal(err)
		}
		t.Logf("%s: port %d was taken before it bound; again on another port", name, port)
	}
}

// springClient is a Spring Boot service with the Eureka client.
type springClient struct {
	*proc
	app, id string
	port    int
}

// startSpringClient runs the client project as app (instance id id)
// against serviceURL, with every interval shortened to a second:
// heartbeats (lease-renewal-interval), fetches (registry-fetch-interval),
// the on-demand replication limit (instance-info-replication-interval)
// and the LoadBalancer's cache (cache.ttl), so that a change shows in
// seconds rather than the 30 s + 35 s of the defaults. It waits for the
// registration.
func startSpringClient(t *testing.T, app, id, serviceURL string, extra ...string) *springClient {
	t.Helper()
	return startSpringClientOf(t, "client", app, id, serviceURL, extra...)
}

// springLines are the Spring lines the client tests run on: Boot 3.5.7
// with Spring Cloud 2025.0.0 (the java/ projects), and Boot 4.0.7 with
// 2025.1.4 (java/client/pom-boot4.xml), whose Eureka client talks through
// RestClient rather than RestTemplate.
var springLines = []struct{ name, project string }{{"boot3", "client"}, {"boot4", "client-boot4"}}

// startSpringClientOf is startSpringClient with the client project of one
// of springLines.
func startSpringClientOf(t *testing.T, project, app, id, serviceURL string, extra ...string) *springClient {
	t.Helper()
	args := []string{
		"--server.address=127.0.0.1",
		"--spring.application.name=" + app,
		"--eureka.instance.instance-id=" + id,
		"--eureka.instance.hostname=127.0.0.1",
		"--eureka.instance.ip-address=127.0.0.1",
		"--eureka.client.service-url.defaultZone=" + serviceURL,
		"--eureka.instance.lease-renewal-interval-in-seconds=1",
		"--eureka.instance.lease-expiration-duration-in-seconds=10",
		"--eureka.client.registry-fetch-interval-seconds=1",
		"--eureka.client.instance-info-replication-interval-seconds=1",
		"--eureka.client.initial-instance-info-replication-interval-seconds=1",
		"--spring.cloud.loadbalancer.cache.ttl=1s",
		"--management.endpoints.web.exposure.include=health,serviceregistry",
		// The fetches and their outcome (delta, full, a hash mismatch)
		// are logged at DEBUG only.
		"--logging.level.com.netflix.discovery.DiscoveryClient=DEBUG",
	}
	p, port := startJavaOnFreePort(t, "spring client "+id, project, "127.0.0.1", func(port int) []string {
		return append(append([]string{fmt.Sprintf("--server.port=%d", port)}, args...), extra...)
	})
	p.await(`registration status: 204`, 30*time.Second)
	return &springClient{proc: p, app: app, id: id, port: port}
}

func (c *springClient) url(path string) string {
	return fmt.Sprintf("http://127.0.0.1:%d%s", c.port, path)
}

// httpc is the tests' HTTP client: bounded, no kept-alive connections
// left behind.
var httpc = &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}

// call makes a request and returns its status and body.
func call(t *testing.T, method, url string, body io.Reader, header ...string) (int, string) {
	t.Helper()
	status, b, err := tryCall(method, url, body, header...)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	return status, b
}

func tryCall(method, url string, body io.Reader, header ...string) (int, string, error) {
	req, err := http.NewRequest(method, url, body)
	if err != nil {
		return 0, "", err
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := httpc.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), err
}

// eventually retries cond every 100 ms until it holds or d passes.
func eventually(t *testing.T, d time.Duration, what string, cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		ok, got := cond()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %v; last: %s", what, d, got)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// ourServer is our standalone server (cmd/eureka) as a process.
type ourServer struct {
	*proc
	addr, gateway string // host:port; gateway "" when not served
}

// serviceURL is the server's Eureka service URL.
func (s *ourServer) serviceURL() string { return "http://" + s.addr + "/eureka/" }

// startOurServer runs cmd/eureka on ip with args (a gateway beside it when
// withGateway), evicting every second, and waits until it serves.
func startOurServer(t *testing.T, name, ip string, withGateway bool, args ...string) *ourServer {
	t.Helper()
	if withGateway {
		gw := fmt.Sprintf("%s:%d", ip, freePort(t, ip))
		s := startOurServerAt(t, name, fmt.Sprintf("%s:%d", ip, freePort(t, ip)), append([]string{"-gateway", gw}, args...)...)
		s.gateway = gw
		return s
	}
	return startOurServerAt(t, name, fmt.Sprintf("%s:%d", ip, freePort(t, ip)), args...)
}

// startOurServerAt is startOurServer on addr (for nodes that must know
// each other's URLs before they start), without a gateway unless args
// ask for one.
func startOurServerAt(t *testing.T, name, addr string, args ...string) *ourServer {
	t.Helper()
	s := &ourServer{addr: addr}
	all := []string{"-addr", s.addr, "-eviction-interval", "1s", "-dashboard-path", "off"}
	s.proc = start(t, name, goBinary(t, "cmd/eureka"), append(all, args...)...)
	s.await(`"registry listening"`, 30*time.Second)
	return s
}
