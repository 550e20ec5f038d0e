package deploytest

import (
	"cmp"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/yaml"
)

// valueFiles are the values the chart is rendered with: its defaults in
// either mode, and the files that together change every option.
var valueFiles = []string{"", "mode: gateway\n", "testdata/every-option-registry.yaml", "testdata/every-option-gateway.yaml", "testdata/every-option-caddyfile.yaml"}

// valuesOf returns a valueFiles entry's content.
func valuesOf(t *testing.T, v string) string {
	t.Helper()
	if !strings.HasPrefix(v, "testdata/") {
		return v
	}
	b, err := os.ReadFile(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// The chart renders with its defaults and with every option changed,
// every object decoded strictly into the Kubernetes API's types (render
// fails on an unknown field), and its objects fit together: the peer
// source is the headless Service's DNS name at the port the node listens
// on, the Services and probes reach that port by name, the probe paths
// are the values', selectors select the pods, and the pods run as
// non-root on a read-only root file system.
func TestChartRenders(t *testing.T) {
	for _, v := range valueFiles {
		t.Run(cmp.Or(strings.TrimSpace(v), "defaults"), func(t *testing.T) {
			var values struct {
				Probes struct{ LivenessPath, ReadinessPath string }
				Peers  struct{ ClusterDomain string }
			}
			values.Probes.LivenessPath, values.Probes.ReadinessPath, values.Peers.ClusterDomain = "/actuator/health/liveness", "/actuator/health/readiness", "cluster.local"
			if err := yaml.Unmarshal([]byte(valuesOf(t, v)), &values); err != nil {
				t.Fatal(err)
			}
			r := render(t, valuesOf(t, v))
			w := wiringOf(t, r)
			if w.peers != nil {
				if want := w.headless.Name + "." + release.Namespace + ".svc." + values.Peers.ClusterDomain; w.peers.Hostname() != want {
					t.Errorf("peer source %s: host %s, want the headless Service's name %s", w.peers, w.peers.Hostname(), want)
				}
				if w.peers.Port() != strconv.Itoa(w.port) || w.peers.Path != "/eureka/" {
					t.Errorf("peer source %s: want port %d (the node's) and path /eureka/", w.peers, w.port)
				}
			}
			c := w.container
			for _, p := range []struct {
				probe *corev1.Probe
				path  string
			}{{c.LivenessProbe, values.Probes.LivenessPath}, {c.ReadinessProbe, values.Probes.ReadinessPath}} {
				if p.probe == nil || p.probe.HTTPGet == nil || p.probe.HTTPGet.Path != p.path || p.probe.HTTPGet.Port.String() != "registry" {
					t.Errorf("probe %+v, want GET %s on the port named registry", p.probe, p.path)
				}
			}
			sc := w.sts.Spec.Template.Spec.SecurityContext
			if !strings.Contains(valuesOf(t, v), "ecurityContext:") && (sc == nil || sc.RunAsNonRoot == nil || !*sc.RunAsNonRoot || c.SecurityContext == nil || c.SecurityContext.ReadOnlyRootFilesystem == nil || !*c.SecurityContext.ReadOnlyRootFilesystem) {
				t.Errorf("pod security %+v, container %+v: want non-root and a read-only root file system", sc, c.SecurityContext)
			}
			if c.Resources.Requests.Cpu().IsZero() || c.Resources.Requests.Memory().IsZero() {
				t.Errorf("resources %+v: want requests of CPU and memory", c.Resources)
			}
			if w.sts.Spec.Template.Annotations["checksum/config"] == "" {
				t.Errorf("no checksum/config annotation on the pods")
			}
		})
	}
}

// wiring is what the rendered objects say about each other.
type wiring struct {
	sts              *appsv1.StatefulSet
	container        corev1.Container
	headless, client *corev1.Service
	config           *corev1.ConfigMap
	port             int      // the registry's container port
	peers            *url.URL // the peer source; nil with a Caddyfile of the user's
}

// wiringOf checks that the rendered objects fit together and returns them.
func wiringOf(t *testing.T, r rendered) wiring {
	t.Helper()
	w := wiring{sts: one[appsv1.StatefulSet](t, r), config: one[corev1.ConfigMap](t, r)}
	pods := labels.Set(w.sts.Spec.Template.Labels)
	for _, s := range all[corev1.Service](r) {
		if s.Spec.ClusterIP == corev1.ClusterIPNone {
			w.headless = s
		} else {
			w.client = s
		}
		if !labels.SelectorFromSet(s.Spec.Selector).Matches(pods) {
			t.Errorf("Service %s selects %v, not the pods (%v)", s.Name, s.Spec.Selector, pods)
		}
	}
	if w.headless == nil || w.client == nil {
		t.Fatalf("want a headless Service and a client Service")
	}
	if w.sts.Spec.ServiceName != w.headless.Name || !w.headless.Spec.PublishNotReadyAddresses {
		t.Errorf("StatefulSet's serviceName %q, headless Service %q publishing not-ready addresses %v: want the same name, and true",
			w.sts.Spec.ServiceName, w.headless.Name, w.headless.Spec.PublishNotReadyAddresses)
	}
	if len(w.sts.Spec.Template.Spec.Containers) != 1 {
		t.Fatalf("%d containers, want 1", len(w.sts.Spec.Template.Spec.Containers))
	}
	w.container = w.sts.Spec.Template.Spec.Containers[0]
	for _, p := range w.container.Ports {
		if p.Name == "registry" {
			w.port = int(p.ContainerPort)
		}
	}
	for _, s := range []*corev1.Service{w.headless, w.client} {
		if len(s.Spec.Ports) == 0 || s.Spec.Ports[0].TargetPort.String() != "registry" || int(s.Spec.Ports[0].Port) != w.port {
			t.Errorf("Service %s ports %+v, want %d to the port named registry", s.Name, s.Spec.Ports, w.port)
		}
	}
	for _, pdb := range all[policyv1.PodDisruptionBudget](r) {
		if sel := labels.SelectorFromSet(pdb.Spec.Selector.MatchLabels); !sel.Matches(pods) {
			t.Errorf("PodDisruptionBudget selects %v, not the pods", pdb.Spec.Selector)
		}
	}
	for _, sm := range all[monitoringv1.ServiceMonitor](r) {
		sel := labels.SelectorFromSet(sm.Spec.Selector.MatchLabels)
		if !sel.Matches(labels.Set(w.client.Labels)) || sel.Matches(labels.Set(w.headless.Labels)) {
			t.Errorf("ServiceMonitor selects %v: want the client Service only", sm.Spec.Selector)
		}
		if len(sm.Spec.Endpoints) != 1 || sm.Spec.Endpoints[0].Port != "registry" || sm.Spec.Endpoints[0].Path != "/metrics" {
			t.Errorf("ServiceMonitor endpoints %+v, want /metrics on the port named registry", sm.Spec.Endpoints)
		}
	}
	listen, source := "", ""
	if caddyfile, ok := w.config.Data["Caddyfile"]; ok {
		for _, l := range strings.Split(caddyfile, "\n") {
			l = strings.TrimSpace(l)
			if rest, ok := strings.CutPrefix(l, "peers_dns "); ok {
				source = rest
			}
			if rest, ok := strings.CutPrefix(l, "http://:"); ok && listen == "" {
				listen = strings.TrimSuffix(rest, " {")
			}
		}
	} else {
		var app struct {
			Server struct{ Port int }
		}
		if err := yaml.Unmarshal([]byte(w.config.Data["application.yml"]), &app); err != nil {
			t.Fatalf("the ConfigMap's application.yml: %v", err)
		}
		listen = strconv.Itoa(app.Server.Port)
		for _, a := range w.container.Args {
			if rest, ok := strings.CutPrefix(a, "-peers-dns="); ok {
				source = rest
			}
		}
		if source == "" {
			t.Errorf("container args %q: no -peers-dns", w.container.Args)
		}
	}
	if listen != strconv.Itoa(w.port) {
		t.Errorf("the node listens on port %q, the container's registry port is %d", listen, w.port)
	}
	if source != "" {
		// The nodes' credential comes from the environment, expanded by
		// the kubelet (registry mode) or Caddy (gateway mode).
		u, err := url.Parse(strings.NewReplacer("$(", "", ")", "", "{$", "", "}", "").Replace(source))
		if err != nil {
			t.Fatalf("peer source %q: %v", source, err)
		}
		w.peers = u
	}
	return w
}

// A change of the configuration changes the pods' checksum annotation, so
// that the nodes roll; a change elsewhere does not.
func TestChartChecksumFollowsConfiguration(t *testing.T) {
	checksum := func(values string) string {
		return one[appsv1.StatefulSet](t, render(t, values)).Spec.Template.Annotations["checksum/config"]
	}
	base := checksum("")
	if got := checksum("registry: {application: {eureka: {server: {enable-self-preservation: false}}}}"); got == base {
		t.Errorf("registry.application changed, the checksum did not")
	}
	if got := checksum("gateway: {extraGlobalOptions: 'self_preservation off'}\nmode: gateway"); got == checksum("mode: gateway") {
		t.Errorf("the Caddyfile changed, the checksum did not")
	}
	if got := checksum("replicaCount: 5"); got != base {
		t.Errorf("replicaCount changed the configuration's checksum")
	}
}

// Values the chart would otherwise ignore are refused, each naming the
// value and the reason.
func TestChartRefuses(t *testing.T) {
	for _, tc := range []struct{ values, want string }{
		{"replicas: 3", "replicas"},
		{"mode: both", "mode"},
		{"ports: {registry: 0}", "/ports/registry"},
		{"probes: {livenessPath: health}", "livenessPath"},
		{"podAntiAffinity: always", "podAntiAffinity"},
		{"mode: gateway\nregistry: {application: {eureka: {environment: test}}}", "registry: cmd/eureka's settings apply in registry mode only"},
		{"mode: gateway\nregistry: {flags: {peers-resolve-interval: 10s}}", "registry: cmd/eureka's settings apply in registry mode only"},
		{"registry: {application: {server: {port: 8080}}}", "registry.application.server.port: set by the chart"},
		{"registry: {application: {eureka: {client: {service-url: {defaultZone: http://x/eureka/}}}}}", "registry.application.eureka.client.service-url: the peers are the chart's"},
		{"registry: {application: {management: {server: {port: 8081}}}}", "registry.application.management.server.port: the probes reach the actuator on ports.registry"},
		{"registry: {application: {management: {endpoints: {web: {base-path: /manage}}}}}", "base-path: /manage: the probes' paths"},
		{"gateway: {extraGlobalOptions: 'self_preservation off'}", "gateway: applies in gateway mode only"},
		{"mode: gateway\ngateway: {caddyfile: 'x {', extraGlobalOptions: 'self_preservation off'}", "gateway.extraGlobalOptions: added to the chart's Caddyfile, which gateway.caddyfile replaces"},
		{"registry: {flags: {peers: http://x/eureka/}}", "registry.flags.peers: set by the chart"},
		{"registry: {flags: {Self_Preservation: false}}", "Self_Preservation"},
	} {
		_, err := tryRender(tc.values)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("values %q: error %v, want one naming %q", tc.values, err, tc.want)
		}
	}
}

// The every-option files change every value of the chart's values.yaml:
// each leaf has another value in one of them.
func TestEveryOptionChanged(t *testing.T) {
	defaults := map[string]any{}
	b, err := os.ReadFile(filepath.Join(chartDir, "values.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(b, &defaults); err != nil {
		t.Fatal(err)
	}
	var files []map[string]any
	for _, v := range valueFiles {
		if strings.HasPrefix(v, "testdata/") {
			m := map[string]any{}
			if err := yaml.Unmarshal([]byte(valuesOf(t, v)), &m); err != nil {
				t.Fatal(err)
			}
			files = append(files, m)
		}
	}
	for path, def := range leaves("", defaults) {
		changed := false
		for _, f := range files {
			if got, ok := at(f, path); ok && !reflect.DeepEqual(got, def) {
				changed = true
			}
		}
		if !changed {
			t.Errorf("no every-option file changes %s (default %v)", path, def)
		}
	}
}

// leaves flattens a values document into its leaves by dotted path: a
// scalar, a list, or an empty map.
func leaves(prefix string, m map[string]any) map[string]any {
	out := map[string]any{}
	for k, v := range m {
		path := strings.TrimPrefix(prefix+"."+k, ".")
		if sub, ok := v.(map[string]any); ok && len(sub) > 0 {
			for p, l := range leaves(path, sub) {
				out[p] = l
			}
			continue
		}
		out[path] = v
	}
	return out
}

// at returns the value at a dotted path of a values document.
func at(m map[string]any, path string) (any, bool) {
	var v any = m
	for _, k := range strings.Split(path, ".") {
		sub, ok := v.(map[string]any)
		if !ok {
			return nil, false
		}
		if v, ok = sub[k]; !ok {
			return nil, false
		}
	}
	return v, true
}
