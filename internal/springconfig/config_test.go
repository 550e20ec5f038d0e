package springconfig

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/eurekagate/eurekagate/internal/testkit"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// dump writes what a Config holds, as the golden files have it.
func dump(t *testing.T, c *Config) string {
	t.Helper()
	var b strings.Builder
	fmt.Fprintf(&b, "profiles: %v\nfiles: %v\n", c.Profiles, c.Files)
	for _, n := range c.Notes {
		fmt.Fprintf(&b, "note: %s\n", n)
	}
	for _, p := range c.Properties() {
		v, err := c.Resolve(p)
		if err != nil {
			v = "error: " + err.Error()
		}
		fmt.Fprintf(&b, "%s = %s (%s)\n", p.Name, v, p.Source)
		for _, s := range c.Shadowed(p.Name) {
			fmt.Fprintf(&b, "  over %s = %s (%s)\n", s.Name, s.Value, s.Source)
		}
	}
	return b.String()
}

func golden(t *testing.T, name, got string) {
	t.Helper()
	testkit.Golden(t, filepath.Join("testdata", name+".golden"), got, *update)
}

// The base file, its profile documents and files, the config/ folder,
// the environment and arguments, in Spring's precedence, with every
// property's source.
func TestLayers(t *testing.T) {
	c, err := Load(Options{
		Dir:      "testdata/layered",
		Environ:  []string{"EUREKA_SERVER_EVICTIONINTERVALTIMERINMS=2000", "SERVER_PORT=8762", "DASH_PATH=/dash", "PATH=/bin"},
		EnvRoots: []string{"EUREKA", "SERVER", "SPRING", "MANAGEMENT"},
		Args:     []string{"--server.port=8763"},
	})
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "layered", dump(t, c))
	zones := c.Map("eureka.client.service-url")
	if len(zones) != 1 || zones[0].Key != "defaultZone" {
		t.Errorf("service-url's keys: %+v", zones)
	}
	list, src, ok, err := c.List("management.endpoints.web.exposure.include")
	if err != nil || !ok || strings.Join(list, ",") != "health,info" || src.Line != 23 {
		t.Errorf("exposure.include: %v from %v (%v, %v)", list, src, ok, err)
	}
}

// The profile a variable names selects its document and file, over the
// one the file names; peer2's document is Boot 2's spelling.
func TestProfileFromEnvironment(t *testing.T) {
	c, err := Load(Options{Dir: "testdata/layered", Environ: []string{"SPRING_PROFILES_ACTIVE=peer2"}, EnvRoots: []string{"SPRING"}})
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "peer2", dump(t, c))
}

// spring.config.location replaces the default locations; a location that
// is not there is an error unless optional:.
func TestLocation(t *testing.T) {
	c, err := Load(Options{Dir: "testdata/layered", Args: []string{"--spring.config.location=config/application.properties,optional:missing/"}})
	if err != nil {
		t.Fatal(err)
	}
	if p, ok, _ := c.Lookup("eureka.environment"); !ok || p.Value != "staging" || p.Source.String() != "config/application.properties:4" {
		t.Errorf("eureka.environment: %+v", p)
	}
	if _, ok, _ := c.Lookup("server.port"); ok {
		t.Error("application.yml read beside an explicit location")
	}
	for _, bad := range []struct{ loc, want string }{
		{"nothere.yml", "spring.config.location: nothere.yml: no such file or directory"},
		{"classpath:/application.yml", "a classpath: location"},
	} {
		_, err := Load(Options{Dir: "testdata/layered", Environ: []string{"SPRING_CONFIG_LOCATION=" + bad.loc}, EnvRoots: []string{"SPRING"}})
		if err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("%s: %v, want %q", bad.loc, err, bad.want)
		}
	}
}

// Relaxed names are one property; the environment's form reaches the
// kebab-case and camelCase names.
func TestRelaxedNames(t *testing.T) {
	for _, n := range []string{"eureka.server.enable-self-preservation", "eureka.server.enableSelfPreservation", "eureka.server.enable_self_preservation", EnvName("EUREKA_SERVER_ENABLESELFPRESERVATION")} {
		if Canonical(n) != "eureka.server.enableselfpreservation" {
			t.Errorf("Canonical(%s) = %s", n, Canonical(n))
		}
	}
	if v := VariableName("eureka.client.service-url.defaultZone"); v != "EUREKA_CLIENT_SERVICEURL_DEFAULTZONE" {
		t.Errorf("VariableName: %s", v)
	}
	known := []string{"eureka.server.enable-self-preservation", "eureka.server.eviction-interval-timer-in-ms"}
	if c, ok := Closest(EnvName("EUREKA_SERVER_ENABLESELFPRESERVATON"), known); !ok || c != known[0] {
		t.Errorf("Closest: %s %v", c, ok)
	}
	if c, ok := Closest("spring.datasource.url", known); ok {
		t.Errorf("Closest of an unrelated name: %s", c)
	}
}

// Placeholders: nested defaults, the environment, and the errors.
func TestPlaceholders(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "application.properties"), []byte(strings.Join([]string{
		"a=${b:${c:deep}}", "host=${HOSTNAME}", "port=${server.port}", "loop=${loop}", "missing=${nope}", "open=${x",
	}, "\n")), 0o644)
	c, err := Load(Options{Dir: dir, Environ: []string{"HOSTNAME=node-7", "SERVER_PORT=9"}})
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{"a": "deep", "host": "node-7", "port": "9"} {
		if p, _, err := c.Lookup(name); err != nil || p.Value != want {
			t.Errorf("%s = %q (%v), want %q", name, p.Value, err, want)
		}
	}
	for name, want := range map[string]string{
		"loop":    "application.properties:4: loop: placeholders nested more than 32 deep",
		"missing": "application.properties:5: missing: could not resolve placeholder ${nope}",
		"open":    "a ${ without its }",
	} {
		if _, _, err := c.Lookup(name); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", name, err, want)
		}
	}
}

// A file Spring could not read is refused with its line.
func TestBadFiles(t *testing.T) {
	for body, want := range map[string]string{
		"a: &x 1\nb: *x\n": "application.yml:2: b: YAML aliases are not read here",
		"a: [1\n":          "application.yml: yaml: line 1",
		"just a value\n":   "application.yml:1: the document is a bare value",
		"? [a]\n: 1\n":     "application.yml:1: a key is a list",
		"spring.config.activate.on-profile: (a|b)\nx: 1\n": "application.yml:1: spring.config.activate.on-profile: \"(a|b)\": profile expressions with parentheses",
	} {
		dir := t.TempDir()
		os.WriteFile(filepath.Join(dir, "application.yml"), []byte(body), 0o644)
		_, err := Load(Options{Dir: dir})
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %q", body, err, want)
		}
	}
}

func TestProfileExpressions(t *testing.T) {
	for _, c := range []struct {
		expr string
		want bool
	}{{"peer1", true}, {"peer2", false}, {"!peer2", true}, {"peer2,peer1", true}, {"peer1&prod", false}, {"peer1&eu", true}, {"prod|eu", true}, {"!peer1", false}} {
		got, err := matchProfiles(c.expr, []string{"peer1", "eu"})
		if err != nil || got != c.want {
			t.Errorf("%s: %v %v, want %v", c.expr, got, err, c.want)
		}
	}
}
