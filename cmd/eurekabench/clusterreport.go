package main

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"time"
)

// The cluster study's record (-json) and its report: every figure, the
// targets of issue 43 and the failures. A wait that ended at the
// deadline is null in the record.

// clusterRecord is every figure of a run.
type clusterRecord struct {
	Instances       int                 `json:"instances"`
	Apps            int                 `json:"apps"`
	CPUs            int                 `json:"cpus"`
	LoadBefore      string              `json:"load_average_before"`
	LoadAfter       string              `json:"load_average_after"`
	ServerFlags     []string            `json:"server_flags"`
	DeadlineSeconds float64             `json:"deadline_seconds"`
	Registration    clusterRegistration `json:"registration"`
	Nodes           []clusterNodeRecord `json:"nodes"`
	// Heartbeats are the cluster's; Baseline the same rate on one node
	// alone (no peers, the same instances), measured in the same run.
	Heartbeats clusterHeartbeats `json:"heartbeats"`
	Baseline   clusterHeartbeats `json:"baseline"`
	Restart    clusterRestart    `json:"restart"`
	Targets    []clusterTarget   `json:"targets"`
	Failures   []string          `json:"failures"`
}

// clusterRegistration is phase 1, on the first node.
type clusterRegistration struct {
	Seconds   float64 `json:"seconds"`
	PerSecond float64 `json:"per_second"`
	Conns     int     `json:"conns"`
}

// clusterNodeRecord is one node's figures.
type clusterNodeRecord struct {
	Name string `json:"name"`
	Addr string `json:"addr"`
	// HoldsAfterSeconds is from the last registration's answer until its
	// status counted every instance; HeldAtDeadline what it counted when
	// the deadline came first.
	HoldsAfterSeconds *float64 `json:"holds_after_seconds"`
	HeldAtDeadline    int      `json:"held_at_deadline,omitempty"`
	// FirstRead is its first full read, sent at the last registration's
	// answer; WholeReadAfterSeconds from then until a read held every
	// instance, after ReadsUntilWhole reads.
	FirstRead             clusterRead `json:"first_read"`
	WholeReadAfterSeconds *float64    `json:"whole_read_after_seconds"`
	ReadsUntilWhole       int         `json:"reads_until_whole"`
	// Heartbeats were sent to it and answered 200; its CPU over the
	// heartbeats' window, and that per heartbeat sent to the cluster.
	Heartbeats                   int64   `json:"heartbeats"`
	HeartbeatCPUSeconds          float64 `json:"heartbeat_cpu_seconds"`
	CPUPerClusterHeartbeatMicros float64 `json:"cpu_per_cluster_heartbeat_us"`
	// Restarted is true for the node killed and started again, whose
	// memory is its new process's.
	Restarted bool   `json:"restarted"`
	VmRSS     uint64 `json:"vm_rss_bytes"`
	VmHWM     uint64 `json:"vm_hwm_bytes"`
}

// clusterRead is one full read: status 0 when no answer came.
type clusterRead struct {
	AtSeconds float64 `json:"at_seconds"` // sent this long after the restart (the restart's reads)
	Seconds   float64 `json:"seconds"`
	Status    int     `json:"status"`
	Instances int     `json:"instances"`
	Bytes     int64   `json:"bytes"`
	Error     string  `json:"error,omitempty"`
}

func readRecord(rd registryRead, at time.Duration) clusterRead {
	r := clusterRead{AtSeconds: at.Seconds(), Seconds: rd.took.Seconds(), Status: rd.status, Instances: rd.instances, Bytes: rd.bytes}
	if rd.err != nil {
		r.Error = rd.err.Error()
	}
	return r
}

func (r clusterRead) String() string {
	s := fmt.Sprintf("status %d in %.2f s", r.Status, r.Seconds)
	if r.Status == 0 {
		s = fmt.Sprintf("no answer in %.2f s", r.Seconds)
	}
	if r.Status == 200 {
		s += fmt.Sprintf(", %s instances, %s gzipped", commas(r.Instances), mbf(r.Bytes))
	}
	if r.Error != "" {
		s += ": " + r.Error
	}
	return s
}

