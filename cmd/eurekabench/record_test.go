package main

import (
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// runWithRecord runs a command through dispatch with -json and returns
// its report and its record.
func runWithRecord(t *testing.T, args ...string) (string, *record) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "record.json")
	var stdout, stderr strings.Builder
	if code := dispatch(append(args, "-json", path), &stdout, &stderr); code != 0 {
		t.Fatalf("%q: exit %d\n%s\n%s", args, code, stderr.String(), stdout.String())
	}
	rec, err := loadRecord(path)
	if err != nil {
		t.Fatal(err)
	}
	return stdout.String(), rec
}

// phaseNamed is the record's phase name.
func phaseNamed(t *testing.T, rec *record, name string) phaseResult {
	t.Helper()
	for _, p := range rec.Phases {
		if p.Name == name {
			return p
		}
	}
	t.Fatalf("no phase %q in %+v", name, rec.Phases)
	return phaseResult{}
}

// The summary writes its table's figures and its phases, each measured,
// to the record -json names, beside the table it prints. Its speeds
// are not checked (they belong to the bench run); the full fetches'
// serializations, which the cache decides, are: none.
func TestSummaryRecord(t *testing.T) {
	out, rec := runWithRecord(t, "-duration", "100ms", "-concurrency", "4", "-instances", "200", "-heap-instances", "1000")
	if !strings.Contains(out, "heartbeats, eurekagate") {
		t.Errorf("no table:\n%s", out)
	}
	if rec.Study != "summary" || rec.Machine.CPUs == 0 || rec.Date == "" || strings.Join(rec.Args, " ") != "-duration 100ms -concurrency 4 -instances 200 -heap-instances 1000 -json "+rec.Args[len(rec.Args)-1] {
		t.Errorf("the record's header: %+v", rec)
	}
	for name, want := range map[string]float64{"full.instances": 200, "heap.instances": 1000, "replication.instances": 200, "full.serializations": 0} {
		if got, ok := rec.figure(name); !ok || got != want {
			t.Errorf("%s: %v (%v), want %v", name, got, ok, want)
		}
	}
	for _, name := range []string{"heartbeats.ceiling", "heartbeats.rate", "registrations.rate", "full.rate", "full.bytes", "gateway.static", "gateway.eureka",
		"heap.per_instance", "replication.seconds"} {
		if v, ok := rec.figure(name); !ok || v <= 0 {
			t.Errorf("%s: %v (%v)", name, v, ok)
		}
	}
	for _, name := range []string{"gateway.routable_after", "replication.batches"} { // counts
		if v, ok := rec.figure(name); !ok || v < 0 {
			t.Errorf("%s: %v (%v)", name, v, ok)
		}
	}
	for _, name := range []string{"registrations", "heartbeats", "full fetches", "the Caddy gateway", "replication", "the run"} {
		if p := phaseNamed(t, rec, name); p.Seconds <= 0 || p.LoadCPU <= 0 || p.ServerCPU != 0 {
			t.Errorf("phase %s: %+v", name, p)
		}
	}
}

// Every command takes -json, and a run that fails writes no record.
func TestEveryCommandTakesJSON(t *testing.T) {
	for _, c := range commands {
		if c.name == "report" {
			continue // its -json names the records it reads
		}
		if fs, _, _ := c.flags(io.Discard); fs.Lookup("json") == nil {
			t.Errorf("%q has no -json", c.name)
		}
	}
	path := filepath.Join(t.TempDir(), "record.json")
	var stdout, stderr strings.Builder
	if code := dispatch([]string{"fetch", "-instances", "-1", "-json", path}, &stdout, &stderr); code != 1 {
		t.Fatalf("exit %d", code)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Errorf("a failed run wrote its record: %v", err)
	}
}

