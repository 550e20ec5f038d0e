package main

import (
	"fmt"
	"runtime"
	"slices"
	"time"
)

// The million study's report: a few lines as each phase ends, then the
// heartbeats over the run, the documents' instances and one line per
// target of issue 31; the same figures go to the record by name (-json).

// serverCPU is a phase's server CPU time.
func serverCPU(p phaseResult) time.Duration { return time.Duration(p.ServerCPU * float64(time.Second)) }

// wall is a phase's wall time.
func wall(p phaseResult) time.Duration { return time.Duration(p.Seconds * float64(time.Second)) }

func (r *millionRun) reportRegistrations() error {
	c, res := r.c, &r.res
	fmt.Fprintf(r.out, "registrations: %s in %.1f s, %s /s (%d clients); server RSS %s%s\n",
		commas(c.instances), res.regTook.Seconds(), commas(int(float64(c.instances)/res.regTook.Seconds())), c.regConns, gb(res.reg.ServerRSS), r.heapNote("register"))
	fmt.Fprintf(r.out, "  cores: %s\n", res.reg.cores())
	r.rec.add("instances", float64(c.instances), "")
	r.rec.add("apps", float64(c.apps), "")
	r.rec.add("registrations.conns", float64(c.regConns), "")
	r.rec.add("registrations.rate", float64(c.instances)/res.regTook.Seconds(), "/s")
	return nil
}

func (r *millionRun) reportAlone() error {
	p, beats := r.res.phase[phaseAlone], r.res.beats[phaseAlone]
	fmt.Fprintf(r.out, "heartbeats alone (%d connections, %s): %s /s; server %.2f cores, %.1f µs of CPU per heartbeat (the documents being built ahead)\n",
		r.c.hbConns, r.c.baseline, commas(int(float64(beats)/wall(p).Seconds())),
		serverCPU(p).Seconds()/wall(p).Seconds(), us(serverCPU(p)/time.Duration(beats)))
	return nil
}

func (r *millionRun) reportFull() error {
	c, full, p := r.c, r.res.full, r.res.phase[phaseFull]
	fmt.Fprintf(r.out, "%d concurrent first full fetches (JSON, gzip), each on its own connection: all answered in full in %.2f s (headers of the first after %.2f s, the first answered in full after %.2f s); %s each%s\n",
		c.readers, full.wall.Seconds(), full.firstHeader.Seconds(), full.firstDone.Seconds(), mbf(full.bytes), full.sameNote())
	fmt.Fprintf(r.out, "  server CPU %.2f s in %.2f s; RSS %s after%s\n",
		serverCPU(p).Seconds(), wall(p).Seconds(), gb(p.ServerRSS), r.heapNote("full"))
	r.rec.add("full.readers", float64(c.readers), "")
	r.rec.add("full.seconds", full.wall.Seconds(), "s")
	r.rec.add("full.first_header_seconds", full.firstHeader.Seconds(), "s")
	r.rec.add("full.bytes", float64(full.bytes), "B")
	return nil
}

// deltaFigures are the delta phase's latencies: over every delta and
// after each client's first, until the last byte and until the header.
type deltaFigures struct{ all, later, heads, laterHeads latencies }

func (r *millionRun) deltaFigures() deltaFigures {
	d := r.res.deltas
	return deltaFigures{
		all:        summarize(slices.Clone(d.latencies)),
		later:      summarize(slices.Clone(d.latencies[min(len(d.latencies), d.firstRound):])),
		heads:      summarize(slices.Clone(d.headers)),
		laterHeads: summarize(slices.Clone(d.headers[min(len(d.headers), d.firstRound):])),
	}
}

func (r *millionRun) reportDeltas() error {
	c, deltas, p := r.c, r.res.deltas, r.res.phase[phaseDelta]
	f := r.deltaFigures()
	fmt.Fprintf(r.out, "deltas (JSON, gzip): %d clients once a second for %s while %d changes/s were asked: %s changes made (%d failed), %s deltas\n",
		c.deltaClients, c.d, c.changesPerSec, commas(int(deltas.changes)), deltas.changeFailures, commas(f.all.n))
	fmt.Fprintf(r.out, "  delta p50 / p99 / max: %s; after each client's first: %s\n", all3(f.all), all3(f.later))
	fmt.Fprintf(r.out, "  until the header (the server's time to answer, its build included, the transfer not): %s; after each client's first: %s\n",
		all3(f.heads), all3(f.laterHeads))
	fmt.Fprintf(r.out, "  delta size: first %s, last %s (gzip)\n", mbf(deltas.firstBytes), mbf(deltas.lastBytes))
	fmt.Fprintf(r.out, "  server CPU %.2f s in %.1f s (%.2f cores); RSS %s after%s\n",
		serverCPU(p).Seconds(), wall(p).Seconds(), serverCPU(p).Seconds()/wall(p).Seconds(), gb(p.ServerRSS), r.heapNote("delta"))
	r.rec.add("delta.clients", float64(c.deltaClients), "")
	r.rec.add("delta.seconds", c.d.Seconds(), "s")
	r.rec.add("delta.answered", float64(f.all.n), "")
	r.rec.add("delta.first_bytes", float64(deltas.firstBytes), "B")
	r.rec.add("delta.changes", float64(deltas.changes), "")
	r.rec.add("delta.change_failures", float64(deltas.changeFailures), "")
	addLatencies(r.rec, "delta.header", f.heads)
	addLatencies(r.rec, "delta.header_after_first", f.laterHeads)
	addLatencies(r.rec, "delta.last_byte", f.all)
	return nil
}

