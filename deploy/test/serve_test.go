package deploytest

import (
	"fmt"
	"os/exec"
	"regexp"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/eurekagate/eurekagate/internal/testkit"
)

// peerSourceFlag is cmd/eureka's flag for peers found by DNS, which the
// chart gives every node; peerSourceOption is Caddy's.
const (
	peerSourceFlag   = "peers-dns"
	peerSourceOption = "peers_dns"
)

// The chart's registry configuration is cmd/eureka's: every setting it
// passes (the ConfigMap's EUREKA_* variables, the container's flags) is a
// flag of eureka -h.
func TestChartFlagsAreEurekas(t *testing.T) {
	flags := eurekaFlags(t)
	w := wiringOf(t, render(t, valuesOf(t, "testdata/every-option-registry.yaml")))
	var names []string
	for env := range w.config.Data {
		names = append(names, strings.ReplaceAll(strings.ToLower(strings.TrimPrefix(env, "EUREKA_")), "_", "-"))
	}
	for _, e := range w.container.Env {
		if rest, ok := strings.CutPrefix(e.Name, "EUREKA_"); ok {
			names = append(names, strings.ReplaceAll(strings.ToLower(rest), "_", "-"))
		}
	}
	for _, a := range w.container.Args {
		name, _, _ := strings.Cut(strings.TrimPrefix(a, "-"), "=")
		names = append(names, name)
	}
	for _, name := range names {
		t.Run("-"+name, func(t *testing.T) {
			if name == peerSourceFlag && !flags[name] {
				// Issue 46's first item adds it; the lead checks it after the merge.
				t.Skipf("cmd/eureka has no -%s yet: the chart passes it to every node as its peer source", peerSourceFlag)
			}
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
			out, err := adapt(t, caddy, caddyfile)
			if err != nil && strings.Contains(out, peerSourceOption) && !caddyKnows(t, caddy, peerSourceOption) {
				t.Skipf("the eureka app has no %s option yet, which the chart's Caddyfile gives it", peerSourceOption)
			}
			if err != nil {
				t.Errorf("caddy adapt: %v\n%s\n%s", err, out, caddyfile)
			}
		})
	}
}

// The binaries serve the chart's probe paths and /metrics on the port the
// chart gives them, with the chart's configuration and environment (its
// peer source left out: a single node has no peers), and the Secret's
// account guards writes.
func TestChartProbesAreServed(t *testing.T) {
	secret := map[string]string{"user": "ops", "password": "s3cret", "password-hash": testkit.PasswordHash(t, "s3cret")}
	t.Run("registry", func(t *testing.T) {
		port := testkit.FreePort(t)
		w := wiringOf(t, render(t, valuesOf(t, "testdata/every-option-registry.yaml")+fmt.Sprintf("\nports: {registry: %d}\n", port)))
		env := containerEnv(t, w, secret)
		for n, e := range env {
			if rest, ok := strings.CutPrefix(e, "EUREKA_ADDR="); ok {
				env[n] = "EUREKA_ADDR=127.0.0.1" + rest
			}
		}
		var args []string
		for _, a := range w.container.Args {
			if !strings.HasPrefix(a, "-"+peerSourceFlag+"=") {
				args = append(args, a)
			}
		}
		p := start(t, env, builds.Binary(t, repoRoot, "./cmd/eureka"), args...)
		probe(t, p, port, w.container)
		checkAuth(t, port, secret)
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
		env := append(containerEnv(t, w, secret), "XDG_CONFIG_HOME="+dir, "XDG_DATA_HOME="+dir)
		p := start(t, env, builds.Binary(t, repoRoot, "./cmd/caddy"), "run", "--config", config, "--adapter", "caddyfile")
		probe(t, p, port, w.container)
		checkAuth(t, port, secret)
	})
}

// containerEnv is the environment the kubelet gives the container: the
// ConfigMap's variables, then its env, each read from secret (a Secret's
// keys) or with $(NAME) of the variables before it expanded.
func containerEnv(t *testing.T, w wiring, secret map[string]string) []string {
	t.Helper()
	vars := map[string]string{}
	var env []string
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
	for _, e := range w.container.Env {
		switch {
		case e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil:
			set(e.Name, secret[e.ValueFrom.SecretKeyRef.Key])
		case e.ValueFrom == nil:
			set(e.Name, ref.ReplaceAllStringFunc(e.Value, func(m string) string { return vars[m[2:len(m)-1]] }))
		default:
			t.Fatalf("env %s: a source the test does not know", e.Name)
		}
	}
	return env
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

// probe checks that the container's probes and /metrics answer 200 on
// port.
func probe(t *testing.T, p *process, port int, c corev1.Container) {
	t.Helper()
	for _, path := range []string{c.LivenessProbe.HTTPGet.Path, c.ReadinessProbe.HTTPGet.Path, "/metrics"} {
		p.waitFor200(t, fmt.Sprintf("http://127.0.0.1:%d%s", port, path))
	}
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

// caddyKnows reports whether the eureka app's Caddyfile takes option.
func caddyKnows(t *testing.T, caddy, option string) bool {
	out, _ := adapt(t, caddy, "{\n\teureka {\n\t\tregistry default\n\t\t"+option+" http://127.0.0.1:1/eureka/\n\t}\n}\n")
	return !strings.Contains(out, "unrecognized") && !strings.Contains(out, "unknown")
}
