package deploytest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/engine"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"sigs.k8s.io/yaml"
)

// repoRoot is the repository's root, from this module's directory.
const repoRoot = "../.."

var chartDir = filepath.Join(repoRoot, "deploy/helm/eurekagate")

// release is what the chart is rendered as: the plain manifests of
// deploy/kubernetes/ are this release.
var release = chartutil.ReleaseOptions{Name: "eurekagate", Namespace: "default", Revision: 1, IsInstall: true}

// rendered is the chart rendered: its documents, in file order, and the
// objects decoded from them.
type rendered struct {
	text    string // the documents, as helm template prints them
	objects []object
}

// object is one rendered document, decoded strictly into its type.
type object struct {
	file string
	kind string
	obj  any
}

// render renders the chart with values (a values file's content over the
// chart's defaults; "" for the defaults), failing the test if Helm refuses
// them.
func render(t *testing.T, values string) rendered {
	t.Helper()
	r, err := tryRender(values)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// tryRender is render, returning Helm's refusal.
func tryRender(values string) (rendered, error) {
	ch, err := loader.Load(chartDir)
	if err != nil {
		return rendered{}, err
	}
	vals, err := chartutil.ReadValues([]byte(values))
	if err != nil {
		return rendered{}, err
	}
	top, err := chartutil.ToRenderValues(ch, vals, release, chartutil.DefaultCapabilities)
	if err != nil {
		return rendered{}, err
	}
	files, err := engine.Render(ch, top)
	if err != nil {
		return rendered{}, err
	}
	names := make([]string, 0, len(files))
	for name := range files {
		if strings.HasSuffix(name, ".yaml") {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	var r rendered
	for _, name := range names {
		for _, doc := range strings.Split(files[name], "\n---") {
			if strings.TrimSpace(stripComments(doc)) == "" {
				continue
			}
			file := strings.TrimPrefix(name, ch.Name()+"/")
			o, err := decode(file, doc)
			if err != nil {
				return rendered{}, err
			}
			r.objects = append(r.objects, o)
			r.text += "---\n# Source: " + name + "\n" + strings.TrimLeft(doc, "\n") + "\n"
		}
	}
	return r, nil
}

// stripComments drops a document's comment lines.
func stripComments(doc string) string {
	var b strings.Builder
	for _, l := range strings.Split(doc, "\n") {
		if !strings.HasPrefix(strings.TrimSpace(l), "#") {
			b.WriteString(l + "\n")
		}
	}
	return b.String()
}

// decode decodes a document into the Go type of its apiVersion and kind,
// refusing duplicate keys, unknown fields and kinds the chart is not
// meant to make.
func decode(file, doc string) (object, error) {
	js, err := yaml.YAMLToJSONStrict([]byte(doc))
	if err != nil {
		return object{}, fmt.Errorf("%s: %w", file, err)
	}
	var head struct{ APIVersion, Kind string }
	if err := json.Unmarshal(js, &head); err != nil {
		return object{}, fmt.Errorf("%s: %w", file, err)
	}
	var obj any
	switch head.APIVersion + " " + head.Kind {
	case "apps/v1 StatefulSet":
		obj = new(appsv1.StatefulSet)
	case "v1 Service":
		obj = new(corev1.Service)
	case "v1 ConfigMap":
		obj = new(corev1.ConfigMap)
	case "policy/v1 PodDisruptionBudget":
		obj = new(policyv1.PodDisruptionBudget)
	case "monitoring.coreos.com/v1 ServiceMonitor":
		obj = new(monitoringv1.ServiceMonitor)
	default:
		return object{}, fmt.Errorf("%s: unexpected object %s %s", file, head.APIVersion, head.Kind)
	}
	dec := json.NewDecoder(bytes.NewReader(js))
	dec.DisallowUnknownFields()
	if err := dec.Decode(obj); err != nil {
		return object{}, fmt.Errorf("%s: %s %s: %w", file, head.APIVersion, head.Kind, err)
	}
	return object{file: file, kind: head.Kind, obj: obj}, nil
}

// one returns the only object of type T, failing the test if there is
// not exactly one.
func one[T any](t *testing.T, r rendered) *T {
	t.Helper()
	all := all[T](r)
	if len(all) != 1 {
		t.Fatalf("%d objects of type %T, want 1", len(all), *new(T))
	}
	return all[0]
}

// all returns the objects of type T.
func all[T any](r rendered) []*T {
	var out []*T
	for _, o := range r.objects {
		if v, ok := o.obj.(*T); ok {
			out = append(out, v)
		}
	}
	return out
}