// addLatencies adds l's p50, p99 and max, in ms, as name.p50 and so on.
func addLatencies(rec *record, name string, l latencies) {
	rec.add(name+".n", float64(l.n), "")
	rec.add(name+".p50", ms(l.p50), "ms")
	rec.add(name+".p99", ms(l.p99), "ms")
	rec.add(name+".max", ms(l.max), "ms")
}

// perBeat is the server's CPU per heartbeat when they ran alone at the
// end, every document built.
func (r *millionRun) perBeat() time.Duration {
	return serverCPU(r.res.phase[phaseQuiet]) / time.Duration(r.res.beats[phaseQuiet])
}

// readsCPU is a phase's server CPU less its heartbeats at perBeat.
func (r *millionRun) readsCPU(cpu time.Duration, n int64) time.Duration {
	return max(0, cpu-time.Duration(n)*r.perBeat())
}

func (r *millionRun) reportQuiet() error {
	p := r.res.phase[phaseQuiet]
	fmt.Fprintf(r.out, "heartbeats alone again: %s /s; server %.2f cores, %.1f µs of CPU per heartbeat, which the reads' CPU below excludes\n",
		commas(int(float64(r.res.beats[phaseQuiet])/wall(p).Seconds())), serverCPU(p).Seconds()/wall(p).Seconds(), us(r.perBeat()))
	reg, full, delta, end := r.res.reg, r.res.phase[phaseFull], r.res.phase[phaseDelta], r.res.phase[phaseFormats]
	fmt.Fprintf(r.out, "server memory: VmRSS %s, VmHWM %s (its peak); RSS / peak after the registrations %s / %s, the full fetches %s / %s, the deltas %s / %s%s\n",
		gb(end.ServerRSS), gb(end.ServerHWM), gb(reg.ServerRSS), gb(reg.ServerHWM), gb(full.ServerRSS), gb(full.ServerHWM), gb(delta.ServerRSS), gb(delta.ServerHWM), r.heapNote("formats"))
	r.rec.add("heartbeats.cpu_per_beat", float64(r.perBeat())/1e3, "µs")
	r.rec.add("memory.hwm", float64(end.ServerHWM), "B")
	r.rec.add("memory.rss_end", float64(end.ServerRSS), "B")
	return nil
}

