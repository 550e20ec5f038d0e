package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/eurekagate/eurekagate/internal/proc"
)

// How the million and cluster studies get cmd/eureka: built, with
// -profile with net/http/pprof added by an overlay, and the profiles
// read from it per phase.

// eurekaBinary is bin, or, when bin is "", cmd/eureka built into dir,
// with a note of how long the build took for the study's header ("" when
// it was given).
func eurekaBinary(ctx context.Context, dir, bin string) (string, string, error) {
	if bin != "" {
		return bin, "", nil
	}
	start := time.Now()
	bin, err := buildEureka(ctx, dir, "")
	if err != nil {
		return "", "", err
	}
	return bin, fmt.Sprintf("cmd/eureka built in %.1f s", time.Since(start).Seconds()), nil
}

// buildEureka builds cmd/eureka into dir; with profile, with the pprof
// file added by an overlay.
func buildEureka(ctx context.Context, dir, profile string) (string, error) {
	bin := filepath.Join(dir, "eureka")
	var flags []string
	if profile != "" {
		if err := os.MkdirAll(profile, 0o755); err != nil {
			return "", err
		}
		overlay, err := pprofOverlay(ctx, dir)
		if err != nil {
			return "", err
		}
		flags = []string{"-overlay", overlay}
		// The binary beside the profiles, for go tool pprof.
		bin = filepath.Join(profile, "eureka")
	}
	if err := proc.GoBuild(ctx, "", nil, bin, append(flags, "github.com/eurekagate/eurekagate/cmd/eureka")...); err != nil {
		return "", fmt.Errorf("building cmd/eureka (or give -eureka): %v", err)
	}
	return bin, nil
}

// pprofSource is the file -profile adds to cmd/eureka: with
// EUREKABENCH_PPROF set, net/http/pprof on that address, and a CPU
// profile started and stopped on request (/bench/cpu/start, then
// /bench/cpu/stop, which answers with it), so that a phase of unknown
// length has one profile, and /bench/gc, a full collection. The
// server's own handlers are on their own mux, so none of this is on the
// registry's port.
const pprofSource = `package main

// Added by eurekabench million -profile and eurekabench java through go
// build -overlay.

import (
	"bytes"
	"net"
	"net/http"
	_ "net/http/pprof"
	"os"
	"runtime/debug"
	"runtime/pprof"
	"sync"
)

func init() {
	addr := os.Getenv("EUREKABENCH_PPROF")
	if addr == "" {
		return
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		panic(err)
	}
	var mu sync.Mutex
	var cpu *bytes.Buffer
	http.HandleFunc("/bench/cpu/start", func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		if cpu != nil {
			http.Error(w, "a CPU profile is running", http.StatusConflict)
			return
		}
		cpu = new(bytes.Buffer)
		if err := pprof.StartCPUProfile(cpu); err != nil {
			cpu = nil
			http.Error(w, err.Error(), http.StatusInternalServerError)
		}
	})
	// A full collection that returns the freed memory to the system, as
	// jcmd GC.run asks of a JVM: eurekabench java reads the resident
	// memory after it.
	http.HandleFunc("/bench/gc", func(w http.ResponseWriter, r *http.Request) {
		debug.FreeOSMemory()
	})
	http.HandleFunc("/bench/cpu/stop", func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		if cpu == nil {
			http.Error(w, "no CPU profile is running", http.StatusConflict)
			return
		}
		pprof.StopCPUProfile()
		w.Write(cpu.Bytes())
		cpu = nil
	})
	go http.Serve(ln, nil)
}
`

// pprofOverlay writes the pprof file and the overlay that adds it to
// cmd/eureka's directory, and returns the overlay's path.
func pprofOverlay(ctx context.Context, dir string) (string, error) {
	outp, err := exec.CommandContext(ctx, "go", "list", "-f", "{{.Dir}}", "github.com/eurekagate/eurekagate/cmd/eureka").Output()
	if err != nil {
		return "", fmt.Errorf("go list cmd/eureka: %v", err)
	}
	src := filepath.Join(dir, "pprof.go")
	if err := os.WriteFile(src, []byte(pprofSource), 0o644); err != nil {
		return "", err
	}
	target := filepath.Join(strings.TrimSpace(string(outp)), "zz_eurekabench_pprof.go")
	overlay, _ := json.Marshal(map[string]map[string]string{"Replace": {target: src}})
	path := filepath.Join(dir, "overlay.json")
	return path, os.WriteFile(path, overlay, 0o644)
}

// profileStart starts a CPU profile of the server for a phase, when
// profiling.
func (r *millionRun) profileStart(phase string) error {
	if r.pprof == "" {
		return nil
	}
	_, err := r.pprofGet("/bench/cpu/start")
	return err
}

// profileStop writes the phase's CPU profile and a heap profile to the
// profiles' directory, and notes the Go heap.
func (r *millionRun) profileStop(phase string) error {
	if r.pprof == "" {
		return nil
	}
	cpu, err := r.pprofGet("/bench/cpu/stop")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(r.c.profile, "cpu-"+phase+".pprof"), cpu, 0o644); err != nil {
		return err
	}
	heap, err := r.pprofGet("/debug/pprof/heap")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(r.c.profile, "heap-"+phase+".pprof"), heap, 0o644); err != nil {
		return err
	}
	text, err := r.pprofGet("/debug/pprof/heap?debug=1")
	if err != nil {
		return err
	}
	r.heap[phase] = parseMemStats(string(text))
	return nil
}

func (r *millionRun) pprofGet(path string) ([]byte, error) {
	resp, err := http.Get("http://" + r.pprof + path)
	if err != nil {
		return nil, fmt.Errorf("the server's pprof: %v", err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err == nil && resp.StatusCode != 200 {
		err = fmt.Errorf("the server's pprof: %s: status %d: %s", path, resp.StatusCode, b)
	}
	return b, err
}

// heapNote is the Go heap at a phase's end, when profiling.
func (r *millionRun) heapNote(phase string) string {
	m, ok := r.heap[phase]
	if !ok {
		return ""
	}
	return fmt.Sprintf(" (Go heap: %s in use, %s allocated, %s released to the OS, next GC at %s)",
		gb(m.heapInuse), gb(m.heapAlloc), gb(m.heapReleased), gb(m.nextGC))
}

// memStats are the runtime.MemStats lines of a heap profile in text.
type memStats struct {
	heapAlloc, heapInuse, heapSys, heapReleased, nextGC, sys uint64
}

// parseMemStats reads the "# Name = value" lines that
// /debug/pprof/heap?debug=1 ends with.
func parseMemStats(text string) memStats {
	var m memStats
	fields := map[string]*uint64{"HeapAlloc": &m.heapAlloc, "HeapInuse": &m.heapInuse, "HeapSys": &m.heapSys,
		"HeapReleased": &m.heapReleased, "NextGC": &m.nextGC, "Sys": &m.sys}
	sc := bufio.NewScanner(strings.NewReader(text))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		name, value, ok := strings.Cut(strings.TrimPrefix(sc.Text(), "# "), " = ")
		if p := fields[name]; ok && p != nil {
			*p, _ = strconv.ParseUint(strings.TrimSpace(value), 10, 64)
		}
	}
	return m
}
