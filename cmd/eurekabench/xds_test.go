package main

import "testing"

// The xds study times each trial and sends one app's endpoints per
// change, a small part of the registry.
func TestXDSStudySmall(t *testing.T) {
	reg, cancel, err := xdsReach(3)
	if err != nil {
		t.Fatal(err)
	}
	if len(reg) != 3 || len(cancel) != 3 {
		t.Fatalf("%d registrations and %d cancels timed, want 3 each", len(reg), len(cancel))
	}
	cost, err := xdsChangeCost(2000, 20, 5)
	if err != nil {
		t.Fatal(err)
	}
	if cost.bytesPerChange <= 0 || cost.bytesPerChange > float64(cost.initialBytes)/10 {
		t.Errorf("%.0f B per change of a %d B registry, want about a twentieth", cost.bytesPerChange, cost.initialBytes)
	}
}
