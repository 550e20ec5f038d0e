package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/eurekagate/eurekagate/eureka"
	"github.com/eurekagate/eurekagate/routing"
)

// The regions study: a region fail-over through the fasthttp gateway
// under wrk load (issue 30). Two regions, each one cmd/eureka node in a
// process of its own on loopback: us-east-1 with -gateway and
// -gateway-failover-regions eu-west, reading eu-west as a remote region,
// and eu-west, reading us-east-1. The ORDERS backends run in this
// process, -local of them registered in us-east-1 and -remote in eu-west;
// each answers 200 with its region in X-Bench-Region (and the
// X-Eurekagate-Region it was sent, if any, in X-Bench-Failover).
//
// wrk sends GETs through the gateway for -duration. After -cancel-after
// every us-east-1 instance is cancelled (DELETE, all at once); -down after
// the last cancel was answered they register again (all at once). A probe
// sends GETs through the gateway one after the other, as fast as they are
// answered, and notes the region and time of each answer, from which the
// study prints how long after the last cancel was answered the first
// answer came from eu-west, and the first after which all came from
// there; how long after the re-registrations were sent the first answer
// came from us-east-1 again, and the first after which all did; and wrk's
// totals with its non-2xx answers and socket errors, which must be 0
// (and the probe's), as GETs are idempotent.
//
//	go run ./cmd/eurekabench regions -duration 15s -local 3 -remote 2
//
// The cmd/eureka binary is built with go build into a temporary
// directory unless -eureka names one.

// regionsConfig is the study's settings.
type regionsConfig struct {
	d, cancelAt, down time.Duration
	local, remote     int
	conns             int
	fetchInterval     time.Duration
	wrk               string // path of wrk
	eureka            string // the cmd/eureka binary; "" to build it
}

// The study's two regions.
const (
	localRegion  = "us-east-1"
	remoteRegion = "eu-west"
)

// regionsCommand is "eurekabench regions".
func regionsCommand(fs *flag.FlagSet) func(io.Writer, *record) error {
	d := fs.Duration("duration", 15*time.Second, "how long wrk loads the gateway (whole seconds)")
	cancelAt := fs.Duration("cancel-after", 5*time.Second, "when, after the load starts, every us-east-1 instance is cancelled")
	down := fs.Duration("down", 4*time.Second, "how long after the last cancel the us-east-1 instances register again")
	local := fs.Int("local", 3, "ORDERS instances registered in us-east-1, the gateway's region")
	remote := fs.Int("remote", 2, "ORDERS instances registered in eu-west")
	conns := fs.Int("connections", 16, "connections wrk keeps busy (wrk -t1)")
	fetch := fs.Duration("fetch-interval", time.Second, "each node's -remote-region-fetch-interval (our nodes watch each other; this is the fall-back)")
	bin := fs.String("eureka", "", "the cmd/eureka binary to run (default: built with go build into a temporary directory)")
	return func(out io.Writer, rec *record) error {
		c := regionsConfig{d: *d, cancelAt: *cancelAt, down: *down, local: *local, remote: *remote,
			conns: *conns, fetchInterval: *fetch, eureka: *bin}
		switch {
		case c.local < 1 || c.remote < 1:
			return errors.New("-local and -remote need at least one instance each")
		case c.conns < 1:
			return errors.New("-connections needs at least 1")
		case c.d < 3*time.Second || c.d%time.Second != 0:
			return fmt.Errorf("-duration %s: give whole seconds, at least 3", c.d)
		case c.cancelAt <= 0 || c.down <= 0 || c.cancelAt+c.down > c.d-time.Second:
			return fmt.Errorf("-cancel-after %s and -down %s must both be positive and end a second before -duration %s", c.cancelAt, c.down, c.d)
		}
		var err error
		if c.wrk, err = exec.LookPath("wrk"); err != nil {
			return errors.New("the regions study needs wrk on the PATH")
		}
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		defer stop()
		err = runRegions(ctx, c, out, rec)
		if ctx.Err() != nil {
			return errors.New("interrupted; every process it started has stopped")
		}
		return err
	}
}

