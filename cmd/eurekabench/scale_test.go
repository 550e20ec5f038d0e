package main

import (
	"strings"
	"testing"
	"time"
)

// The scale study runs end to end at a small size.
func TestScaleSmall(t *testing.T) {
	c := scaleConfig{d: 300 * time.Millisecond, register: 500, evictApp: 1000, evicted: 100, churnSize: 2000, churnRate: 50,
		slowSize: 1000, slowConns: 4, vipSize: 1000, vipNames: 20, memorySizes: []int{1000}, heartbeatCon: 4}
	var out strings.Builder
	rec := newRecord("scale", nil)
	if err := runScale(c, &out, rec); err != nil {
		t.Fatal(err)
	}
	t.Log(out.String())
	checkTableRecorded(t, rec, out.String())
}
