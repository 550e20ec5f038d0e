package main

import (
	"os"
	"testing"
	"time"
)

// One parser reads /proc/<pid>/stat for the CPU time of the gateway
// study's proxies and the push study's registry, and for nginx's workers.
func TestParseProcStat(t *testing.T) {
	// A command name with spaces and parentheses, as proc(5) allows.
	line := "4242 (a (b) c) S 17 4242 4242 0 -1 4194560 1000 0 0 0 250 130 0 0 20 0 3 0 12345 1000000 200 18446744073709551615\n"
	st, err := parseProcStat(line)
	if err != nil {
		t.Fatal(err)
	}
	if st.ppid != 17 || st.cpu != 3800*time.Millisecond || st.sys != 1300*time.Millisecond {
		t.Errorf("got parent %d, CPU %v, system %v; want 17, 3.8s, 1.3s", st.ppid, st.cpu, st.sys)
	}
	for _, bad := range []string{"", "4242 (cmd) S 17", "4242 cmd S"} {
		if _, err := parseProcStat(bad); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("no /proc here")
	}
	self, err := readProcStat(os.Getpid())
	if err != nil || self.ppid != os.Getppid() {
		t.Errorf("this process: %+v %v, want parent %d", self, err, os.Getppid())
	}
	if kids := childrenOf(os.Getppid()); len(kids) == 0 {
		t.Errorf("no children of our parent %d", os.Getppid())
	}
}
