package main

import (
	"os"
	"strings"
	"testing"
)

// childEnv, in the environment, makes the test binary eurekabench: the
// studies that run this binary again to put a server in a process of its
// own run the test binary, with this added to its environment.
const childEnv = "EUREKABENCH_CHILD=1"

func TestMain(m *testing.M) {
	if os.Getenv("EUREKABENCH_CHILD") != "" {
		os.Exit(dispatch(os.Args[1:], os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

// testServers runs the servers of a study in the test binary.
func testServers(t *testing.T) rerun {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return rerun{exe: exe, env: []string{childEnv}}
}

// Every command is dispatched the same way: its name, then its flags;
// without a name, the summary. A wrong command line exits 2, -h 0.
func TestDispatch(t *testing.T) {
	for _, c := range []struct {
		args   []string
		code   int
		stderr string
	}{
		{[]string{"-h"}, 0, "usage: eurekabench [command] [flags]"},
		{[]string{"gateway", "-h"}, 0, "usage: eurekabench gateway [flags]"},
		{[]string{"scale", "-h"}, 0, "-only string"},
		{[]string{"nope"}, 2, `no command "nope"`},
		{[]string{"scale", "nope"}, 2, `eurekabench scale: unexpected argument "nope"`},
		{[]string{"-nope"}, 2, "flag provided but not defined: -nope"},
		{[]string{"push", "-nope"}, 2, "usage: eurekabench push [flags]"},
		{[]string{"fetch", "extra"}, 2, `eurekabench fetch: unexpected argument "extra"`},
		{[]string{"fetch", "-instances", "10", "-rounds", "1"}, 0, ""},
		{[]string{"fetch", "-instances", "-1"}, 1, "eurekabench fetch: "},
		{[]string{"java", "-h"}, 0, "usage: eurekabench java [flags]"},
		{[]string{"java", "-phases", "registries,nope"}, 1, `eurekabench java: -phases: no phase "nope"`},
	} {
		var stdout, stderr strings.Builder
		code := dispatch(c.args, &stdout, &stderr)
		if code != c.code || !strings.Contains(stderr.String(), c.stderr) {
			t.Errorf("%q: exit %d, want %d; stderr:\n%s", c.args, code, c.code, stderr.String())
		}
		if code == 0 && c.stderr == "" && !strings.Contains(stdout.String(), "eurekabench fetch: ") {
			t.Errorf("%q: stdout:\n%s", c.args, stdout.String())
		}
	}
}
