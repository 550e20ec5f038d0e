package main

import (
	"strings"
	"testing"
	"time"
)

// The summary runs end to end on a small registry. Its figures are not
// checked here: speed belongs to the bench run, not to the test suite.
func TestSummarySmall(t *testing.T) {
	var out strings.Builder
	if err := runSummary(summaryConfig{d: 100 * time.Millisecond, conc: 4, instances: 200, heapInstances: 1000}, &out, newRecord("summary", nil)); err != nil {
		t.Fatal(err)
	}
	t.Log(out.String())
}
