package main

import (
	"io"
	"testing"
)

// -memory-limit takes a size with a unit or bytes, and refuses anything
// else with the flag's name.
func TestMemoryLimitFlag(t *testing.T) {
	for in, want := range map[string]int64{"3.5GiB": 3758096384, "4GB": 4_000_000_000, "1048576": 1 << 20} {
		o, err := parseOptions([]string{"-memory-limit", in}, noEnv, io.Discard)
		if err != nil || o.memoryLimit != want {
			t.Errorf("-memory-limit %s: %v, %d, want %d", in, err, o.memoryLimit, want)
		}
	}
	if o, err := parseOptions(nil, noEnv, io.Discard); err != nil || o.memoryLimit != 0 {
		t.Errorf("no -memory-limit: %v %d", err, o.memoryLimit)
	}
	for _, bad := range []string{"lots", "0", "-1GiB"} {
		if _, err := parseOptions([]string{"-memory-limit", bad}, noEnv, io.Discard); err == nil {
			t.Errorf("-memory-limit %s accepted", bad)
		}
	}
}
