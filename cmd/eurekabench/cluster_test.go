package main

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The cluster study runs end to end at a small scale: three nodes of
// cmd/eureka (built by the study) on 127.0.0.2 to .4, 3,000 instances,
// 2 s of heartbeats on the cluster and on the single node. Every node
// holds the instances and answers them whole, the restarted node comes
// back whole with no empty or partial read, and the record holds every
// figure.
func TestClusterSmall(t *testing.T) {
	if testing.Short() {
		t.Skip("builds cmd/eureka and runs a three-node cluster")
	}
	const n = 3000
	record := filepath.Join(t.TempDir(), "cluster.json")
	c := clusterConfig{instances: n, apps: 30, regConns: 8, hbRate: 600, hbDuration: 2 * time.Second, hbConns: 2,
		restartReads: 4, deadline: 20 * time.Second, json: record}
	var out strings.Builder
	if err := runCluster(context.Background(), c, &out); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	t.Log(out.String())
	b, err := os.ReadFile(record)
	if err != nil {
		t.Fatal(err)
	}
	var rec clusterRecord
	if err := json.Unmarshal(b, &rec); err != nil {
		t.Fatalf("the record: %v\n%s", err, b)
	}
	if rec.Instances != n || len(rec.Nodes) != 3 || rec.Registration.PerSecond <= 0 {
		t.Errorf("instances %d, %d nodes, %.0f registrations/s", rec.Instances, len(rec.Nodes), rec.Registration.PerSecond)
	}
	for k, node := range rec.Nodes {
		if node.HoldsAfterSeconds == nil || node.WholeReadAfterSeconds == nil {
			t.Errorf("%s: never held the instances, or never answered them whole: %+v", node.Name, node)
		}
		if node.FirstRead.Status != 200 || node.FirstRead.Bytes == 0 {
			t.Errorf("%s: first read %s", node.Name, node.FirstRead)
		}
		if node.Heartbeats == 0 || node.HeartbeatCPUSeconds < 0 || node.VmRSS == 0 || node.VmHWM < node.VmRSS {
			t.Errorf("%s: %d heartbeats, CPU %.2f s, VmRSS %d, VmHWM %d", node.Name, node.Heartbeats, node.HeartbeatCPUSeconds, node.VmRSS, node.VmHWM)
		}
		if node.Restarted != (k == restartedNode) {
			t.Errorf("%s: restarted %v", node.Name, node.Restarted)
		}
	}
	for _, h := range []clusterHeartbeats{rec.Heartbeats, rec.Baseline} {
		if h.Answered == 0 || h.Answered > h.Sent || h.Rate != c.hbRate || h.P99Ms <= 0 || h.CPUPerHeartbeatMicros <= 0 {
			t.Errorf("heartbeats: %+v", h)
		}
	}
	if rec.Heartbeats.Nodes != 3 || rec.Baseline.Nodes != 1 {
		t.Errorf("heartbeats on %d nodes, the baseline on %d", rec.Heartbeats.Nodes, rec.Baseline.Nodes)
	}
	rs := rec.Restart
	if rs.HoldsAfterSeconds == nil || rs.FirstWholeReadSeconds == nil || rs.Whole == 0 || rs.NotWhole != 0 {
		t.Errorf("the restart: %s", rs)
	}
	if got := rs.NoAnswer + rs.Unavailable + rs.Whole + rs.NotWhole + rs.Other; got != len(rs.Reads) || got == 0 {
		t.Errorf("the restart's reads: %d counted, %d recorded", got, len(rs.Reads))
	}
	if len(rs.PeersHeld) != 2 || rs.PeersHeld[0] != n || rs.PeersHeld[1] != n {
		t.Errorf("the peers held %v at the kill", rs.PeersHeld)
	}
	if len(rec.Targets) != 5 || len(rec.Failures) != 0 {
		t.Errorf("targets %+v, failures %q", rec.Targets, rec.Failures)
	}
	for _, want := range []string{"targets (issue 43)", "killed (SIGKILL) and started again", "on one node alone"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("no %q in the report", want)
		}
	}
}

// A read of the restarted node is counted by its answer, and an empty or
// partial one is a failure of the run, with the counts it held.
func TestClusterRestartReads(t *testing.T) {
	const n = 100
	var rs clusterRestart
	for k, rd := range []registryRead{
		{err: errors.New("connection refused")},
		{status: 503},
		{status: 200, instances: 0},
		{status: 200, instances: 40, err: errors.New("unexpected EOF")},
		{status: 200, instances: n},
		{status: 200, instances: n},
		{status: 500},
	} {
		rd.took = time.Second
		rs.add(readRecord(rd, time.Duration(k)*time.Second), rd, n)
	}
	if rs.NoAnswer != 1 || rs.Unavailable != 1 || rs.NotWhole != 2 || rs.Whole != 2 || rs.Other != 1 || len(rs.Reads) != 7 {
		t.Errorf("%s", rs)
	}
	if rs.FirstWholeReadSeconds == nil || *rs.FirstWholeReadSeconds != 5 {
		t.Errorf("the first whole read after %s, want 5 s (sent at 4 s, 1 s to answer)", secondsOr(rs.FirstWholeReadSeconds))
	}
	var out strings.Builder
	r := &clusterRun{c: clusterConfig{instances: n}, out: &out,
		rec: clusterRecord{Instances: n, Restart: rs, Heartbeats: clusterHeartbeats{CPUPerHeartbeatMicros: 30}, Baseline: clusterHeartbeats{CPUPerHeartbeatMicros: 10}}}
	err := r.report()
	if err == nil || !strings.Contains(out.String(), "FAILURE: the restarted node answered 2 reads 200 with an empty or partial registry (its counts: 0, 40)") {
		t.Errorf("%v\n%s", err, out.String())
	}
	if !strings.Contains(out.String(), "no empty or partial read: holds them after never (the deadline came first), 2 empty or partial reads: MISSED") {
		t.Errorf("the restart's target:\n%s", out.String())
	}

	// A restarted node that exits on its own is a failure too.
	out.Reset()
	r.rec.Restart = clusterRestart{Exited: "node-2 exited; its log ends: start-up sync failed", FirstWholeReadSeconds: seconds(time.Second)}
	r.rec.Failures = nil
	if err := r.report(); err == nil || !strings.Contains(out.String(), "FAILURE: the restarted node exited on its own: node-2 exited; its log ends: start-up sync failed") {
		t.Errorf("%v\n%s", err, out.String())
	}
}

// The command line is checked before anything starts.
func TestClusterFlags(t *testing.T) {
	for _, c := range []struct {
		args   []string
		code   int
		stderr string
	}{
		{[]string{"cluster", "-h"}, 0, "-heartbeat-rate int"},
		{[]string{"cluster", "-instances", "10", "-apps", "20"}, 1, "eurekabench cluster: -instances 10 and -apps 20: at least one app, and no more apps than instances"},
		{[]string{"cluster", "-heartbeat-rate", "0"}, 1, "-heartbeat-rate"},
		{[]string{"cluster", "-deadline", "10ms"}, 1, "-deadline need at least 1s"},
	} {
		var stdout, stderr strings.Builder
		if code := dispatch(c.args, &stdout, &stderr); code != c.code || !strings.Contains(stderr.String(), c.stderr) {
			t.Errorf("%q: exit %d, want %d; stderr:\n%s", c.args, code, c.code, stderr.String())
		}
	}
}
