package main

import "testing"

// The load command runs end to end on a small registry. Its figures are not
// checked here: speed belongs to the bench run, not to the test suite.
func TestRunSmall(t *testing.T) {
	if err := run(100e6, 4, 200, 1000); err != nil {
		t.Fatal(err)
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
