package main

import (
	"cmp"
	"flag"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/eurekagate/eurekagate/internal/testkit"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// environ is a process environment in os.Environ's form.
func environ(vars map[string]string) []string {
	var out []string
	for k, v := range vars {
		out = append(out, k+"="+v)
	}
	slices.Sort(out)
	return out
}

// springDir is a directory holding the files, for the Spring
// configuration's tests.
func springDir(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, body := range files {
		if err := os.MkdirAll(filepath.Join(dir, filepath.Dir(name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// parseSpring reads the settings as main does, from the environment and
// the files in dir.
func parseSpring(t *testing.T, dir string, vars map[string]string, args ...string) (*options, error) {
	t.Helper()
	return parseConfig(args, envOf(vars), environ(vars), dir, io.Discard)
}

// Each variable in Spring's relaxed form reaches its setting, with no
// file (issue 45: the ten most used).
func TestSpringEnvironmentMatrix(t *testing.T) {
	profiles := springDir(t, map[string]string{"application.yml": "eureka.environment: base\n---\nspring.config.activate.on-profile: peer2\neureka.environment: peer2-env\n"})
	for _, c := range []struct {
		vars  map[string]string
		dir   string
		check func(o *options) bool
	}{
		{map[string]string{"SERVER_PORT": "8765"}, "", func(o *options) bool { return o.server.Addr == ":8765" }},
		{map[string]string{"SERVER_PORT": "8765", "SERVER_ADDRESS": "127.0.0.9"}, "", func(o *options) bool { return o.server.Addr == "127.0.0.9:8765" }},
		{map[string]string{"EUREKA_CLIENT_SERVICEURL_DEFAULTZONE": "http://peer:8761/eureka/,http://peer2:8761/eureka"}, "", func(o *options) bool {
			return slices.Equal(o.registry.Peers.Peers, []string{"http://peer:8761/eureka/", "http://peer2:8761/eureka/"})
		}},
		{map[string]string{"EUREKA_SERVER_ENABLESELFPRESERVATION": "false"}, "", func(o *options) bool { return o.registry.Store.DisableSelfPreservation }},
		{map[string]string{"EUREKA_SERVER_EVICTIONINTERVALTIMERINMS": "1500"}, "", func(o *options) bool { return o.registry.Store.EvictionInterval == 1500*time.Millisecond }},
		{map[string]string{"EUREKA_SERVER_RENEWALPERCENTTHRESHOLD": "0.5"}, "", func(o *options) bool { return o.registry.Store.RenewalPercentThreshold == 0.5 }},
		{map[string]string{"EUREKA_SERVER_EXPECTEDCLIENTRENEWALINTERVALSECONDS": "5"}, "", func(o *options) bool {
			return o.registry.Store.ExpectedClientRenewalInterval == 5*time.Second
		}},
		{map[string]string{"EUREKA_INSTANCE_HOSTNAME": "peer1", "SERVER_PORT": "8770"}, "", func(o *options) bool {
			return slices.Contains(o.registry.Peers.SelfAddrs, "peer1:8770")
		}},
		{map[string]string{"SPRING_PROFILES_ACTIVE": "peer2"}, profiles, func(o *options) bool { return o.registry.API.Environment == "peer2-env" }},
		{map[string]string{"SPRING_SECURITY_USER_NAME": "ops", "SPRING_SECURITY_USER_PASSWORD": "s3cret"}, "", func(o *options) bool {
			a := o.registry.API.Auth
			return len(a.Users) == 1 && a.Users[0].Username == "ops" && bcrypt.CompareHashAndPassword([]byte(a.Users[0].PasswordHash), []byte("s3cret")) == nil && a.RequireForReads
		}},
		{map[string]string{"SPRING_SECURITY_USER_PASSWORD": "{noop}s3cret"}, "", func(o *options) bool {
			a := o.registry.API.Auth
			return len(a.Users) == 1 && a.Users[0].Username == "user" && bcrypt.CompareHashAndPassword([]byte(a.Users[0].PasswordHash), []byte("s3cret")) == nil
		}},
		{map[string]string{"MANAGEMENT_ENDPOINTS_WEB_EXPOSURE_INCLUDE": "health,info"}, "", func(o *options) bool {
			return slices.Equal(o.actuator.exposure, []string{"health", "info"})
		}},
		{map[string]string{"EUREKA_SERVER_MYURL": "http://me:8761/eureka/"}, "", func(o *options) bool { return o.registry.Peers.Self == "http://me:8761/eureka/" }},
		{map[string]string{"EUREKA_DASHBOARD_ENABLED": "false"}, "", func(o *options) bool { return o.dashboardPath == "" }},
		{map[string]string{"EUREKA_ENVIRONMENT": "prod"}, "", func(o *options) bool { return o.registry.API.Environment == "prod" }},
		{map[string]string{"SERVER_SERVLET_CONTEXTPATH": "/registry"}, "", func(o *options) bool {
			return o.registry.API.Prefix == "/registry/eureka" && o.actuator.path == "/registry/actuator"
		}},
		{map[string]string{"EUREKA_SERVER_WAITTIMEINMSWHENSYNCEMPTY": "0"}, "", func(o *options) bool { return o.registry.Peers.StartupSyncEmptyWait == 0 }},
	} {
		dir := cmp.Or(c.dir, t.TempDir())
		o, err := parseSpring(t, dir, c.vars)
		if err != nil {
			t.Errorf("%v: %v", c.vars, err)
			continue
		}
		if !c.check(o) {
			t.Errorf("%v did not reach its setting: %+v", c.vars, o)
		}
		if len(o.springNotes) > 0 {
			t.Errorf("%v: notes %q", c.vars, o.springNotes)
		}
	}
}

// A typo is named with its closest known name; a value of the wrong type
// stops the start with its source, the property and the reason.
func TestSpringTyposAndBadValues(t *testing.T) {
	o, err := parseSpring(t, t.TempDir(), map[string]string{"EUREKA_SERVER_ENABLESELFPRESERVATON": "false"})
	if err != nil {
		t.Fatal(err)
	}
	want := "variable EUREKA_SERVER_ENABLESELFPRESERVATON: eureka.server.enableselfpreservaton: unknown property (closest known: eureka.server.enable-self-preservation, EUREKA_SERVER_ENABLESELFPRESERVATION)"
	if !slices.Contains(o.springNotes, want) {
		t.Errorf("notes %q, want %q", o.springNotes, want)
	}
	if o.registry.Store.DisableSelfPreservation {
		t.Error("a typo took effect")
	}
	for _, c := range []struct {
		vars  map[string]string
		files map[string]string
		want  string
	}{
		{map[string]string{"EUREKA_SERVER_EVICTIONINTERVALTIMERINMS": "1s"}, nil,
			`variable EUREKA_SERVER_EVICTIONINTERVALTIMERINMS: eureka.server.evictionintervaltimerinms: "1s" is not a whole number of milliseconds`},
		{map[string]string{"EUREKA_SERVER_ENABLESELFPRESERVATION": "maybe"}, nil,
			`variable EUREKA_SERVER_ENABLESELFPRESERVATION: eureka.server.enableselfpreservation: "maybe" is not true or false`},
		{nil, map[string]string{"application.yml": "eureka:\n  server:\n    renewal-percent-threshold: 2\n"},
			"application.yml:3 eureka.server.renewal-percent-threshold: -renewal-percent-threshold must be in (0, 1], got 2"},
		{nil, map[string]string{"application.properties": "server.port=http\n"}, `application.properties:1: server.port: "http" is not a port`},
		{nil, map[string]string{"config/application.yml": "eureka.server.renewal-percent-threshold: lots\n"},
			`config/application.yml:1 eureka.server.renewal-percent-threshold: parse error`},
		{nil, map[string]string{"application.yml": "spring.security.user.name: ops\n"}, "application.yml:1: spring.security.user.name: set without spring.security.user.password"},
		{nil, map[string]string{"application.yml": "spring.security.user.password: '{pbkdf2}x'\n"}, "{pbkdf2} passwords are not read here"},
		{nil, map[string]string{"application.yml": "server.ssl.key-store: ks.p12\nserver.ssl.key-store-type: JKS\n"}, "application.yml:1: server.ssl.key-store: only PKCS12 stores are read here"},
		{nil, map[string]string{"application.yml": "server.ssl.client-auth: need\nserver.ssl.certificate: c.pem\n"}, "application.yml:1: server.ssl.client-auth: need without server.ssl.trust-certificate"},
		{nil, map[string]string{"application.yml": "eureka.client.serviceUrl.defaultZone: http://${nohost}/eureka/\n"}, "application.yml:1: eureka.client.serviceUrl.defaultZone: could not resolve placeholder ${nohost}"},
		{nil, map[string]string{"application.yml": "eureka.client.serviceUrl.defaultZone: http://bad host/eureka/\n"}, "application.yml:1 eureka.client.serviceUrl.defaultZone: -peers:"},
	} {
		_, err := parseSpring(t, springDir(t, c.files), c.vars)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v %v: %v, want %q", c.vars, c.files, err, c.want)
		}
	}
}

// Spring's precedence: the base file, its profile's file, Spring's
// variables, ours, Spring's arguments, our flags, each over the ones
// before; a setting two of them name is told.
func TestSpringPrecedence(t *testing.T) {
	dir := springDir(t, map[string]string{
		"application.yml":        "spring.profiles.active: p\neureka.server.eviction-interval-timer-in-ms: 1000\neureka.server.renewal-percent-threshold: 0.1\n",
		"application-p.yml":      "eureka.server.eviction-interval-timer-in-ms: 2000\nserver.port: 1\n",
		"config/application.yml": "eureka.environment: from-config\n",
	})
	steps := []struct {
		vars map[string]string
		args []string
		want time.Duration
		from string
	}{
		{nil, nil, 2 * time.Second, "application-p.yml:1 eureka.server.eviction-interval-timer-in-ms"},
		{map[string]string{"EUREKA_SERVER_EVICTIONINTERVALTIMERINMS": "3000"}, nil, 3 * time.Second, "variable EUREKA_SERVER_EVICTIONINTERVALTIMERINMS"},
		{map[string]string{"EUREKA_SERVER_EVICTIONINTERVALTIMERINMS": "3000", "EUREKA_EVICTION_INTERVAL": "4s"}, nil, 4 * time.Second, "variable EUREKA_EVICTION_INTERVAL"},
		{map[string]string{"EUREKA_EVICTION_INTERVAL": "4s"}, []string{"--eureka.server.eviction-interval-timer-in-ms=5000"}, 5 * time.Second, "argument --eureka.server.eviction-interval-timer-in-ms"},
		{map[string]string{"EUREKA_EVICTION_INTERVAL": "4s"}, []string{"--eureka.server.eviction-interval-timer-in-ms=5000", "-eviction-interval", "6s"}, 6 * time.Second, "flag -eviction-interval"},
	}
	for n, s := range steps {
		o, err := parseSpring(t, dir, s.vars, append(s.args, "-print-config")...)
		if err != nil {
			t.Fatalf("step %d: %v", n, err)
		}
		if got := o.registry.Store.EvictionInterval; got != s.want {
			t.Errorf("step %d: eviction interval %v, want %v", n, got, s.want)
		}
		if !strings.Contains(o.printConfig, s.from) {
			t.Errorf("step %d: -print-config does not say %q:\n%s", n, s.from, o.printConfig)
		}
		if n > 1 && len(o.overrides) == 0 {
			t.Errorf("step %d: no line tells which of two names won", n)
		}
		if o.registry.API.Environment != "from-config" || o.server.Addr != ":1" || o.registry.Store.RenewalPercentThreshold != 0.1 {
			t.Errorf("step %d: the files' other settings: %q %q %v", n, o.registry.API.Environment, o.server.Addr, o.registry.Store.RenewalPercentThreshold)
		}
	}
	o, _ := parseSpring(t, dir, map[string]string{"EUREKA_SERVER_EVICTIONINTERVALTIMERINMS": "3000", "EUREKA_EVICTION_INTERVAL": "4s"})
	want := "-eviction-interval: variable EUREKA_EVICTION_INTERVAL wins over variable EUREKA_SERVER_EVICTIONINTERVALTIMERINMS eureka.server.evictionintervaltimerinms"
	if !slices.Contains(o.overrides, want) {
		t.Errorf("overrides %q, want %q", o.overrides, want)
	}
}

// The Spring Cloud docs' standalone server, with a typo and properties
// of no effect here: -print-config tells every setting's source and a
// line for each property not applied.
func TestSpringPrintConfigGolden(t *testing.T) {
	o, err := parseSpring(t, "testdata/spring/standalone", nil, "-print-config")
	if err != nil {
		t.Fatal(err)
	}
	testkit.Golden(t, "testdata/spring/standalone.golden", o.printConfig, *update)
	if !slices.Contains(o.registry.Peers.SelfAddrs, "localhost:8761") || len(o.registry.Peers.Peers) != 1 {
		t.Errorf("the standalone server's own URL is not recognised: %+v", o.registry.Peers)
	}
}
