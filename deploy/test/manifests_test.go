package deploytest

import (
	"flag"
	"os"
	"path/filepath"
	"testing"
)

var update = flag.Bool("update", false, "rewrite deploy/kubernetes/ from the chart")

// The plain manifests of deploy/kubernetes/, for users without Helm, are
// the chart's rendering with its defaults (release eurekagate in the
// namespace default), in each mode: the objects TestChartRenders decodes
// and checks. go test -run TestPlainManifests -update rewrites them.
func TestPlainManifests(t *testing.T) {
	for _, m := range []struct{ file, values, told string }{
		{"eurekagate.yaml", "", "the defaults"},
		{"eurekagate-gateway.yaml", "mode: gateway\n", "mode: gateway"},
	} {
		file, values := m.file, m.values
		path := filepath.Join(repoRoot, "deploy/kubernetes", file)
		want := "# Rendered from deploy/helm/eurekagate by deploy/test (go test -run TestPlainManifests -update):\n" +
			"# release eurekagate, namespace default, values: " + m.told + ".\n" +
			render(t, values).text
		if *update {
			if err := os.WriteFile(path, []byte(want), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		got, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != want {
			t.Errorf("%s is not the chart's rendering: run go test -run TestPlainManifests -update in deploy/test", path)
		}
	}
}
