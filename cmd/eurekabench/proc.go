package main

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// What the studies read of other processes, from /proc (Linux).

// procStat is what the studies read of /proc/<pid>/stat.
type procStat struct {
	ppid int           // the parent
	cpu  time.Duration // user and system time
	sys  time.Duration // system time alone: the kernel's work for it
}

// readProcStat reads /proc/<pid>/stat.
func readProcStat(pid int) (procStat, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return procStat{}, err
	}
	return parseProcStat(string(b))
}

// userHZ is the unit of the CPU times in /proc/<pid>/stat: clock ticks,
// 100 a second on Linux.
const userHZ = 100

// parseProcStat parses the text of /proc/<pid>/stat (proc(5)). The
// command name, the second field, is in parentheses and may hold spaces
// and parentheses itself, so the fields are counted from the last ')':
// the state (field 3), the parent (4), ... utime (14) and stime (15).
func parseProcStat(s string) (procStat, error) {
	end := strings.LastIndexByte(s, ')')
	if end < 0 {
		return procStat{}, fmt.Errorf("no command name in %q", s)
	}
	f := strings.Fields(s[end+1:])
	if len(f) < 13 {
		return procStat{}, fmt.Errorf("%d fields after the command name in %q", len(f), s)
	}
	ppid, err1 := strconv.Atoi(f[1])
	utime, err2 := strconv.ParseInt(f[11], 10, 64)
	stime, err3 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil || err3 != nil {
		return procStat{}, fmt.Errorf("not a stat line: %q", s)
	}
	return procStat{ppid: ppid, cpu: time.Duration(utime+stime) * time.Second / userHZ, sys: time.Duration(stime) * time.Second / userHZ}, nil
}

// cpuSeconds returns the CPU time (user and system) the processes have
// used, in seconds; a process whose stat cannot be read counts 0.
func cpuSeconds(pids func() []int) float64 {
	total, _ := cpuAndSysSeconds(pids)
	return total
}

// cpuAndSysSeconds returns the CPU time (user and system) the processes
// have used and the system time alone, in seconds; a process whose stat
// cannot be read counts 0.
func cpuAndSysSeconds(pids func() []int) (total, sys float64) {
	if pids == nil {
		return 0, 0
	}
	var t, s time.Duration
	for _, pid := range pids() {
		if st, err := readProcStat(pid); err == nil {
			t += st.cpu
			s += st.sys
		}
	}
	return t.Seconds(), s.Seconds()
}

// childrenOf returns the processes whose parent is pid (nginx's workers).
func childrenOf(pid int) []int {
	entries, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range entries {
		child, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if st, err := readProcStat(child); err == nil && st.ppid == pid {
			out = append(out, child)
		}
	}
	return out
}

// residentBytes reads this process's resident set size.
func residentBytes() uint64 { return residentBytesOf(os.Getpid()) }

// residentBytesOf reads a process's resident set size from
// /proc/<pid>/statm; 0 where it cannot be read.
func residentBytesOf(pid int) uint64 {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/statm")
	if err != nil {
		return 0
	}
	fields := strings.Fields(string(data))
	if len(fields) < 2 {
		return 0
	}
	pages, _ := strconv.ParseUint(fields[1], 10, 64)
	return pages * uint64(os.Getpagesize())
}

// memoryOf reads a process's VmRSS and VmHWM (its peak), in bytes, from
// /proc/<pid>/status; 0 for what cannot be read.
func memoryOf(pid int) (rss, hwm uint64) {
	b, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	return parseProcStatus(string(b))
}

// bytesWrittenBy is what a process has written to sockets and files, from
// /proc/<pid>/io; 0 where it cannot be read.
func bytesWrittenBy(pid int) uint64 {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/io")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, "wchar: "); ok {
			n, _ := strconv.ParseUint(v, 10, 64)
			return n
		}
	}
	return 0
}

// parseProcStatus reads VmRSS and VmHWM, in bytes, from the text of
// /proc/<pid>/status; 0 for what it does not hold.
func parseProcStatus(text string) (rss, hwm uint64) {
	for _, line := range strings.Split(text, "\n") {
		name, value, ok := strings.Cut(line, ":")
		if !ok || (name != "VmRSS" && name != "VmHWM") {
			continue
		}
		f := strings.Fields(value)
		if len(f) != 2 || f[1] != "kB" {
			continue
		}
		kb, err := strconv.ParseUint(f[0], 10, 64)
		if err != nil {
			continue
		}
		if name == "VmRSS" {
			rss = kb * 1024
		} else {
			hwm = kb * 1024
		}
	}
	return rss, hwm
}