// clusterHeartbeats are the heartbeats at the rate over some nodes.
type clusterHeartbeats struct {
	Nodes int `json:"nodes"`
	Rate  int `json:"rate"` // asked, a second
	// QuietBefore is whether the nodes went quiet (under a tenth of a
	// core each) before the heartbeats began, after QuietAfterSeconds.
	QuietBefore       bool    `json:"quiet_before"`
	QuietAfterSeconds float64 `json:"quiet_after_seconds"`
	Seconds           float64 `json:"seconds"`
	Sent              int64   `json:"sent"`
	Answered          int64   `json:"answered"`
	Skipped           int64   `json:"skipped"` // due while the node's queue was full: not sent
	Failed            int64   `json:"failed"`
	P50Ms             float64 `json:"p50_ms"`
	P99Ms             float64 `json:"p99_ms"`
	MaxMs             float64 `json:"max_ms"`
	// CPUSeconds is the nodes' together over the window, and per
	// heartbeat answered.
	CPUSeconds            float64 `json:"cpu_seconds"`
	CPUPerHeartbeatMicros float64 `json:"cpu_per_heartbeat_us"`
	perNode               []int64
}

func (h clusterHeartbeats) String() string {
	quiet := fmt.Sprintf("quiet after %.1f s", h.QuietAfterSeconds)
	if !h.QuietBefore {
		quiet = fmt.Sprintf("NOT quiet within the deadline (%.0f s)", h.QuietAfterSeconds)
	}
	return fmt.Sprintf("%s /s asked for %.1f s (%s before): %s answered (%s /s), %d skipped, %d failed; p50 / p99 / max %.1f / %.1f / %.1f ms; CPU %.2f s, %.1f µs per heartbeat",
		commas(h.Rate), h.Seconds, quiet, commas(int(h.Answered)), commas(int(float64(h.Answered)/h.Seconds)), h.Skipped, h.Failed,
		h.P50Ms, h.P99Ms, h.MaxMs, h.CPUSeconds, h.CPUPerHeartbeatMicros)
}

// clusterRestart is phase 5.
type clusterRestart struct {
	Node      string `json:"node"`
	PeersHeld []int  `json:"peers_held"` // the other nodes' counts at the kill
	// HoldsAfterSeconds is from its start until its status counted every
	// instance; HeldAtDeadline what it counted when the deadline came
	// first. FirstWholeReadSeconds is from its start until a read's
	// answer held them all.
	HoldsAfterSeconds     *float64 `json:"holds_after_seconds"`
	HeldAtDeadline        int      `json:"held_at_deadline,omitempty"`
	FirstWholeReadSeconds *float64 `json:"first_whole_read_seconds"`
	// The reads, by answer: none (not listening yet), 503 (syncing), 200
	// with every instance, 200 empty or partial, another status.
	// Exited is the error and log tail of the restarted node when it
	// exited on its own before it held every instance.
	Exited      string        `json:"exited,omitempty"`
	NoAnswer    int           `json:"no_answer"`
	Unavailable int           `json:"status_503"`
	Whole       int           `json:"whole"`
	NotWhole    int           `json:"empty_or_partial"`
	Other       int           `json:"other_status"`
	Reads       []clusterRead `json:"reads"`
}

// add counts a read of the restarted node.
func (s *clusterRestart) add(rec clusterRead, rd registryRead, n int) {
	s.Reads = append(s.Reads, rec)
	switch {
	case rd.status == 0:
		s.NoAnswer++
	case rd.status == 503:
		s.Unavailable++
	case rd.whole(n):
		s.Whole++
		if s.FirstWholeReadSeconds == nil {
			s.FirstWholeReadSeconds = seconds(time.Duration((rec.AtSeconds + rec.Seconds) * float64(time.Second)))
		}
	case rd.status == 200:
		s.NotWhole++
	default:
		s.Other++
	}
}

func (s clusterRestart) String() string {
	held := "holds every instance after " + secondsOr(s.HoldsAfterSeconds)
	switch {
	case s.Exited != "":
		held = "EXITED before it held them all"
	case s.HoldsAfterSeconds == nil:
		held = "holds " + commas(s.HeldAtDeadline) + " at the deadline"
	}
	return fmt.Sprintf("%s, a whole read answered after %s; %d reads: %d no answer, %d 503, %d whole, %d empty or partial, %d other status (its peers held %v at the kill)",
		held, secondsOr(s.FirstWholeReadSeconds), len(s.Reads), s.NoAnswer, s.Unavailable, s.Whole, s.NotWhole, s.Other, s.PeersHeld)
}

// clusterTarget is one target of issue 43.
type clusterTarget struct {
	Name  string `json:"name"`
	Value string `json:"value"`
	Met   bool   `json:"met"`
}

// seconds is d in seconds, for the record.
func seconds(d time.Duration) *float64 {
	s := d.Seconds()
	return &s
}

// secondsOr prints a wait: its seconds, or that the deadline came first.
func secondsOr(s *float64) string {
	if s == nil {
		return "never (the deadline came first)"
	}
	return fmt.Sprintf("%.2f s", *s)
}

// within reports whether a wait ended in time, at most limit seconds.
func within(s *float64, limit float64) bool { return s != nil && *s <= limit }

