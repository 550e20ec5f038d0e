package main

import (
	"fmt"
	"time"
)

// The million study's phases, in order; each is measured by the meter
// (phase.go), has its CPU profile with -profile, and reports as it ends
// (millionreport.go).

// The phases after the registrations, during which heartbeats run.
const (
	phaseAlone = iota
	phaseFull
	phaseDelta
	phaseFormats
	phaseQuiet
	phases
)

var phaseNames = [phases]string{"heartbeats alone", "first full fetches", "deltas and changes", "one read of each format", "heartbeats alone again"}

// millionResults are the phases' results, which the report reads.
type millionResults struct {
	regTook time.Duration
	reg     phaseResult         // the registrations
	phase   [phases]phaseResult // the phases after them
	beats   [phases]int64       // heartbeats answered in each
	full    *fullResult
	deltas  *deltaResult
	reads   []docRead
}

// millionPhase is one phase: its name, its profile's name ("" for none)
// and what it does; heartbeats is its index among the phases with
// heartbeats, -1 for the registrations before them.
type millionPhase struct {
	name, profile string
	heartbeats    int
	run           func() error
	report        func() error
}

// measure runs the phases and reports each, then the whole run.
func (r *millionRun) measure() error {
	for _, p := range []millionPhase{
		{"registrations", "register", -1, func() (err error) { r.res.regTook, err = r.register(); return err }, r.reportRegistrations},
		{phaseNames[phaseAlone], "alone", phaseAlone, func() error { return r.sleep(r.c.baseline) }, r.reportAlone},
		{phaseNames[phaseFull], "full", phaseFull, func() (err error) { r.res.full, err = r.firstFullFetches(); return err }, r.reportFull},
		{phaseNames[phaseDelta], "delta", phaseDelta, func() (err error) { r.res.deltas, err = r.deltasAndChanges(); return err }, r.reportDeltas},
		{phaseNames[phaseFormats], "formats", phaseFormats, func() (err error) { r.res.reads, err = r.eachFormat(); return err }, func() error { return nil }},
		{phaseNames[phaseQuiet], "", phaseQuiet, func() error { return r.sleep(r.c.baseline) }, r.reportQuiet},
	} {
		if err := r.runPhase(p); err != nil {
			return err
		}
	}
	r.hb.halt()
	return r.report()
}

// runPhase runs p: its profile started, the heartbeats' latencies kept
// under it, the meter read at its start and end, and the heartbeats
// answered meanwhile counted.
func (r *millionRun) runPhase(p millionPhase) error {
	if p.heartbeats == 0 { // the first phase with heartbeats starts them
		r.paths = make([]string, r.c.instances)
		for n := range r.paths {
			r.paths[n] = millionPath(n, r.c.apps)
		}
		r.hb = startHeartbeats(r.addr, r.paths, r.c.hbConns)
	}
	if p.heartbeats >= 0 {
		r.hb.phase.Store(int32(p.heartbeats))
	}
	if err := r.profileStart(p.profile); err != nil {
		return err
	}
	var beats0 int64
	if r.hb != nil {
		beats0 = r.hb.count.Load()
	}
	end := r.meter.phase(p.name)
	err := p.run()
	res := end()
	if p.heartbeats >= 0 {
		r.res.phase[p.heartbeats], r.res.beats[p.heartbeats] = res, r.hb.count.Load()-beats0
	} else {
		r.res.reg = res
	}
	if err != nil {
		return err
	}
	if err := r.profileStop(p.profile); err != nil {
		return err
	}
	if p.heartbeats >= 0 && r.res.beats[p.heartbeats] == 0 && (p.heartbeats == phaseAlone || p.heartbeats == phaseQuiet) {
		at := ""
		if p.heartbeats == phaseQuiet {
			at = " at the end"
		}
		return fmt.Errorf("no heartbeat answered in %s%s (%d failed)", r.c.baseline, at, r.hb.failed.Load())
	}
	return p.report()
}
