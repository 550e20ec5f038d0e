package main

import (
	"strings"
	"testing"
	"time"
)

// The load command runs end to end on a small registry. Its figures are not
// checked here: speed belongs to the bench run, not to the test suite.
func TestRunSmall(t *testing.T) {
	if err := run(100e6, 4, 200, 1000); err != nil {
		t.Fatal(err)
	}
}

// The scale study runs end to end at a small size.
func TestScaleSmall(t *testing.T) {
	c := scaleConfig{d: 300 * time.Millisecond, register: 500, evictApp: 1000, evicted: 100, churnSize: 2000, churnRate: 50,
		slowSize: 1000, slowConns: 4, vipSize: 1000, vipNames: 20, memorySizes: []int{1000}, heartbeatCon: 4}
	var out strings.Builder
	if err := runScale(c, &out); err != nil {
		t.Fatal(err)
	}
	t.Log(out.String())
}

// The write-to-visible part of the push study runs at a small size. Its
// fleet phases run the registry in a child process of the eurekabench
// binary, which a test binary is not, so they run from the command only.
func TestWriteToVisibleSmall(t *testing.T) {
	got, err := writeToVisible(3)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"register", "cancel", "out_of_service"} {
		if got[k].n != 3 {
			t.Errorf("%s: %d trials", k, got[k].n)
		}
	}
}

// The fetch comparison runs end to end on a small registry.
func TestFetchSmall(t *testing.T) {
	res, err := benchFetch(200, 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 3 {
		t.Fatalf("got %d results", len(res))
	}
}