// report prints the targets and the failures, writes the record, and
// fails the run when a failure was seen.
func (r *clusterRun) report() error {
	rec := &r.rec
	rec.LoadAfter = loadAverage()
	worst := func(each func(n clusterNodeRecord) *float64, peersOnly bool) (*float64, bool) {
		var w *float64
		for k, n := range rec.Nodes {
			if peersOnly && k == 0 {
				continue
			}
			s := each(n)
			if s == nil {
				return nil, false
			}
			if w == nil || *s > *w {
				w = s
			}
		}
		return w, true
	}
	peers, _ := worst(func(n clusterNodeRecord) *float64 { return n.HoldsAfterSeconds }, true)
	reads, _ := worst(func(n clusterNodeRecord) *float64 { return n.WholeReadAfterSeconds }, false)
	rs := rec.Restart
	h, b := rec.Heartbeats, rec.Baseline
	ratio := h.CPUPerHeartbeatMicros / b.CPUPerHeartbeatMicros
	rateMade := float64(h.Answered) >= 0.99*float64(h.Sent)
	rec.Targets = []clusterTarget{
		{"peers hold every instance within 5 s of the last registration", "the slower peer " + secondsOr(peers), within(peers, 5)},
		{"each node's first gzip full read whole within 5 s of the last registration", "the slowest " + secondsOr(reads), within(reads, 5)},
		{"the restarted node whole within 60 s, no empty or partial read", fmt.Sprintf("holds them after %s, %d empty or partial reads", secondsOr(rs.HoldsAfterSeconds), rs.NotWhole),
			within(rs.HoldsAfterSeconds, 60) && rs.FirstWholeReadSeconds != nil && rs.NotWhole == 0},
		{"cluster CPU per heartbeat at most 3.5 times a single node's direct heartbeat", fmt.Sprintf("%.1f µs against %.1f µs: %.2f times", h.CPUPerHeartbeatMicros, b.CPUPerHeartbeatMicros, ratio), ratio <= 3.5},
		{fmt.Sprintf("heartbeat p99 under 10 ms at %s /s over the cluster", commas(h.Rate)), fmt.Sprintf("%.1f ms, %s of %s answered", h.P99Ms, commas(int(h.Answered)), commas(int(h.Sent))), h.Answered > 0 && h.P99Ms < 10 && rateMade},
	}
	if rs.NotWhole > 0 {
		rec.Failures = append(rec.Failures, fmt.Sprintf("the restarted node answered %d reads 200 with an empty or partial registry (its counts: %s)", rs.NotWhole, notWholeCounts(rs.Reads, rec.Instances)))
	}
	if rs.Exited != "" {
		rec.Failures = append(rec.Failures, "the restarted node exited on its own: "+rs.Exited)
	}
	if rs.FirstWholeReadSeconds == nil {
		rec.Failures = append(rec.Failures, "the restarted node answered no whole read within the deadline")
	}
	for _, n := range rec.Nodes {
		if n.HoldsAfterSeconds == nil {
			rec.Failures = append(rec.Failures, fmt.Sprintf("%s held %s of %s instances at the deadline", n.Name, commas(n.HeldAtDeadline), commas(rec.Instances)))
		}
	}

	fmt.Fprintf(r.out, "\ntargets (issue 43); the nodes share the %d cores with the load (load average now %s):\n", rec.CPUs, rec.LoadAfter)
	for _, t := range rec.Targets {
		met := "met"
		if !t.Met {
			met = "MISSED"
		}
		fmt.Fprintf(r.out, "%s: %s: %s\n", t.Name, t.Value, met)
	}
	for _, f := range rec.Failures {
		fmt.Fprintf(r.out, "FAILURE: %s\n", f)
	}
	if err := r.writeRecord(); err != nil {
		return err
	}
	if len(rec.Failures) > 0 {
		return fmt.Errorf("%d failures (above)", len(rec.Failures))
	}
	return nil
}

// notWholeCounts lists the instance counts of the reads that answered
// 200 without every instance.
func notWholeCounts(reads []clusterRead, n int) string {
	var out []string
	for _, rd := range reads {
		if rd.Status == 200 && (rd.Instances != n || rd.Error != "") {
			out = append(out, commas(rd.Instances))
		}
	}
	return strings.Join(out, ", ")
}

// writeRecord writes the record where -json says.
func (r *clusterRun) writeRecord() error {
	if r.c.json == "" {
		return nil
	}
	b, err := json.MarshalIndent(&r.rec, "", "  ")
	if err != nil {
		return err
	}
	b = append(b, '\n')
	if r.c.json == "-" {
		_, err = r.out.Write(b)
		return err
	}
	return os.WriteFile(r.c.json, b, 0o644)
}
