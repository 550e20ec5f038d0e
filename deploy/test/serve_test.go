package deploytest

import (
	"cmp"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"regexp"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/eurekagate/eurekagate/internal/testkit"
)

// peerSourceOption is the eureka app's option for peers found by DNS,
// which the chart's Caddyfile gives every node.
const peerSourceOption = "peers_dns"

// The chart's registry configuration is cmd/eureka's: every flag it
// passes (the container's arguments and EUREKA_* variables) is a flag of
// eureka -h; the Spring configuration is checked by running it
// (TestChartProbesAreServed).
func TestChartFlagsAreEurekas(t *testing.T) {
	flags := eurekaFlags(t)
	w := wiringOf(t, render(t, valuesOf(t, "testdata/every-option-registry.yaml")))
	var names []string
	for _, e := range w.container.Env {
		if rest, ok := strings.CutPrefix(e.Name, "EUREKA_"); ok {
			names = append(names, strings.ReplaceAll(strings.ToLower(rest), "_", "-"))
		}
	}
	for _, a := range w.container.Args {
		if strings.HasPrefix(a, "--spring.") {
			continue
		}
		name, _, _ := strings.Cut(strings.TrimPrefix(a, "-"), "=")
		names = append(names, name)
	}
	for _, name := range names {
		t.Run("-"+name, func(t *testing.T) {
			if !flags[name] {
				t.Errorf("the chart sets -%s, which eureka -h does not list", name)
			}
		})
	}
}

// Caddy with our modules adapts the chart's Caddyfile, peers_dns and the
// extra options included.
func TestChartCaddyfileAdapts(t *testing.T) {
	caddy := builds.Binary(t, repoRoot, "./cmd/caddy")
	for _, v := range []string{"mode: gateway\n", "testdata/every-option-gateway.yaml", "testdata/every-option-caddyfile.yaml"} {
		t.Run(strings.TrimSpace(v), func(t *testing.T) {
			caddyfile := wiringOf(t, render(t, valuesOf(t, v))).config.Data["Caddyfile"]
			if out, err := adapt(t, caddy, caddyfile); err != nil {
				t.Errorf("caddy adapt: %v\n%s\n%s", err, out, caddyfile)
			}
		})
	}
}