// The million study, end to end at a small scale (cmd/eureka built and
// run in a process of its own): the record holds each phase as the meter
// read the server and the figures the table of docs/performance.md is
// rendered from, beside the report it prints.
func TestMillionRecord(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs cmd/eureka")
	}
	out, rec := runWithRecord(t, "million", "-instances", "2000", "-apps", "20", "-duration", "1s", "-baseline", "1s",
		"-heartbeat-conns", "2", "-register-conns", "2", "-readers", "2", "-delta-clients", "2", "-changes-per-second", "2")
	if !strings.Contains(out, "targets (issue 31)") {
		t.Errorf("no report:\n%s", out)
	}
	for _, name := range append([]string{"registrations"}, phaseNames[:]...) {
		if p := phaseNamed(t, rec, name); p.Seconds <= 0 || p.ServerCPU < 0 || p.ServerRSS == 0 || p.ServerHWM < p.ServerRSS {
			t.Errorf("phase %s: %+v", name, p)
		}
	}
	for name, want := range map[string]float64{"instances": 2000, "full.instances": 2000, "read.full XML plain.instances": 2000, "full.readers": 2} {
		if got, ok := rec.figure(name); !ok || got != want {
			t.Errorf("%s: %v (%v), want %v", name, got, ok, want)
		}
	}
	var table strings.Builder
	if err := millionTable.render(&table, []*record{rec}); err != nil {
		t.Fatal(err)
	}
	t.Logf("%s\n%s", out, table.String())
}

// fetch records each client's median, mean, best and heap under its
// name, beside the table it prints.
func TestFetchRecord(t *testing.T) {
	out, rec := runWithRecord(t, "fetch", "-instances", "10", "-rounds", "1")
	clients := 0
	for _, f := range rec.Figures {
		if name, ok := strings.CutSuffix(f.Name, ".median"); ok {
			clients++
			if !strings.Contains(out, name) || f.Value <= 0 {
				t.Errorf("%s: %v, not in the table:\n%s", f.Name, f.Value, out)
			}
		}
	}
	if n, _ := rec.figure("instances"); n != 10 || clients != 3 || len(rec.Figures) != 1+4*clients {
		t.Errorf("figures %+v", rec.Figures)
	}
}

// checkTableRecorded checks that every row of the table a study printed
// is in its record, and only those.
func checkTableRecorded(t *testing.T, rec *record, out string) {
	t.Helper()
	if len(rec.Table) == 0 {
		t.Fatal("no row recorded")
	}
	for _, r := range rec.Table {
		if !strings.Contains(out, r.Measurement) || !strings.Contains(out, r.Result) {
			t.Errorf("recorded %+v, not printed", r)
		}
	}
	if printed := strings.Count(out, "\n") - 1; len(rec.Table) > printed {
		t.Errorf("%d rows recorded, %d lines printed", len(rec.Table), printed)
	}
}

// xds records its reach latencies and each size's cost of a change, and
// each as a phase.
func TestXDSRecord(t *testing.T) {
	_, rec := runWithRecord(t, "xds", "-trials", "2", "-instances", "2000", "-apps", "20", "-changes", "3")
	for _, name := range []string{"registration.p50", "change.200.bytes", "change.2000.bytes", "change.2000.initial_bytes"} {
		if v, ok := rec.figure(name); !ok || v <= 0 {
			t.Errorf("%s: %v (%v)", name, v, ok)
		}
	}
	// A cancel's last RPC may come before it, and a few changes' CPU may
	// read as none: 0.
	for _, name := range []string{"cancel.max", "change.2000.cpu"} {
		if v, ok := rec.figure(name); !ok || v < 0 {
			t.Errorf("%s: %v (%v)", name, v, ok)
		}
	}
	for _, name := range []string{"registrations and cancels", "changes at 200 instances", "changes at 2000 instances"} {
		if p := phaseNamed(t, rec, name); p.Seconds <= 0 {
			t.Errorf("phase %s: %+v", name, p)
		}
	}
}

// The regions study, end to end briefly under wrk (skipped without it),
// records its switches and wrk's totals beside its report.
func TestRegionsRecord(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs cmd/eureka")
	}
	if _, err := exec.LookPath("wrk"); err != nil {
		t.Skip("no wrk")
	}
	out, rec := runWithRecord(t, "regions", "-duration", "4s", "-cancel-after", "1s", "-down", "1s")
	for _, name := range []string{"failover.first", "failover.all", "back.first", "back.all", "wrk.rate"} {
		if v, ok := rec.figure(name); !ok || v <= 0 {
			t.Errorf("%s: %v (%v)\n%s", name, v, ok, out)
		}
	}
	if n, ok := rec.figure("wrk.non2xx"); !ok || n != 0 {
		t.Errorf("wrk.non2xx: %v (%v)", n, ok)
	}
	phaseNamed(t, rec, "the fail-over and back under load")
}
