package main

import "testing"

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