// The binaries run with the chart's configuration, mounted where the
// chart mounts it, its arguments and the environment the kubelet gives
// them, the peer source looked up in a DNS server of the test's whose
// headless name is the node itself (a single node, which leaves itself
// out); their probes answer as the kubelet asks them, readiness UP once
// the node is ready, /metrics answers on the chart's port, and the
// Secret's account guards writes. cmd/eureka logs no property of the
// chart's application.yml as unknown or ignored.
func TestChartProbesAreServed(t *testing.T) {
	secret := map[string]string{"user": "ops", "password": "s3cret", "password-hash": testkit.PasswordHash(t, "s3cret")}
	runRegistry := func(t *testing.T, values string) (*process, wiring, int) {
		port := testkit.FreePort(t)
		w := wiringOf(t, render(t, values+fmt.Sprintf("\nports: {registry: %d}\n", port)))
		env, expand := containerEnv(t, w, secret)
		dir := mountConfig(t, w)
		dns := testkit.NewDNS(t)
		dns.SetA(w.peers.Hostname(), "127.0.0.1")
		args := []string{"--server.address=127.0.0.1", "-dns-resolver=" + dns.Addr()}
		for _, a := range w.container.Args {
			args = append(args, strings.ReplaceAll(expand(a), configMount(t, w), dir))
		}
		p := start(t, env, builds.Binary(t, repoRoot, "./cmd/eureka"), args...)
		probe(t, p, port, w.container)
		return p, w, port
	}
	t.Run("registry", func(t *testing.T) {
		p, _, port := runRegistry(t, valuesOf(t, "testdata/every-option-registry.yaml"))
		checkAuth(t, port, secret)
		for _, l := range strings.Split(p.out.String(), "\n") {
			if strings.Contains(l, ": unknown property") || strings.Contains(l, ": ignored (") {
				t.Errorf("cmd/eureka did not apply a setting of the chart's: %s", l)
			}
		}
	})
	t.Run("registry/a property it does not know is logged", func(t *testing.T) {
		// What the check above looks for is what cmd/eureka logs.
		p, _, _ := runRegistry(t, "registry: {application: {eureka: {server: {enable-self-preservaton: false}}}}")
		if !strings.Contains(p.out.String(), "eureka.server.enable-self-preservaton: unknown property") {
			t.Errorf("no unknown property line for a typo:\n%s", p.out.String())
		}
	})
	t.Run("gateway", func(t *testing.T) {
		port, gw := testkit.FreePort(t), testkit.FreePort(t)
		w := wiringOf(t, render(t, valuesOf(t, "testdata/every-option-gateway.yaml")+fmt.Sprintf("\nports: {registry: %d, gateway: %d}\n", port, gw)))
		var lines []string
		for _, l := range strings.Split(w.config.Data["Caddyfile"], "\n") {
			if strings.HasPrefix(strings.TrimSpace(l), peerSourceOption+" ") {
				continue
			}
			lines = append(lines, l)
			if len(lines) == 1 {
				// On loopback, with an admin endpoint of the test's.
				lines = append(lines, "\tdefault_bind 127.0.0.1", fmt.Sprintf("\tadmin 127.0.0.1:%d", testkit.FreePort(t)))
			}
		}
		dir := t.TempDir()
		config := dir + "/Caddyfile"
		if err := writeFile(config, strings.NewReader(strings.Join(lines, "\n")), 0o644); err != nil {
			t.Fatal(err)
		}
		env, _ := containerEnv(t, w, secret)
		env = append(env, "XDG_CONFIG_HOME="+dir, "XDG_DATA_HOME="+dir)
		p := start(t, env, builds.Binary(t, repoRoot, "./cmd/caddy"), "run", "--config", config, "--adapter", "caddyfile")
		probe(t, p, port, w.container)
		checkAuth(t, port, secret)
	})
}

// configMount is where the container mounts the chart's ConfigMap.
func configMount(t *testing.T, w wiring) string {
	t.Helper()
	for _, v := range w.sts.Spec.Template.Spec.Volumes {
		if v.ConfigMap == nil || v.ConfigMap.Name != w.config.Name {
			continue
		}
		for _, m := range w.container.VolumeMounts {
			if m.Name == v.Name {
				return m.MountPath
			}
		}
	}
	t.Fatalf("the container does not mount the ConfigMap %s", w.config.Name)
	return ""
}