// report writes what needs the whole run: the heartbeats over it, the
// instances in the documents kept, and the targets.
func (r *millionRun) report() error {
	out, res := r.out, &r.res
	hbAll, hbPhase := r.hb.latencies()
	worst, worstPhase := time.Duration(0), ""
	for p := range phases {
		if hbPhase[p].n > 0 && hbPhase[p].p99 >= worst {
			worst, worstPhase = hbPhase[p].p99, phaseNames[p]
		}
	}
	var total time.Duration
	for _, p := range res.phase {
		total += wall(p)
	}
	fmt.Fprintf(out, "heartbeats over the run: %s in %.1f s (%s /s), p50 / p99 / max %s; %d answered 404 (lease gone), %d failed\n",
		commas(hbAll.n), total.Seconds(), commas(int(float64(hbAll.n)/total.Seconds())), all3(hbAll), r.hb.notFound.Load(), r.hb.failed.Load())
	for p := range phases {
		l := hbPhase[p]
		rate := float64(l.n) / res.phase[p].Seconds
		fmt.Fprintf(out, "  during %-24s %8s /s, p50 / p99 / max %s; cores: %s\n", phaseNames[p]+":",
			commas(int(rate)), all3(l), res.phase[p].cores())
		addLatencies(r.rec, "heartbeats."+phaseKeys[p], l)
		r.rec.add("heartbeats."+phaseKeys[p]+".rate", rate, "/s")
	}
	addLatencies(r.rec, "heartbeats.run", hbAll)
	r.rec.add("heartbeats.not_found", float64(r.hb.notFound.Load()), "")
	r.rec.add("heartbeats.failed", float64(r.hb.failed.Load()), "")

	// The documents kept, counted now that the load has stopped.
	fullCount, err := countInGzip(res.full.kept, jsonInstancePattern)
	if err != nil {
		return fmt.Errorf("the first full fetch: %v", err)
	}
	deltaCount, err := countInGzip(res.deltas.firstBody, jsonInstancePattern)
	if err != nil {
		return fmt.Errorf("the first delta: %v", err)
	}
	fmt.Fprintf(out, "instances in the first full fetch: %s; in the first delta: %s\n", commas(fullCount), commas(deltaCount))
	r.rec.add("full.instances", float64(fullCount), "")
	r.rec.add("delta.first_instances", float64(deltaCount), "")
	fmt.Fprintln(out, "one read of each format, during the heartbeats (full JSON gzip and delta JSON gzip were read above):")
	for n := range res.reads {
		rd := &res.reads[n]
		if rd.kept != nil {
			if rd.count, err = countInGzip(rd.kept, rd.pattern); err != nil {
				return fmt.Errorf("%s: %v", rd.name, err)
			}
			rd.kept = nil
		}
		fmt.Fprintf(out, "  %-16s %9s in %6.2f s, %s instances; server CPU %.2f s less the heartbeats'; RSS %s, peak %s after\n",
			rd.name, mbf(rd.bytes), rd.took.Seconds(), commas(rd.count), r.readsCPU(rd.cpu, rd.beats).Seconds(), gb(rd.rss), gb(rd.hwm))
		r.rec.add("read."+rd.name+".seconds", rd.took.Seconds(), "s")
		r.rec.add("read."+rd.name+".bytes", float64(rd.bytes), "B")
		r.rec.add("read."+rd.name+".instances", float64(rd.count), "")
	}
	return r.reportTargets(hbAll, worst, worstPhase, fullCount)
}

// phaseKeys name the phases in the record's figures.
var phaseKeys = [phases]string{"alone", "full", "delta", "formats", "quiet"}

// reportTargets writes one line per target of issue 31, and fails the
// run if a document missed instances.
func (r *millionRun) reportTargets(hbAll latencies, worst time.Duration, worstPhase string, fullCount int) error {
	c, out, res := r.c, r.out, &r.res
	f := r.deltaFigures()
	end := res.phase[phaseFormats]
	fmt.Fprintf(out, "\ntargets (issue 31); the server shares the %d cores with the load (load average now %s):\n", runtime.NumCPU(), loadAverage())
	target := func(ok bool) string {
		if ok {
			return "met"
		}
		return "MISSED"
	}
	fmt.Fprintf(out, "%d concurrent first gzip full fetches: %.2f s (target <= 5 s): %s\n", c.readers, res.full.wall.Seconds(), target(res.full.wall <= 5*time.Second))
	afterFirst := "no client read a second delta"
	if f.later.n > 0 {
		afterFirst = fmt.Sprintf("%.1f ms after each client's first", ms(f.later.p99))
	}
	fmt.Fprintf(out, "delta p99 until the header: %.1f ms over the %s (target < 100 ms of server time): %s; until the last byte %.1f ms, %s\n",
		ms(f.heads.p99), c.d, target(f.heads.p99 < 100*time.Millisecond), ms(f.all.p99), afterFirst)
	fmt.Fprintf(out, "heartbeat p99: %.1f ms over the run, %.1f ms in the worst phase (%s) (target < 10 ms throughout): %s\n",
		ms(hbAll.p99), ms(worst), worstPhase, target(worst < 10*time.Millisecond))
	fmt.Fprintf(out, "rss: %s at its peak (VmHWM), %s at the end (target <= 4 GB): %s\n", gb(end.ServerHWM), gb(end.ServerRSS), target(end.ServerHWM <= 4e9))
	fullReads := r.readsCPU(serverCPU(res.phase[phaseFull]), res.beats[phaseFull])
	deltaReads := r.readsCPU(serverCPU(res.phase[phaseDelta]), res.beats[phaseDelta])
	fmt.Fprintf(out, "server CPU per read: first full fetch %.0f ms (one build shared by %d), delta %.2f ms\n",
		ms(fullReads/time.Duration(c.readers)), c.readers, ms(deltaReads/time.Duration(max(1, f.all.n))))
	r.rec.add("full.cpu_per_read", ms(fullReads/time.Duration(c.readers)), "ms")
	r.rec.add("delta.cpu_per_read", ms(deltaReads/time.Duration(max(1, f.all.n))), "ms")
	if fullCount != c.instances {
		return fmt.Errorf("the first full fetch holds %d instances, not %d", fullCount, c.instances)
	}
	for _, rd := range res.reads {
		if rd.full && rd.count >= 0 && rd.count != c.instances {
			return fmt.Errorf("%s holds %d instances, not %d", rd.name, rd.count, c.instances)
		}
	}
	return nil
}
