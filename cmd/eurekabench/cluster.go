package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"
)

// The cluster study (issue 43): three nodes of cmd/eureka, built with go
// build into a temporary directory (or -eureka), each in a process of its
// own on a loopback address of its own (127.0.0.2, .3 and .4), each with
// -peers naming all three, as an operator runs a cluster; the load runs
// here.
//
//  1. -instances instances (millionInstance: Spring-shaped, over -apps
//     apps) register on the first node from -register-conns clients, as
//     fast as they are answered.
//  2. From the last registration's answer, each node's
//     GET /eureka/status is polled until its registered-instances is
//     -instances: the time per node.
//  3. At the same moment, one client per node reads that node's whole
//     registry (GET /eureka/apps/, JSON, gzip), all three at once, as a
//     data centre's clients do after a mass registration: each read's
//     time, and the instances counted in it. A read that does not hold
//     them all is repeated until one does: the time until then.
//  4. Once the nodes are quiet (less than a tenth of a core each, the
//     documents the reads built kept), -heartbeat-rate heartbeats a
//     second for -heartbeat-duration, spread over the three nodes in
//     turn: their p50 / p99 / max, each node's CPU (from
//     /proc/<pid>/stat) over the window per heartbeat sent to the
//     cluster (each is processed on its node and replicated to the other
//     two), and the three nodes' together.
//  5. The second node is killed (SIGKILL) and started again with the
//     same flags: the time until its status holds -instances again,
//     while one client reads its whole registry -restart-reads times a
//     second (one read at a time) and records every answer: no answer
//     (not listening yet), 503 (syncing), 200 whole, 200 empty or
//     partial (a failure: a client would take it for the registry), or
//     another status.
//  6. Each node's VmRSS and VmHWM (the restarted node's since its
//     restart).
//
// Then the cluster stops, and one node alone (no peers) takes the same
// registrations, one read, and the same heartbeats at the same rate for
// the same time over as many connections: the CPU of a direct heartbeat,
// measured in the same run, which the cluster's is set against. Last, one line per target of issue 43, and with -json the
// record of every figure. Every wait ends at -deadline and is then
// reported as missed; an empty or partial read is a failure line, and
// the command exits 1 after its report.
//
//	go run ./cmd/eurekabench cluster
//	go run ./cmd/eurekabench cluster -instances 50000 -json cluster.json

// clusterConfig is the study's settings.
type clusterConfig struct {
	instances, apps int
	regConns        int
	hbRate          int
	hbDuration      time.Duration
	hbConns         int
	restartReads    int
	deadline        time.Duration
	eureka          string // the cmd/eureka binary; "" to build it
	serverFlags     []string
	json            string // where the record goes; "" for nowhere, "-" for stdout
}

// clusterHosts are the nodes' loopback addresses, the first the one
// registered on.
var clusterHosts = [3]string{"127.0.0.2", "127.0.0.3", "127.0.0.4"}

// restartedNode is the node killed and started again: not the one
// registered on.
const restartedNode = 1

// clusterCommand is "eurekabench cluster".
func clusterCommand(fs *flag.FlagSet) func(io.Writer, *record) error {
	c := clusterConfig{}
	fs.IntVar(&c.instances, "instances", 1_000_000, "instances registered on the first node")
	fs.IntVar(&c.apps, "apps", 1000, "over this many applications")
	fs.IntVar(&c.regConns, "register-conns", 16, "concurrent registering clients")
	fs.IntVar(&c.hbRate, "heartbeat-rate", 10_000, "heartbeats per second over the cluster, spread over the nodes in turn (and the same rate on the single node)")
	fs.DurationVar(&c.hbDuration, "heartbeat-duration", 30*time.Second, "how long the heartbeats run, on the cluster and on the single node")
	fs.IntVar(&c.hbConns, "heartbeat-conns", 8, "connections to each node of the cluster that its heartbeats share (the single node has three times as many)")
	fs.IntVar(&c.restartReads, "restart-reads", 4, "full reads a second of the restarted node until it holds the instances (one at a time: a slow answer delays the next)")
	fs.DurationVar(&c.deadline, "deadline", 2*time.Minute, "how long each wait lasts at most: until the nodes hold the instances, the first reads, the quiet before the heartbeats, the restarted node; one that ends so is reported as missed")
	fs.StringVar(&c.eureka, "eureka", "", "the cmd/eureka binary to run (default: built with go build into a temporary directory)")
	serverFlags := fs.String("server-flags", "", `more flags for every cmd/eureka node, separated by spaces ("-memory-limit=3.5GiB")`)
	fs.StringVar(&c.json, "json", "", `write the record of every figure, as JSON, to this file ("-": to stdout, after the report)`)
	return func(out io.Writer, rec *record) error {
		c.serverFlags = strings.Fields(*serverFlags)
		switch {
		case c.instances < 1 || c.apps < 1 || c.apps > c.instances:
			return fmt.Errorf("-instances %d and -apps %d: at least one app, and no more apps than instances", c.instances, c.apps)
		case c.regConns < 1 || c.hbRate < 1 || c.hbConns < 1 || c.restartReads < 1:
			return errors.New("-register-conns, -heartbeat-rate, -heartbeat-conns and -restart-reads need at least 1")
		case c.hbDuration < time.Second || c.deadline < time.Second:
			return errors.New("-heartbeat-duration and -deadline need at least 1s")
		}
		return untilStopped(out, func(ctx context.Context, out io.Writer) error { return runCluster(ctx, c, out) })
	}
}