// mountConfig writes the ConfigMap's keys as files into a directory of
// the test's, as the kubelet does at configMount, and returns it.
func mountConfig(t *testing.T, w wiring) string {
	t.Helper()
	dir := t.TempDir()
	for k, v := range w.config.Data {
		if err := writeFile(dir+"/"+k, strings.NewReader(v), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// containerEnv is the environment the kubelet gives the container: the
// variables of its envFrom ConfigMap, then its env, each read from secret
// (a Secret's keys) or with $(NAME) of the variables before it expanded;
// expand expands $(NAME) in the container's arguments as the kubelet does.
func containerEnv(t *testing.T, w wiring, secret map[string]string) (env []string, expand func(string) string) {
	t.Helper()
	vars := map[string]string{}
	set := func(k, v string) {
		vars[k] = v
		env = append(env, k+"="+v)
	}
	for _, from := range w.container.EnvFrom {
		if from.ConfigMapRef == nil || from.ConfigMapRef.Name != w.config.Name {
			t.Fatalf("envFrom %+v: want the chart's ConfigMap", from)
		}
		for k, v := range w.config.Data {
			set(k, v)
		}
	}
	ref := regexp.MustCompile(`\$\(([A-Za-z_][A-Za-z0-9_]*)\)`)
	expand = func(s string) string {
		return ref.ReplaceAllStringFunc(s, func(m string) string { return vars[m[2:len(m)-1]] })
	}
	for _, e := range w.container.Env {
		switch {
		case e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil:
			set(e.Name, secret[e.ValueFrom.SecretKeyRef.Key])
		case e.ValueFrom == nil:
			set(e.Name, expand(e.Value))
		default:
			t.Fatalf("env %s: a source the test does not know", e.Name)
		}
	}
	return env, expand
}

// checkAuth checks that a registration on port needs the Secret's account.
func checkAuth(t *testing.T, port int, secret map[string]string) {
	t.Helper()
	reg := fmt.Sprintf("http://127.0.0.1:%d/eureka/apps/ORDERS", port)
	body := `{"instance":{"instanceId":"i1","hostName":"127.0.0.1","app":"ORDERS","ipAddr":"127.0.0.1","port":{"$":9000,"@enabled":"true"},"dataCenterInfo":{"@class":"com.netflix.appinfo.InstanceInfo$DefaultDataCenterInfo","name":"MyOwn"}}}`
	if code := testkit.StatusAs(t, "POST", reg, "", "", body); code != 401 {
		t.Errorf("a registration without credentials: %d, want 401", code)
	}
	if code := testkit.StatusAs(t, "POST", reg, secret["user"], secret["password"], body); code != 204 {
		t.Errorf("a registration with the Secret's account: %d, want 204", code)
	}
}

// probe checks that the container's probes succeed as the kubelet
// would have them (its request to the pod's address at the probe's port,
// scheme and headers; a status from 200 to 399), readiness with
// {"status":"UP"}, and that /metrics answers 200 on port.
func probe(t *testing.T, p *process, port int, c corev1.Container) {
	t.Helper()
	for _, pr := range []*corev1.Probe{c.LivenessProbe, c.ReadinessProbe} {
		p.waitFor(t, "the kubelet's probe of "+pr.HTTPGet.Path+" succeeds", func() bool {
			code, body := kubeletProbe(t, port, c, pr.HTTPGet)
			return code >= 200 && code < 400 && (pr != c.ReadinessProbe || strings.Contains(body, `"status":"UP"`))
		})
	}
	p.waitFor200(t, fmt.Sprintf("http://127.0.0.1:%d/metrics", port))
}

// kubeletProbe makes the kubelet's request of an HTTP probe to the pod on
// loopback, its named port resolved to port (the test's), and returns the
// status and body.
func kubeletProbe(t *testing.T, port int, c corev1.Container, g *corev1.HTTPGetAction) (int, string) {
	t.Helper()
	named := false
	for _, cp := range c.Ports {
		named = named || (cp.Name == g.Port.String() && cp.Name != "")
	}
	if !named {
		t.Fatalf("probe port %s: not a port of the container", g.Port.String())
	}
	scheme := strings.ToLower(string(cmp.Or(g.Scheme, corev1.URISchemeHTTP)))
	req, err := http.NewRequest("GET", fmt.Sprintf("%s://127.0.0.1:%d%s", scheme, port, g.Path), nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("User-Agent", "kube-probe/1.37")
	req.Header.Set("Accept", "*/*")
	for _, h := range g.HTTPHeaders {
		req.Header.Set(h.Name, h.Value)
	}
	resp, err := httpClient().Do(req)
	if err != nil {
		return 0, ""
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

// eurekaFlags returns the flags cmd/eureka lists in its -h.
func eurekaFlags(t *testing.T) map[string]bool {
	t.Helper()
	out, _ := exec.Command(builds.Binary(t, repoRoot, "./cmd/eureka"), "-h").CombinedOutput()
	flags := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^  -(\S+)`).FindAllStringSubmatch(string(out), -1) {
		flags[m[1]] = true
	}
	if len(flags) == 0 {
		t.Fatalf("no flag in eureka -h:\n%s", out)
	}
	return flags
}

// adapt runs caddy adapt on a Caddyfile and returns its output.
func adapt(t *testing.T, caddy, caddyfile string) (string, error) {
	t.Helper()
	config := t.TempDir() + "/Caddyfile"
	if err := writeFile(config, strings.NewReader(caddyfile), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(caddy, "adapt", "--config", config, "--adapter", "caddyfile").CombinedOutput()
	return string(out), err
}
