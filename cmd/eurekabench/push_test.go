package main

import (
	"strings"
	"testing"
	"time"
)

// The push study runs end to end at a small size, its registry a process
// of the test binary. Its figures are not checked here.
func TestPushSmall(t *testing.T) {
	c := pushConfig{trials: 3, clients: 4, whole: 2, instances: 100, apps: 10, rate: 20, d: 300 * time.Millisecond,
		pollers: 2, appsEach: 2, settle: 300 * time.Millisecond, server: testServers(t)}
	var out strings.Builder
	rec := newRecord("push", nil)
	if err := runPush(c, &out, rec); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	t.Log(out.String())
	checkTableRecorded(t, rec, out.String())
	for _, want := range []string{"write to client.Instances, register", "whole-registry watches: 2 clients",
		"watches of 2 apps each: 4 clients", "polling every 1s (for comparison): 2 clients", "server CPU"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("no %q in the output", want)
		}
	}
}