// clusterRun is one run: the nodes and what the phases share.
type clusterRun struct {
	ctx   context.Context
	c     clusterConfig
	out   io.Writer
	dir   string        // the nodes' logs
	nodes []*node       // the cluster's, then the single node
	args  [3][]string   // each cluster node's flags, for the restart
	regAt time.Time     // the last registration's answer
	paths []string      // the heartbeats' instances
	rec   clusterRecord // every figure
}

func runCluster(ctx context.Context, c clusterConfig, out io.Writer) (err error) {
	dir, err := os.MkdirTemp("", "eurekabench-cluster-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	r := &clusterRun{ctx: ctx, c: c, out: out, dir: dir}
	defer func() {
		for _, n := range r.nodes {
			if err != nil && n.exited() {
				err = fmt.Errorf("%v\n%s exited; its log ends:\n%s", err, n.name, n.logTail())
			}
			n.stop()
		}
	}()
	var built string
	if c.eureka, built, err = eurekaBinary(ctx, dir, c.eureka); err != nil {
		return err
	}
	if built != "" {
		built = "; " + built
	}
	r.c = c
	r.rec = clusterRecord{Instances: c.instances, Apps: c.apps, CPUs: runtime.NumCPU(), LoadBefore: loadAverage(),
		ServerFlags: c.serverFlags, DeadlineSeconds: c.deadline.Seconds(), Failures: []string{}}
	flags := ""
	if len(c.serverFlags) > 0 {
		flags = "; cmd/eureka " + strings.Join(c.serverFlags, " ")
	}
	fmt.Fprintf(out, "eurekabench cluster: 3 nodes, %s instances over %s apps registered on the first; %d CPUs, load average %s before the run%s%s\n",
		commas(c.instances), commas(c.apps), runtime.NumCPU(), r.rec.LoadBefore, built, flags)
	r.paths = make([]string, min(c.instances, c.hbRate*int(c.hbDuration.Seconds()+1)))
	for n := range r.paths {
		r.paths[n] = millionPath(n, c.apps)
	}
	for _, phase := range []func() error{r.startCluster, r.massRegistration, r.clusterHeartbeats, r.restart, r.memory, r.stopCluster, r.baseline} {
		if err := phase(); err != nil {
			return err
		}
	}
	return r.report()
}

// startCluster starts the three nodes, each with every node in -peers,
// and waits until each serves reads.
func (r *clusterRun) startCluster() error {
	var addrs, urls []string
	for _, h := range clusterHosts {
		a, err := loopbackAddr(h)
		if err != nil {
			return err
		}
		addrs, urls = append(addrs, a), append(urls, "http://"+a+"/eureka/")
	}
	for k, a := range addrs {
		r.args[k] = append([]string{"-peers", strings.Join(urls, ",")}, r.c.serverFlags...)
		n, err := startEureka(r.c.eureka, r.dir, "node-"+strconv.Itoa(k+1), a, r.args[k]...)
		if err != nil {
			return fmt.Errorf("starting node %d: %v", k+1, err)
		}
		r.nodes = append(r.nodes, n)
		r.rec.Nodes = append(r.rec.Nodes, clusterNodeRecord{Name: n.name, Addr: a})
	}
	for _, n := range r.nodes {
		if err := r.awaitOpen(n); err != nil {
			return err
		}
	}
	return nil
}

// awaitOpen waits until n serves reads (the start-up sync done), for up
// to the deadline.
func (r *clusterRun) awaitOpen(n *node) error {
	_, err := r.poll(n, time.Now(), func() bool {
		status, err := request(n.registry, "GET", openProbe, nil)
		return err == nil && status == http.StatusNotFound
	})
	if errors.Is(err, errDeadline) {
		return fmt.Errorf("%s did not serve reads within %v:\n%s", n.name, r.c.deadline, n.logTail())
	}
	return err
}

// errDeadline is poll's when the deadline passed first.
var errDeadline = errors.New("the deadline passed")

// poll calls ok every 20 ms until it holds, and returns the time since
// from; errDeadline once the deadline (from from) has passed, or an
// error when n has exited or the run was interrupted.
func (r *clusterRun) poll(n *node, from time.Time, ok func() bool) (time.Duration, error) {
	deadline := from.Add(r.c.deadline)
	for {
		if ok() {
			return time.Since(from), nil
		}
		switch {
		case n.exited():
			return 0, fmt.Errorf("%s exited; its log ends:\n%s", n.name, n.logTail())
		case time.Now().After(deadline):
			return 0, errDeadline
		}
		select {
		case <-r.ctx.Done():
			return 0, r.ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// awaitHeld polls n's status until it holds every instance, and returns
// the time since from; nil when the deadline came first, with the count
// it held last.
func (r *clusterRun) awaitHeld(n *node, from time.Time) (*float64, int, error) {
	last := 0
	took, err := r.poll(n, from, func() bool {
		if held, err := registeredOn(n.registry); err == nil {
			last = held
		}
		return last == r.c.instances
	})
	if errors.Is(err, errDeadline) {
		return nil, last, nil
	}
	if err != nil {
		return nil, last, err
	}
	return seconds(took), last, nil
}

// massRegistration is phases 1 to 3: the registrations on the first
// node, then, from the last one's answer, the time until each node holds
// them and each node's first read of its whole registry, all at once.
func (r *clusterRun) massRegistration() error {
	c := r.c
	took, err := registerBulk(r.ctx, "cluster", r.nodes[0].registry, c.instances, c.apps, c.regConns)
	if err != nil {
		return err
	}
	r.regAt = time.Now()
	r.rec.Registration = clusterRegistration{Seconds: took.Seconds(), PerSecond: float64(c.instances) / took.Seconds(), Conns: c.regConns}
	fmt.Fprintf(r.out, "registrations on %s: %s in %.1f s, %s /s (%d clients)\n", r.nodes[0].name,
		commas(c.instances), took.Seconds(), commas(int(r.rec.Registration.PerSecond)), c.regConns)

	errs := make([]error, 2*len(r.nodes))
	var wg sync.WaitGroup
	for k, n := range r.nodes {
		rec := &r.rec.Nodes[k]
		wg.Go(func() {
			rec.HoldsAfterSeconds, rec.HeldAtDeadline, errs[2*k] = r.awaitHeld(n, r.regAt)
			if rec.HoldsAfterSeconds != nil {
				rec.HeldAtDeadline = 0
			}
		})
		wg.Go(func() { errs[2*k+1] = r.firstReads(n, rec) })
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return err
	}
	for _, rec := range r.rec.Nodes {
		held := fmt.Sprintf("holds them all %s after the last registration", secondsOr(rec.HoldsAfterSeconds))
		if rec.HoldsAfterSeconds == nil {
			held = fmt.Sprintf("holds %s of them at the deadline (%v)", commas(rec.HeldAtDeadline), c.deadline)
		}
		fmt.Fprintf(r.out, "  %s: %s; its first full read (gzip JSON) %s; whole %s (%d reads)\n",
			rec.Name, held, rec.FirstRead, secondsOr(rec.WholeReadAfterSeconds), rec.ReadsUntilWhole)
	}
	return nil
}

// firstReads reads n's whole registry from the last registration on,
// again while a read does not hold every instance, until the deadline.
func (r *clusterRun) firstReads(n *node, rec *clusterNodeRecord) error {
	ctx, cancel := context.WithDeadline(r.ctx, r.regAt.Add(r.c.deadline))
	defer cancel()
	client := docClient(1)
	defer client.CloseIdleConnections()
	for ctx.Err() == nil {
		rd := readRegistry(ctx, client, n.registry)
		rec.ReadsUntilWhole++
		if rec.ReadsUntilWhole == 1 {
			rec.FirstRead = readRecord(rd, 0)
		}
		if rd.whole(r.c.instances) {
			rec.WholeReadAfterSeconds = seconds(time.Since(r.regAt))
			return nil
		}
		if n.exited() {
			return fmt.Errorf("%s exited; its log ends:\n%s", n.name, n.logTail())
		}
		select { // a quick refusal (503) is not asked again at once
		case <-ctx.Done():
		case <-time.After(20 * time.Millisecond):
		}
	}
	return r.ctx.Err()
}

// clusterHeartbeats is phase 4: once the nodes are quiet, heartbeats at
// the rate over the three, and each node's CPU over them.
func (r *clusterRun) clusterHeartbeats() error {
	h, cpus, err := r.heartbeatWindow(r.nodes, r.c.hbConns)
	if err != nil {
		return err
	}
	r.rec.Heartbeats = h
	for k := range r.nodes {
		rec := &r.rec.Nodes[k]
		rec.Heartbeats, rec.HeartbeatCPUSeconds = h.perNode[k], cpus[k].Seconds()
		rec.CPUPerClusterHeartbeatMicros = us(cpus[k]) / float64(max(1, h.Answered))
	}
	fmt.Fprintf(r.out, "heartbeats over the cluster: %s\n", h)
	for _, rec := range r.rec.Nodes {
		fmt.Fprintf(r.out, "  %s: %s sent to it; CPU %.2f s, %.1f µs per heartbeat to the cluster\n",
			rec.Name, commas(int(rec.Heartbeats)), rec.HeartbeatCPUSeconds, rec.CPUPerClusterHeartbeatMicros)
	}
	return nil
}

// heartbeatWindow waits until nodes are quiet (up to the deadline), then
// runs the heartbeats at the rate over them, on conns connections to
// each, and returns their figures and each node's CPU over the window.
func (r *clusterRun) heartbeatWindow(nodes []*node, conns int) (clusterHeartbeats, []time.Duration, error) {
	c := r.c
	cpu := make([]func() float64, len(nodes))
	addrs := make([]string, len(nodes))
	for k, n := range nodes {
		cpu[k] = func() float64 { return cpuSeconds(func() []int { return []int{n.pid()} }) }
		addrs[k] = n.registry
	}
	start := time.Now()
	quiet := settleWithin(c.deadline, cpu...)
	h := clusterHeartbeats{Nodes: len(nodes), Rate: c.hbRate, QuietBefore: quiet, QuietAfterSeconds: time.Since(start).Seconds()}
	before := make([]float64, len(nodes))
	for k := range nodes {
		before[k] = cpu[k]()
	}
	res := pacedHeartbeats(r.ctx, addrs, r.paths, c.hbRate, c.hbDuration, conns, "")
	if err := r.ctx.Err(); err != nil {
		return h, nil, err
	}
	cpus := make([]time.Duration, len(nodes))
	var total time.Duration
	for k, n := range nodes {
		if n.exited() {
			return h, nil, fmt.Errorf("%s exited during the heartbeats; its log ends:\n%s", n.name, n.logTail())
		}
		cpus[k] = time.Duration((cpu[k]() - before[k]) * float64(time.Second))
		total += cpus[k]
	}
	h.Seconds, h.Sent, h.Skipped, h.Failed = res.wall.Seconds(), res.sent, res.skipped, res.failed
	h.perNode = res.perNode
	for _, n := range res.perNode {
		h.Answered += n
	}
	h.P50Ms, h.P99Ms, h.MaxMs = ms(res.answered.p50), ms(res.answered.p99), ms(res.answered.max)
	h.CPUSeconds = total.Seconds()
	h.CPUPerHeartbeatMicros = us(total) / float64(max(1, h.Answered))
	if h.Answered == 0 {
		return h, nil, fmt.Errorf("no heartbeat answered 200 in %v (%d failed)", c.hbDuration, h.Failed)
	}
	return h, cpus, nil
}

// restart is phase 5: the second node killed and started again with the
// same flags, and read meanwhile.
func (r *clusterRun) restart() error {
	c := r.c
	old := r.nodes[restartedNode]
	rs := &r.rec.Restart
	rs.Node = old.name
	for k, n := range r.nodes {
		if k != restartedNode {
			held, err := registeredOn(n.registry)
			if err != nil {
				return fmt.Errorf("%s: %v", n.name, err)
			}
			rs.PeersHeld = append(rs.PeersHeld, held)
		}
	}
	old.Kill()
	n, err := startEureka(c.eureka, r.dir, old.name+"-restarted", old.registry, r.args[restartedNode]...)
	if err != nil {
		return fmt.Errorf("restarting %s: %v", old.name, err)
	}
	started := time.Now()
	r.nodes[restartedNode] = n
	r.rec.Nodes[restartedNode].Restarted = true

	// The reader, until the node holds every instance and has answered a
	// whole read, or the deadline.
	ctx, cancel := context.WithDeadline(r.ctx, started.Add(c.deadline))
	defer cancel()
	held := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		client := docClient(1)
		defer client.CloseIdleConnections()
		heldSeen := false
		for ctx.Err() == nil {
			at := time.Since(started)
			rd := readRegistry(ctx, client, n.registry)
			if rd.err != nil && ctx.Err() != nil {
				return // cut by the deadline: no answer of the node's
			}
			rs.add(readRecord(rd, at), rd, c.instances)
			if !heldSeen {
				select {
				case <-held:
					heldSeen = true
				default:
				}
			}
			if heldSeen && rd.whole(c.instances) {
				return
			}
			select {
			case <-ctx.Done():
			case <-time.After(time.Until(started.Add(at + time.Second/time.Duration(c.restartReads)))):
			}
		}
	})
	rs.HoldsAfterSeconds, rs.HeldAtDeadline, err = r.awaitHeld(n, started)
	if rs.HoldsAfterSeconds != nil {
		rs.HeldAtDeadline = 0
	}
	close(held)
	if err != nil {
		cancel() // the node is gone, or the run interrupted: the reader stops too
	}
	wg.Wait()
	if err != nil && n.exited() && r.ctx.Err() == nil {
		rs.Exited, err = err.Error(), nil // a finding: the report says it, and the run goes on
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(r.out, "%s killed (SIGKILL) and started again: %s\n", rs.Node, rs)
	return nil
}

// memory is phase 6: each node's resident memory.
func (r *clusterRun) memory() error {
	for k, n := range r.nodes {
		rec := &r.rec.Nodes[k]
		rec.VmRSS, rec.VmHWM = memoryOf(n.pid())
		since := ""
		switch {
		case n.exited():
			since = " (it has exited)"
		case rec.Restarted:
			since = " (since its restart)"
		}
		fmt.Fprintf(r.out, "  %s memory: VmRSS %s, VmHWM %s%s\n", rec.Name, gb(rec.VmRSS), gb(rec.VmHWM), since)
	}
	return nil
}

// stopCluster stops the three nodes, which frees their memory for the
// single node.
func (r *clusterRun) stopCluster() error {
	for _, n := range r.nodes {
		n.stop()
	}
	r.nodes = nil
	return nil
}

// baseline is the single node: the same registrations, one read that
// builds its documents, and the same heartbeats at the same rate over as
// many connections as the cluster's three nodes had, for the CPU of a
// direct heartbeat.
func (r *clusterRun) baseline() error {
	c := r.c
	addr, err := loopbackAddr(clusterHosts[0])
	if err != nil {
		return err
	}
	n, err := startEureka(c.eureka, r.dir, "single", addr, c.serverFlags...)
	if err != nil {
		return fmt.Errorf("starting the single node: %v", err)
	}
	r.nodes = []*node{n}
	if err := r.awaitOpen(n); err != nil {
		return err
	}
	if _, err := registerBulk(r.ctx, "cluster", addr, c.instances, c.apps, c.regConns); err != nil {
		return fmt.Errorf("the single node: %v", err)
	}
	client := docClient(1)
	defer client.CloseIdleConnections()
	ctx, cancel := context.WithTimeout(r.ctx, c.deadline)
	defer cancel()
	if rd := readRegistry(ctx, client, addr); !rd.whole(c.instances) {
		return fmt.Errorf("the single node's full read: %s", readRecord(rd, 0))
	}
	h, _, err := r.heartbeatWindow(r.nodes, len(clusterHosts)*c.hbConns) // as many connections as the cluster's
	if err != nil {
		return fmt.Errorf("the single node: %v", err)
	}
	r.rec.Baseline = h
	fmt.Fprintf(r.out, "heartbeats on one node alone (no peers, the same instances; the baseline): %s\n", h)
	return nil
}
