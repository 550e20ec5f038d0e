package main

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// The one meter of the studies' phases: wall time, CPU (the servers',
// this process's, which is the load's, and the rest of the machine's) and
// the servers' memory, each read here the same way for every phase, from
// /proc (proc.go) and getrusage.

// meter measures a study's phases into its record.
type meter struct {
	rec *record
	// servers are the pids of the study's servers, read at each phase's
	// start and end; nil when the servers run in this process (their CPU
	// is then the load's).
	servers func() []int
}

// phaseResult is one phase of a study as the meter read it.
type phaseResult struct {
	Name       string  `json:"name"`
	Seconds    float64 `json:"seconds"`
	ServerCPU  float64 `json:"server_cpu_seconds"` // 0 when the servers run in this process
	LoadCPU    float64 `json:"load_cpu_seconds"`   // this process's
	OtherCores float64 `json:"other_cores"`        // the rest of the machine, cores on average
	ServerRSS  uint64  `json:"server_rss_bytes,omitempty"`
	ServerHWM  uint64  `json:"server_hwm_bytes,omitempty"` // the first server's peak so far (VmHWM)
}

// cores is the phase's CPU in cores on average.
func (p phaseResult) cores() coreUse {
	return coreUse{server: p.ServerCPU / p.Seconds, load: p.LoadCPU / p.Seconds, other: p.OtherCores}
}

// phase starts the phase name and returns what ends it: it reads the
// meter again, appends the phase to the record and returns it.
func (m meter) phase(name string) (end func() phaseResult) {
	u0 := m.read()
	return func() phaseResult {
		u := m.read()
		p := phaseResult{Name: name, Seconds: u.at.Sub(u0.at).Seconds(),
			ServerCPU: (u.server - u0.server).Seconds(), LoadCPU: (u.load - u0.load).Seconds(),
			OtherCores: u.since(u0).other}
		if m.servers != nil {
			if pids := m.servers(); len(pids) > 0 {
				p.ServerRSS, p.ServerHWM = memoryOf(pids[0])
			}
		}
		m.rec.Phases = append(m.rec.Phases, p)
		return p
	}
}

// usage is a reading of the CPU used so far: the servers', this
// process's (the load), and the machine's.
type usage struct {
	at                 time.Time
	server, load, busy time.Duration
}

func (m meter) read() usage {
	b, _ := os.ReadFile("/proc/stat")
	var server time.Duration
	if m.servers != nil {
		server = time.Duration(cpuSeconds(m.servers) * float64(time.Second))
	}
	return usage{at: time.Now(), server: server, load: cpuTime(), busy: parseMachineBusy(string(b))}
}

// coreUse is the cores used between two readings.
type coreUse struct{ server, load, other float64 }

func (u usage) since(u0 usage) coreUse {
	wall := u.at.Sub(u0.at).Seconds()
	server, load := (u.server-u0.server).Seconds()/wall, (u.load-u0.load).Seconds()/wall
	return coreUse{server: server, load: load, other: max(0, (u.busy-u0.busy).Seconds()/wall-server-load)}
}

func (c coreUse) String() string {
	return fmt.Sprintf("server %.2f, load %.2f, other processes %.2f", c.server, c.load, c.other)
}

// parseMachineBusy reads the CPU time the machine has spent busy (user,
// nice, system, irq, softirq, steal) from the text of /proc/stat.
func parseMachineBusy(text string) time.Duration {
	line, _, _ := strings.Cut(text, "\n")
	f := strings.Fields(line)
	if len(f) < 9 || f[0] != "cpu" {
		return 0
	}
	var ticks int64
	for _, k := range []int{1, 2, 3, 6, 7, 8} {
		n, _ := strconv.ParseInt(f[k], 10, 64)
		ticks += n
	}
	return time.Duration(ticks) * time.Second / userHZ
}

// cpuTime is the CPU time this process has used.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
