package main

import (
	"strings"
	"testing"
	"time"
)

// The authflood study runs end to end at a small size. Its figures are not
// checked here: speed belongs to the bench run.
func TestAuthFloodSmall(t *testing.T) {
	var out strings.Builder
	if _, err := runAuthFlood(authFloodConfig{d: 200 * time.Millisecond, conc: 4, floodConns: 2, instances: 50, rounds: 1, services: 3}, &out); err != nil {
		t.Fatal(err)
	}
	t.Log(out.String())
}