// regionsRun is one run's processes and servers.
type regionsRun struct {
	ctx      context.Context
	c        regionsConfig
	nodes    []*node
	gateway  string                 // host:port of us-east-1's gateway
	local    []*eureka.InstanceInfo // registered in us-east-1
	remote   []*eureka.InstanceInfo // registered in eu-west
	backends []*fasthttp.Server
}

func runRegions(ctx context.Context, c regionsConfig, out io.Writer, rec *record) (err error) {
	dir, err := os.MkdirTemp("", "eurekabench-regions-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	r := &regionsRun{ctx: ctx, c: c}
	defer r.close()
	defer func() { // what the nodes said, when they failed
		if err == nil {
			return
		}
		for _, n := range r.nodes {
			if n.exited() {
				err = fmt.Errorf("%v\n%s exited; its log ends:\n%s", err, n.name, n.logTail())
			}
		}
	}()

	var built string
	if c.eureka, built, err = eurekaBinary(ctx, dir, c.eureka); err != nil {
		return err
	}
	r.c.eureka = c.eureka
	if built != "" {
		built = ", " + built
	}
	fmt.Fprintf(out, "eurekabench regions: %d CPUs; %s (%d ORDERS, the gateway, fail-over to %s) and %s (%d ORDERS); wrk -t1 -c%d for %s; cancel at %s, re-register %s later%s\n",
		runtime.NumCPU(), localRegion, c.local, remoteRegion, remoteRegion, c.remote, c.conns, c.d, c.cancelAt, c.down, built)

	if err := r.start(dir); err != nil {
		return err
	}
	end := meter{rec: rec}.phase("the fail-over and back under load")
	fig, err := r.failover()
	end()
	if err != nil {
		return err
	}
	return fig.report(out, rec)
}

// start runs the backends and both regions, registers the instances and
// waits until each region reads the other's and the gateway answers.
func (r *regionsRun) start(dir string) error {
	for n := range r.c.local + r.c.remote {
		region := localRegion
		if n >= r.c.local {
			region = remoteRegion
		}
		addr, err := r.startBackend(region)
		if err != nil {
			return err
		}
		inst := regionInstance(region, n, addr)
		if region == localRegion {
			r.local = append(r.local, inst)
		} else {
			r.remote = append(r.remote, inst)
		}
	}
	ports, err := freePorts(3)
	if err != nil {
		return err
	}
	east, west := "127.0.0.1:"+ports[0], "127.0.0.1:"+ports[1]
	r.gateway = "127.0.0.1:" + ports[2]
	fetch := "-remote-region-fetch-interval=" + r.c.fetchInterval.String()
	nodes := []struct {
		name, addr string
		args       []string
	}{
		{remoteRegion, west, []string{"-region", remoteRegion, "-remote-regions", localRegion + "=http://" + east + "/eureka/", fetch, "-dashboard-path", "off"}},
		{localRegion, east, []string{"-region", localRegion, "-remote-regions", remoteRegion + "=http://" + west + "/eureka/", fetch, "-dashboard-path", "off",
			"-gateway", r.gateway, "-gateway-failover-regions", remoteRegion}},
	}
	for _, n := range nodes {
		node, err := startEureka(r.c.eureka, dir, n.name, n.addr, n.args...)
		if err != nil {
			return fmt.Errorf("starting %s: %v", n.name, err)
		}
		r.nodes = append(r.nodes, node)
	}
	for _, n := range r.nodes {
		if err := r.waitFor(n.name+" answering", func() bool {
			status, err := request(n.registry, "GET", "/eureka/apps", nil)
			return err == nil && status == 200
		}); err != nil {
			return err
		}
	}
	west0, east0 := r.nodes[0], r.nodes[1]
	if _, _, err := registerAll(west0.registry, r.remote); err != nil {
		return err
	}
	if _, _, err := registerAll(east0.registry, r.local); err != nil {
		return err
	}
	all := r.c.local + r.c.remote
	for _, v := range []struct {
		node   *node
		remote string
	}{{east0, remoteRegion}, {west0, localRegion}} {
		if err := r.waitFor(v.node.name+" reading "+v.remote, func() bool {
			return ordersIn(v.node.registry, v.remote) == all
		}); err != nil {
			return err
		}
	}
	return r.waitFor("the gateway answering from "+localRegion, func() bool {
		s := probeOnce(&fasthttp.HostClient{Addr: r.gateway})
		return s.status == 200 && s.region == localRegion
	})
}

// waitFor polls ok until it holds, for up to 30 s.
func (r *regionsRun) waitFor(what string, ok func() bool) error {
	deadline := time.Now().Add(30 * time.Second)
	for !ok() {
		for _, n := range r.nodes {
			if n.exited() {
				return fmt.Errorf("waiting for %s: %s exited", what, n.name)
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("no %s in 30 s", what)
		}
		select {
		case <-r.ctx.Done():
			return r.ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
	return nil
}

// startBackend serves an ORDERS instance of region on a loopback port:
// 200 with the region in X-Bench-Region, and the X-Eurekagate-Region the
// gateway sent, if any, in X-Bench-Failover.
func (r *regionsRun) startBackend(region string) (string, error) {
	ln, err := newLoopbackListener()
	if err != nil {
		return "", err
	}
	srv := &fasthttp.Server{Handler: func(ctx *fasthttp.RequestCtx) {
		ctx.Response.Header.Set("X-Bench-Region", region)
		if v := ctx.Request.Header.Peek(routing.RegionHeader); len(v) > 0 {
			ctx.Response.Header.SetBytesV("X-Bench-Failover", v)
		}
		ctx.WriteString(region)
	}}
	go srv.Serve(ln)
	r.backends = append(r.backends, srv)
	return ln.Addr().String(), nil
}

// close stops the nodes, then the backends.
func (r *regionsRun) close() {
	var wg sync.WaitGroup
	for _, n := range r.nodes {
		wg.Go(n.stop)
	}
	wg.Wait()
	for _, b := range r.backends {
		b.Shutdown()
	}
}

// regionInstance is the n-th ORDERS backend, at addr, in region.
func regionInstance(region string, n int, addr string) *eureka.InstanceInfo {
	host, port, _ := net.SplitHostPort(addr)
	portN, _ := strconv.Atoi(port)
	return &eureka.InstanceInfo{InstanceID: fmt.Sprintf("%s-orders-%d", region, n), HasInstanceID: true,
		HostName: host, App: "ORDERS", IPAddr: host, VIPAddress: "orders",
		Status: eureka.StatusUp, Port: eureka.Port{Number: portN, Enabled: true},
		DataCenterInfo: eureka.DataCenterInfo{Name: eureka.DataCenterMyOwn}}
}

// registerAll registers list with the registry at addr, all at once, and
// returns when the first and the last registration were answered.
func registerAll(addr string, list []*eureka.InstanceInfo) (first, last time.Time, err error) {
	return all(list, func(i *eureka.InstanceInfo) error {
		status, err := request(addr, "POST", "/eureka/apps/ORDERS", eureka.AppendInstanceJSON(nil, i))
		if err == nil && status != fasthttp.StatusNoContent {
			err = fmt.Errorf("status %d", status)
		}
		if err != nil {
			return fmt.Errorf("registering %s: %v", i.InstanceID, err)
		}
		return nil
	})
}

// cancelAll cancels list at the registry at addr, all at once, and
// returns when the first and the last cancel were answered.
func cancelAll(addr string, list []*eureka.InstanceInfo) (first, last time.Time, err error) {
	return all(list, func(i *eureka.InstanceInfo) error {
		status, err := request(addr, "DELETE", "/eureka/apps/ORDERS/"+i.InstanceID, nil)
		if err == nil && status != fasthttp.StatusOK {
			err = fmt.Errorf("status %d", status)
		}
		if err != nil {
			return fmt.Errorf("cancelling %s: %v", i.InstanceID, err)
		}
		return nil
	})
}

// all runs do on each of list at once, and returns when the first and the
// last of them returned, and their errors.
func all(list []*eureka.InstanceInfo, do func(*eureka.InstanceInfo) error) (first, last time.Time, err error) {
	var mu sync.Mutex
	var errs []error
	var wg sync.WaitGroup
	start := make(chan struct{})
	for _, i := range list {
		wg.Go(func() {
			<-start
			err := do(i)
			at := time.Now()
			mu.Lock()
			defer mu.Unlock()
			if first.IsZero() || at.Before(first) {
				first = at
			}
			if at.After(last) {
				last = at
			}
			errs = append(errs, err)
		})
	}
	close(start)
	wg.Wait()
	return first, last, errors.Join(errs...)
}

// ordersIn returns how many ORDERS instances the registry at addr answers
// with the remote region's, -1 when it does not answer 200 (403 while the
// region is not ready).
func ordersIn(addr, remote string) int {
	req, resp := fasthttp.AcquireRequest(), fasthttp.AcquireResponse()
	defer fasthttp.ReleaseRequest(req)
	defer fasthttp.ReleaseResponse(resp)
	req.SetRequestURI("http://" + addr + "/eureka/apps?regions=" + remote)
	req.Header.Set("Accept", "application/json")
	if err := fasthttp.DoTimeout(req, resp, 5*time.Second); err != nil || resp.StatusCode() != 200 {
		return -1
	}
	apps, err := eureka.DecodeApplications(eureka.FormatJSON, resp.Body())
	if err != nil {
		return -1
	}
	for _, a := range apps.Applications {
		if a.Name == "ORDERS" {
			return len(a.Instances)
		}
	}
	return 0
}

// probeSample is one answer the probe had.
type probeSample struct {
	at       time.Duration // when it was answered, since the load started
	region   string        // X-Bench-Region: the backend's region
	failover string        // X-Bench-Failover: the X-Eurekagate-Region the backend was sent
	status   int           // 0 for no answer
}

// probeOnce sends one GET through the gateway; the sample's at is left 0.
func probeOnce(hc *fasthttp.HostClient) probeSample {
	req, resp := fasthttp.AcquireRequest(), fasthttp.AcquireResponse()
	defer fasthttp.ReleaseRequest(req)
	defer fasthttp.ReleaseResponse(resp)
	req.SetRequestURI("http://" + hc.Addr + "/orders/probe")
	if err := hc.DoTimeout(req, resp, 5*time.Second); err != nil {
		return probeSample{}
	}
	return probeSample{region: string(resp.Header.Peek("X-Bench-Region")),
		failover: string(resp.Header.Peek("X-Bench-Failover")), status: resp.StatusCode()}
}

// regionsFigures is what a run measured.
type regionsFigures struct {
	wrk                         wrkResult
	samples                     []probeSample
	cancelSent, lastCancel      time.Duration // since the load started
	firstCancel                 time.Duration
	registerSent, firstRegister time.Duration
	lastRegister                time.Duration
}

// failover runs the load, the cancels and the re-registrations, and the
// probe.
func (r *regionsRun) failover() (*regionsFigures, error) {
	wrkCtx, stopWrk := context.WithCancel(r.ctx)
	defer stopWrk()
	t0 := time.Now()
	since := func(t time.Time) time.Duration { return t.Sub(t0) }
	type wrkDone struct {
		res wrkResult
		err error
	}
	wrkc := make(chan wrkDone, 1)
	go func() {
		res, err := runWrk(wrkCtx, r.c.wrk, r.c.conns, r.c.d, "http://"+r.gateway+"/orders/x")
		wrkc <- wrkDone{res, err}
	}()
	stopProbe := make(chan struct{})
	probed := make(chan []probeSample, 1)
	go func() {
		hc := &fasthttp.HostClient{Addr: r.gateway, MaxConns: 1}
		samples := make([]probeSample, 0, 1<<16)
		for {
			select {
			case <-stopProbe:
				probed <- samples
				return
			default:
			}
			s := probeOnce(hc)
			s.at = since(time.Now())
			samples = append(samples, s)
		}
	}()
	finish := func() []probeSample { close(stopProbe); return <-probed }
	sleepUntil := func(at time.Duration) error {
		select {
		case <-r.ctx.Done():
			return r.ctx.Err()
		case <-time.After(time.Until(t0.Add(at))):
			return nil
		}
	}

	f := &regionsFigures{}
	if err := sleepUntil(r.c.cancelAt); err != nil {
		finish()
		return nil, err
	}
	f.cancelSent = since(time.Now())
	first, last, err := cancelAll(r.nodes[1].registry, r.local)
	f.firstCancel, f.lastCancel = since(first), since(last)
	if err == nil {
		err = sleepUntil(f.lastCancel + r.c.down)
	}
	if err != nil {
		finish()
		return nil, err
	}
	f.registerSent = since(time.Now())
	first, last, err = registerAll(r.nodes[1].registry, r.local)
	f.firstRegister, f.lastRegister = since(first), since(last)
	if err != nil {
		finish()
		return nil, err
	}
	var done wrkDone
	select {
	case done = <-wrkc:
	case <-r.ctx.Done():
		finish()
		return nil, r.ctx.Err()
	}
	f.samples = finish()
	if done.err != nil {
		return nil, done.err
	}
	f.wrk = done.res
	return f, nil
}

// probeFigures are the switches the probe saw; each is -1 when it did not
// see it.
type probeFigures struct {
	firstRemote, allRemote time.Duration // after the last cancel was answered
	firstLocal, allLocal   time.Duration // after the re-registrations were sent
	answers, remoteAnswers int
	failed                 int // answers other than 200, and no answer
	early                  int // answers from eu-west before the cancels
	marked                 int // eu-west answers whose request carried X-Eurekagate-Region: eu-west
	wrongMark              int // us-east-1 answers whose request carried one
}

// switches reads the probe's samples: the first eu-west answer after the
// cancels were sent and the first after which every answer until the
// re-registration came from eu-west, measured from lastCancel; and the
// first us-east-1 answer after the re-registrations were sent and the
// first after which every answer did, measured from registerSent.
func switches(samples []probeSample, cancelSent, lastCancel, registerSent time.Duration) probeFigures {
	p := probeFigures{firstRemote: -1, allRemote: -1, firstLocal: -1, allLocal: -1}
	lastLocalDown, lastRemoteUp := -1, -1 // the last us-east-1 answer while cancelled, the last eu-west answer after
	for n, s := range samples {
		p.answers++
		if s.status != 200 {
			p.failed++
			continue
		}
		switch s.region {
		case remoteRegion:
			p.remoteAnswers++
			if s.failover == remoteRegion {
				p.marked++
			}
			switch {
			case s.at < cancelSent:
				p.early++
			case s.at < registerSent:
				if p.firstRemote < 0 {
					p.firstRemote = s.at - lastCancel
				}
			default:
				lastRemoteUp = n
			}
		case localRegion:
			if s.failover != "" {
				p.wrongMark++
			}
			switch {
			case s.at >= registerSent:
				if p.firstLocal < 0 {
					p.firstLocal = s.at - registerSent
				}
			case s.at >= cancelSent:
				lastLocalDown = n
			}
		}
	}
	// The first answer of the region's own after the last of the other's
	// in the window.
	after := func(from int, region string, lo, hi time.Duration) (time.Duration, bool) {
		for _, s := range samples[from+1:] {
			if s.at >= hi {
				break
			}
			if s.at >= lo && s.status == 200 && s.region == region {
				return s.at, true
			}
		}
		return 0, false
	}
	if p.firstRemote >= 0 {
		// From the last us-east-1 answer while cancelled (or the start) to
		// the next eu-west one.
		if at, ok := after(lastLocalDown, remoteRegion, cancelSent, registerSent); ok {
			p.allRemote = at - lastCancel
		}
	}
	if p.firstLocal >= 0 {
		if at, ok := after(lastRemoteUp, localRegion, registerSent, 1<<62); ok {
			p.allLocal = at - registerSent
		}
	}
	return p
}

// gaps returns the median and the widest time between two answers of the
// probe: how finely it times a switch.
func gaps(samples []probeSample) (median, widest time.Duration) {
	if len(samples) < 2 {
		return 0, 0
	}
	d := make([]time.Duration, len(samples)-1)
	for n := range d {
		d[n] = samples[n+1].at - samples[n].at
	}
	slices.Sort(d)
	return d[len(d)/2], d[len(d)-1]
}

// report prints the figures, one line each, records them (a switch not
// seen is left out of the record), and fails the run when an answer was
// not 2xx or a switch was not seen.
func (f *regionsFigures) report(out io.Writer, rec *record) error {
	p := switches(f.samples, f.cancelSent, f.lastCancel, f.registerSent)
	for _, s := range []struct {
		name string
		d    time.Duration
	}{{"failover.first", p.firstRemote}, {"failover.all", p.allRemote}, {"back.first", p.firstLocal}, {"back.all", p.allLocal}} {
		if s.d != -1 {
			rec.add(s.name, ms(s.d), "ms")
		}
	}
	rec.add("wrk.rate", float64(f.wrk.requests)/f.wrk.seconds, "/s")
	rec.add("wrk.non2xx", float64(f.wrk.non2xx), "")
	rec.add("wrk.socket_errors", float64(f.wrk.socketErrors()), "")
	msOr := func(d time.Duration) string {
		if d == -1 {
			return "not seen"
		}
		return fmt.Sprintf("%.1f ms", ms(d))
	}
	fmt.Fprintf(out, "cancels (DELETE, all at once) sent at %.2f s: answered %.1f - %.1f ms later\n",
		f.cancelSent.Seconds(), ms(f.firstCancel-f.cancelSent), ms(f.lastCancel-f.cancelSent))
	fmt.Fprintf(out, "failover to %s: %s after the last cancel (first %s answer; target < 1 s)\n", remoteRegion, msOr(p.firstRemote), remoteRegion)
	fmt.Fprintf(out, "all answers from %s: %s after the last cancel\n", remoteRegion, msOr(p.allRemote))
	fmt.Fprintf(out, "re-registrations (POST, all at once) sent at %.2f s: answered %.1f - %.1f ms later\n",
		f.registerSent.Seconds(), ms(f.firstRegister-f.registerSent), ms(f.lastRegister-f.registerSent))
	fmt.Fprintf(out, "back to %s: %s after the re-registrations were sent (first %s answer)\n", localRegion, msOr(p.firstLocal), localRegion)
	fmt.Fprintf(out, "all answers from %s: %s after the re-registrations were sent\n", localRegion, msOr(p.allLocal))
	median, widest := gaps(f.samples)
	fmt.Fprintf(out, "probe: %d answers, one every %.2f ms (median; at most %.1f ms apart), %d from %s (%d of them sent with %s: %s), %d failed\n",
		p.answers, ms(median), ms(widest), p.remoteAnswers, remoteRegion, p.marked, routing.RegionHeader, remoteRegion, p.failed)
	w := f.wrk
	fmt.Fprintf(out, "wrk: %d requests in %.2f s, %.0f req/s\n", w.requests, w.seconds, float64(w.requests)/w.seconds)
	fmt.Fprintf(out, "non-2xx: %d of %d\n", w.non2xx, w.requests)
	fmt.Fprintf(out, "socket errors: %d (connect %d, read %d, write %d, timeout %d)\n",
		w.socketErrors(), w.connect, w.read, w.write, w.timeout)

	var problems []string
	if w.non2xx > 0 {
		problems = append(problems, fmt.Sprintf("%d wrk answers were not 2xx", w.non2xx))
	}
	if w.socketErrors() > 0 {
		problems = append(problems, fmt.Sprintf("wrk had %d socket errors", w.socketErrors()))
	}
	if p.failed > 0 {
		problems = append(problems, fmt.Sprintf("%d probe requests failed", p.failed))
	}
	if p.early > 0 {
		problems = append(problems, fmt.Sprintf("%d probe answers came from %s before the cancels", p.early, remoteRegion))
	}
	if p.marked != p.remoteAnswers || p.wrongMark > 0 {
		problems = append(problems, fmt.Sprintf("%s: %d of %d %s answers were sent it, and %d %s answers",
			routing.RegionHeader, p.marked, p.remoteAnswers, remoteRegion, p.wrongMark, localRegion))
	}
	if p.firstRemote == -1 || p.allRemote == -1 {
		problems = append(problems, "no fail-over to "+remoteRegion+" seen")
	}
	if p.firstLocal == -1 || p.allLocal == -1 {
		problems = append(problems, "no return to "+localRegion+" seen")
	}
	if len(problems) > 0 {
		return errors.New(strings.Join(problems, "; "))
	}
	return nil
}

// wrkResult is what wrk printed.
type wrkResult struct {
	requests                      int
	seconds                       float64
	non2xx                        int // wrk's "Non-2xx or 3xx responses": status 400 and above
	connect, read, write, timeout int
	p99                           time.Duration // with --latency; 0 without
	cpu                           float64       // wrk's own CPU seconds, user and system
}

func (w wrkResult) socketErrors() int { return w.connect + w.read + w.write + w.timeout }

func (w wrkResult) rate() float64 { return float64(w.requests) / w.seconds }

// runWrk runs wrk -t1 with args (-s script, -H header, --latency)
// against url for d (whole seconds) and reads its totals. It is the
// gateway study's wrk (gatewayBenchConfig.measure), but counts the
// non-2xx answers and socket errors instead of failing on them.
func runWrk(ctx context.Context, wrk string, conns int, d time.Duration, url string, args ...string) (wrkResult, error) {
	w, _, err := runWrkOutput(ctx, wrk, conns, d, url, args...)
	return w, err
}

// runWrkOutput is runWrk, and all wrk printed (a script's lines among it).
func runWrkOutput(ctx context.Context, wrk string, conns int, d time.Duration, url string, args ...string) (wrkResult, []byte, error) {
	secs := max(1, int(d.Round(time.Second)/time.Second))
	all := append([]string{"-t1", "-c" + strconv.Itoa(conns), "-d" + strconv.Itoa(secs) + "s"}, args...)
	cmd := exec.CommandContext(ctx, wrk, append(all, url)...)
	outp, err := cmd.CombinedOutput()
	if err != nil {
		if ctx.Err() != nil {
			return wrkResult{}, outp, ctx.Err()
		}
		return wrkResult{}, outp, fmt.Errorf("wrk: %v\n%s", err, outp)
	}
	w, err := parseWrk(outp)
	w.cpu = (cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()).Seconds()
	return w, outp, err
}

// runWrkClean is runWrk for a load that every answer must pass: an
// answer other than 2xx or 3xx, or a socket error, is an error.
func runWrkClean(ctx context.Context, wrk string, conns int, d time.Duration, url string, args ...string) (wrkResult, error) {
	w, err := runWrk(ctx, wrk, conns, d, url, args...)
	if err == nil && (w.non2xx > 0 || w.socketErrors() > 0) {
		err = fmt.Errorf("%s: %d answers were not 2xx or 3xx, %d socket errors", url, w.non2xx, w.socketErrors())
	}
	return w, err
}

var (
	wrkTotal  = regexp.MustCompile(`(\d+) requests in ([0-9.]+)(us|ms|s|m|h)\b`)
	wrkSocket = regexp.MustCompile(`Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)`)
	wrkNon2xx = regexp.MustCompile(`Non-2xx or 3xx responses: (\d+)`)
	wrkP99    = regexp.MustCompile(`\s99%\s+([0-9.]+)(us|ms|s)\b`)
)

// parseWrk reads wrk's totals from its output.
func parseWrk(outp []byte) (wrkResult, error) {
	var w wrkResult
	m := wrkTotal.FindSubmatch(outp)
	if m == nil {
		return w, fmt.Errorf("no count in wrk's output:\n%s", outp)
	}
	w.requests, _ = strconv.Atoi(string(m[1]))
	w.seconds, _ = strconv.ParseFloat(string(m[2]), 64)
	w.seconds *= map[string]float64{"us": 1e-6, "ms": 1e-3, "s": 1, "m": 60, "h": 3600}[string(m[3])]
	if w.seconds <= 0 {
		return w, fmt.Errorf("wrk ran for %s", m[0])
	}
	if m := wrkSocket.FindSubmatch(outp); m != nil {
		for n, p := range []*int{&w.connect, &w.read, &w.write, &w.timeout} {
			*p, _ = strconv.Atoi(string(m[n+1]))
		}
	}
	if m := wrkNon2xx.FindSubmatch(outp); m != nil {
		w.non2xx, _ = strconv.Atoi(string(m[1]))
	}
	if m := wrkP99.FindSubmatch(outp); m != nil {
		v, _ := strconv.ParseFloat(string(m[1]), 64)
		unit := map[string]time.Duration{"us": time.Microsecond, "ms": time.Millisecond, "s": time.Second}[string(m[2])]
		w.p99 = time.Duration(v * float64(unit))
	}
	if bytes.Contains(outp, []byte("unable to connect")) {
		return w, fmt.Errorf("wrk could not connect:\n%s", outp)
	}
	return w, nil
}
