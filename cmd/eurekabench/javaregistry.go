package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/eurekagate/eurekagate/eureka"
)

// registrySide is one of the two registries of the study, the Java
// Eureka Server or ours, as the load sees it.
type registrySide struct {
	name string // "ours" or "java"
	node *node
	gc   func() error // a full collection, before memory is read
	held int          // instances registered so far
}

// turn is what one side answered over its slices of one measurement.
type turn struct {
	requests, seconds, cpu float64 // answers, wall seconds, server CPU seconds
	load                   float64 // the load generator's CPU seconds, where it is wrk
}

func (t turn) rate() float64         { return t.requests / t.seconds }
func (t turn) cpuPerReq() float64    { return t.cpu / t.requests }
func (t turn) loadPerReq() float64   { return t.load / t.requests }
func (t *turn) add(r *loadResult)    { t.requests += float64(r.n); t.seconds += r.elapsed.Seconds() }
func (s *registrySide) cpu() float64 { return cpuSeconds(func() []int { return []int{s.node.pid()} }) }

// javaInstance is the n-th instance of the study: million's Spring-shaped
// instance over apps apps, with a lease of an hour, so that none expires
// between the phases that renew it (a 90 s lease would, on either server,
// while the fetches run).
func javaInstance(n, apps int) *eureka.InstanceInfo {
	i := millionInstance(n, apps)
	i.LeaseInfo.DurationInSecs = 3600
	return i
}

// registerTurns registers instances [from, to) on every side, over apps
// apps from conc connections, the sides taking turns a chunk at a time,
// and returns each side's sums.
func registerTurns(sides []*registrySide, from, to, apps, conc int) ([]turn, error) {
	bodies := registrationBodies(from, to, apps)
	const chunk = 1000
	out := make([]turn, len(sides))
	for lo := 0; lo < len(bodies); lo += chunk {
		hi := min(lo+chunk, len(bodies))
		for k, s := range sides {
			settle(sidesCPU(sides)...)
			before := s.cpu()
			r, err := load(registrations(s.node.registry, bodies[lo:hi], serviceApp(from+lo, apps), conc))
			if err != nil {
				return nil, fmt.Errorf("%s: registering: %v", s.name, err)
			}
			out[k].add(r)
			out[k].cpu += s.cpu() - before
		}
	}
	for _, s := range sides {
		s.held = to
	}
	return out, nil
}

// warmRegistrations registers 1,000 instances of an app WARMUP ten times
// over, from conc connections, then cancels them: the JVM's JIT compiles
// the registration's path before the registrations count. A count, not a
// time, so that both servers hold the same history after it.
func warmRegistrations(s *registrySide, conc int) error {
	const n = 1000
	bodies := make([][]byte, n)
	for k := range bodies {
		i := javaInstance(k, 1)
		i.App, i.InstanceID = "WARMUP", "warmup-"+strconv.Itoa(k)
		bodies[k] = eureka.AppendInstanceJSON(nil, i)
	}
	if _, err := load(registrations(s.node.registry, slices.Repeat(bodies, 10), func(int) string { return "WARMUP" }, conc)); err != nil {
		return fmt.Errorf("%s: warming up registrations: %v", s.name, err)
	}
	_, err := load(loadSpec{addr: s.node.registry, conc: conc, total: n, build: func(k int, req *fasthttp.Request) {
		req.Header.SetMethod("DELETE")
		req.SetRequestURI("/eureka/apps/WARMUP/warmup-" + strconv.Itoa(k))
	}})
	if err != nil {
		return fmt.Errorf("%s: cancelling the warm-up's registrations: %v", s.name, err)
	}
	return nil
}

// registrationBodies are the registrations of instances [from, to).
func registrationBodies(from, to, apps int) [][]byte {
	bodies := make([][]byte, to-from)
	for k := range bodies {
		bodies[k] = eureka.AppendInstanceJSON(nil, javaInstance(from+k, apps))
	}
	return bodies
}

// registrations sends bodies, registrations of app(0), app(1), ..., to
// addr from conc connections.
func registrations(addr string, bodies [][]byte, app func(n int) string, conc int) loadSpec {
	return loadSpec{addr: addr, conc: conc, total: len(bodies), want: fasthttp.StatusNoContent,
		build: func(n int, req *fasthttp.Request) {
			req.Header.SetMethod("POST")
			req.SetRequestURI("/eureka/apps/" + app(n))
			req.Header.SetContentType("application/json")
			req.SetBody(bodies[n])
		}}
}

// serviceApp is the app of javaInstance(first + n, apps).
func serviceApp(first, apps int) func(n int) string {
	return func(n int) string { return "SERVICE-" + strconv.Itoa((first+n)%apps) }
}

// wrkTurns loads each side with wrk -t1 -c<conc> and args (its URL is
// the side's address and path), in turn, slices times a side of one
// second each after its warm-up, and returns each side's sums. wrk
// rather than this process: a Go client spends as much on a request as
// our server does, and on reading a document more, so that the rates
// would be the client's.
func wrkTurns(ctx context.Context, wrk string, sides []*registrySide, path string, conc, slices int, warmup time.Duration, args ...string) ([]turn, error) {
	run := func(s *registrySide, d time.Duration) (wrkResult, error) {
		w, err := runWrkClean(ctx, wrk, conc, d, "http://"+s.node.registry+path, args...)
		if err != nil {
			err = fmt.Errorf("%s: %v", s.name, err)
		}
		return w, err
	}
	for _, s := range sides {
		if _, err := warmUp(int(30*time.Second/warmup), func() (float64, error) {
			w, err := run(s, warmup)
			return w.rate(), err
		}); err != nil {
			return nil, err
		}
	}
	out := make([]turn, len(sides))
	for range slices {
		for k, s := range sides {
			settle(sidesCPU(sides)...)
			before := s.cpu()
			w, err := run(s, time.Second)
			if err != nil {
				return nil, err
			}
			out[k].requests += float64(w.requests)
			out[k].seconds += w.seconds
			out[k].cpu += s.cpu() - before
			out[k].load += w.cpu
		}
	}
	return out, nil
}

// settle waits, for up to 3 s, until none of the processes whose CPU
// time cpu reads uses more than a tenth of a core, so that a turn does
// not pay for work the one before left running (a JVM compiles what its
// last turn ran, and collects, after it). /proc counts in hundredths of
// a second: 20 ms in 200.
func settle(cpu ...func() float64) { settleWithin(3*time.Second, cpu...) }

// settleWithin is settle waiting up to d; it reports whether the
// processes went quiet.
func settleWithin(d time.Duration, cpu ...func() float64) bool {
	const tick = 200 * time.Millisecond
	for deadline := time.Now().Add(d); time.Now().Before(deadline); {
		before := make([]float64, len(cpu))
		for k, read := range cpu {
			before[k] = read()
		}
		time.Sleep(tick)
		busy := false
		for k, read := range cpu {
			busy = busy || read()-before[k] > 0.1*tick.Seconds()
		}
		if !busy {
			return true
		}
	}
	return false
}

// sidesCPU reads each side's CPU time, for settle.
func sidesCPU(sides []*registrySide) []func() float64 {
	out := make([]func() float64, len(sides))
	for k, s := range sides {
		out[k] = s.cpu
	}
	return out
}

// warmUp runs one turn of a warm-up load after another, each returning
// its rate, until the rate stops rising, so that a JVM's JIT has compiled
// what the measurement runs: until two turns in a row come within 5 % of
// the best before them, after at least three turns (or most, if fewer)
// and at most most. It returns the rates.
func warmUp(most int, turn func() (float64, error)) ([]float64, error) {
	var rates []float64
	flat := 0
	for len(rates) < most {
		rate, err := turn()
		if err != nil {
			return rates, err
		}
		if len(rates) > 0 && rate < 1.05*slices.Max(rates) {
			flat++
		} else {
			flat = 0
		}
		rates = append(rates, rate)
		if flat >= 2 {
			break
		}
	}
	return rates, nil
}

// gzipJSON are wrk's arguments for a read as Spring's client makes it.
var gzipJSON = []string{"-H", "Accept: application/json", "-H", "Accept-Encoding: gzip"}

// heartbeatScript writes a wrk script that renews the first n instances
// in turn, as Spring's client does (PUT with status and
// lastDirtyTimestamp), and returns wrk's arguments for it.
func heartbeatScript(dir string, n, apps int) ([]string, error) {
	var b strings.Builder
	b.WriteString("wrk.method = \"PUT\"\nwrk.headers[\"Accept\"] = \"application/json\"\nlocal paths = {\n")
	for k := range n {
		i := javaInstance(k, apps)
		fmt.Fprintf(&b, "%q,\n", "/eureka/apps/"+i.App+"/"+i.InstanceID+"?status=UP&lastDirtyTimestamp="+strconv.FormatInt(i.LastDirtyTimestamp, 10))
	}
	// The requests are formatted once, in init (where wrk has set the Host
	// header), so that wrk spends nothing per request but the send.
	b.WriteString("}\nlocal reqs = {}\ninit = function(args)\n  for i, p in ipairs(paths) do reqs[i] = wrk.format(nil, p) end\nend\n" +
		"local k = 0\nrequest = function()\n  k = k % #reqs + 1\n  return reqs[k]\nend\n")
	path := filepath.Join(dir, "heartbeats-"+strconv.Itoa(n)+".lua")
	return []string{"-s", path}, os.WriteFile(path, []byte(b.String()), 0o644)
}

// gzippedInstances reads path from addr as Spring's client does, checks that it
// comes gzipped, and counts the instances in it.
func gzippedInstances(addr, path string) (instances, size int, err error) {
	req, _ := http.NewRequest("GET", "http://"+addr+path, nil)
	req.Header.Set("Accept", "application/json")
	req.Header.Set("Accept-Encoding", "gzip")
	resp, err := (&http.Transport{DisableCompression: true}).RoundTrip(req)
	if err != nil {
		return 0, 0, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 || resp.Header.Get("Content-Encoding") != "gzip" {
		return 0, 0, fmt.Errorf("GET %s: status %d, Content-Encoding %q", path, resp.StatusCode, resp.Header.Get("Content-Encoding"))
	}
	gz, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, 0, err
	}
	n, err := countInGzip(gz, []byte(`"instanceId"`))
	return n, len(gz), err
}

// changer re-registers instances of a side at a rate, each with a newer
// lastDirtyTimestamp, until stopped: the changes the deltas carry.
type changer struct {
	stop chan struct{}
	wg   sync.WaitGroup
	sent atomic.Int64
	err  atomic.Value
}

func startChanger(s *registrySide, perSecond, apps int) *changer {
	c := &changer{stop: make(chan struct{})}
	c.wg.Go(func() {
		tick := time.NewTicker(time.Second / time.Duration(perSecond))
		defer tick.Stop()
		var body []byte
		for k := 0; ; k++ {
			select {
			case <-c.stop:
				return
			case <-tick.C:
			}
			i := javaInstance(k*7919%s.held, apps) // spread over the apps
			i.LastDirtyTimestamp = time.Now().UnixMilli()
			i.Metadata["change"] = strconv.Itoa(k)
			body = eureka.AppendInstanceJSON(body[:0], i)
			if status, err := request(s.node.registry, "POST", "/eureka/apps/"+i.App, body); err != nil || status != fasthttp.StatusNoContent {
				c.err.CompareAndSwap(nil, fmt.Errorf("%s: a change: status %d %v", s.name, status, err))
			}
			c.sent.Add(1)
		}
	})
	return c
}

// halt stops the changes and says whether any failed.
func (c *changer) halt() error {
	close(c.stop)
	c.wg.Wait()
	err, _ := c.err.Load().(error)
	return err
}

// resident is a side's resident memory after a full collection.
func (s *registrySide) resident() (uint64, error) {
	if err := s.gc(); err != nil {
		return 0, fmt.Errorf("%s: %v", s.name, err)
	}
	time.Sleep(2 * time.Second) // G1 gives memory back after its collection
	return residentBytesOf(s.node.pid()), nil
}

// startOurs runs our cmd/eureka on addr with args, with the pprof
// overlay's listener on a port of its own, and waits until it answers;
// gc is a full collection (the overlay's /bench/gc).
func (r *javaRun) startOurs(name, addr string, args ...string) (n *node, gc func() error, err error) {
	ports, err := freePorts(1)
	if err != nil {
		return nil, nil, err
	}
	pprof := "127.0.0.1:" + ports[0]
	if n, err = startNode(r.dir, name, []string{"EUREKABENCH_PPROF=" + pprof}, r.eureka, append([]string{"-addr", addr}, args...)...); err != nil {
		return nil, nil, err
	}
	n.registry = addr
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(50 * time.Millisecond) {
		// Not /eureka/apps: read without Accept, that is the XML
		// registry, which ours would then build ahead of its readers
		// (and keep plain) as for a fleet that reads XML; the Java
		// server is awaited by its log.
		if status, err := request(addr, "GET", "/eureka/status", nil); err == nil && status == 200 {
			break
		}
		if n.exited() || time.Now().After(deadline) {
			n.stop()
			return nil, nil, fmt.Errorf("%s did not answer within a minute:\n%s", name, n.logTail())
		}
	}
	gc = func() error {
		resp, err := http.Get("http://" + pprof + "/bench/gc")
		if err != nil {
			return err
		}
		resp.Body.Close()
		return nil
	}
	return n, gc, nil
}

// standalone starts the Java server and ours, each standalone on a
// loopback port of its own, their logs named with suffix; stop stops
// both.
func (r *javaRun) standalone(suffix string) (java, ours *node, oursGC func() error, stop func(), err error) {
	javaAddr, err := loopbackAddr("127.0.0.1")
	if err != nil {
		return nil, nil, nil, nil, err
	}
	if java, err = startJavaServer(r.dir, "java-server"+suffix, r.jars.server, javaAddr, nil); err != nil {
		return nil, nil, nil, nil, fmt.Errorf("starting the Java server: %v", err)
	}
	oursAddr, err := loopbackAddr("127.0.0.1")
	if err == nil {
		ours, oursGC, err = r.startOurs("eureka"+suffix, oursAddr)
	}
	if err != nil {
		java.stop()
		return nil, nil, nil, nil, err
	}
	return java, ours, oursGC, func() { ours.stop(); java.stop() }, nil
}

// registries is the registry phase: both servers standalone, with the
// same instances registered, renewed and read.
func (r *javaRun) registries() error {
	c := r.c
	fmt.Fprintf(r.out, "\nthe registries, standalone, taking turns (%d connections for writes and heartbeats, %d for reads)\n", c.conc, c.readConc)
	java, ours, oursGC, stop, err := r.standalone("")
	if err != nil {
		return err
	}
	defer stop()
	sides := []*registrySide{{name: "ours", node: ours, gc: oursGC}, {name: "java", node: java, gc: func() error { return fullGC(java.pid()) }}}

	for _, s := range sides {
		if err := warmRegistrations(s, c.conc); err != nil {
			return err
		}
	}
	reg, err := registerTurns(sides, 0, c.small, c.apps, c.conc)
	if err != nil {
		return err
	}
	r.printTurns(fmt.Sprintf("registrations, %s over %d apps", commas(c.small), c.apps), reg, "registration")
	r.compare("registrations/s 10k", reg[0].rate(), reg[1].rate(), "/s", false)
	var fullSizes []string
	for _, s := range sides {
		n, size, err := gzippedInstances(s.node.registry, "/eureka/apps/")
		if err != nil || n != c.small {
			return fmt.Errorf("%s: the full registry holds %d instances, want %d (%v)", s.name, n, c.small, err)
		}
		fullSizes = append(fullSizes, s.name+" "+kb(size))
	}

	if err := r.heartbeats(sides, c.small, "heartbeats/s 10k", "cpu per heartbeat"); err != nil {
		return err
	}

	full, err := wrkTurns(r.ctx, c.wrk, sides, "/eureka/apps/", c.readConc, c.slices, c.warmup, gzipJSON...)
	if err != nil {
		return err
	}
	r.printTurns("full fetches, gzipped JSON, "+commas(c.small)+" instances", full, "fetch")
	r.printLoad(full, "fetch")
	fmt.Fprintf(r.out, "    gzipped: %s (the same JSON, %s instances)\n", strings.Join(fullSizes, ", "), commas(c.small))
	r.compare("full fetches/s gzip 10k", full[0].rate(), full[1].rate(), "/s", false)

	var changers []*changer
	for _, s := range sides {
		changers = append(changers, startChanger(s, c.changes, c.apps))
	}
	delta, err := wrkTurns(r.ctx, c.wrk, sides, "/eureka/apps/delta", c.readConc, c.slices, c.warmup, gzipJSON...)
	var sizes []string
	for k, s := range sides {
		n, size, _ := gzippedInstances(s.node.registry, "/eureka/apps/delta")
		sizes = append(sizes, fmt.Sprintf("%s %s instances, %s gzipped, after %d changes", s.name, commas(n), kb(size), changers[k].sent.Load()))
	}
	for _, ch := range changers {
		if herr := ch.halt(); err == nil {
			err = herr
		}
	}
	if err != nil {
		return err
	}
	r.printTurns(fmt.Sprintf("delta fetches, gzipped JSON, %d changes/s", c.changes), delta, "fetch")
	fmt.Fprintf(r.out, "    the last delta read: %s (each holds the changes of its last 3 minutes, the registrations among them)\n", strings.Join(sizes, ", "))
	r.compare("delta fetches/s", delta[0].rate(), delta[1].rate(), "/s", false)

	if err := r.memory(sides, "rss 10k"); err != nil {
		return err
	}
	more, err := registerTurns(sides, c.small, c.large, c.apps, c.conc)
	if err != nil {
		return err
	}
	r.printTurns(fmt.Sprintf("registrations, from %s to %s", commas(c.small), commas(c.large)), more, "registration")
	if err := r.heartbeats(sides, c.large, "heartbeats/s 50k", "cpu per heartbeat 50k"); err != nil {
		return err
	}
	return r.memory(sides, "rss 50k")
}

// heartbeats renews the first n instances on each side in turn and
// compares the rates (as rateName) and the CPU per heartbeat (cpuName).
func (r *javaRun) heartbeats(sides []*registrySide, n int, rateName, cpuName string) error {
	c := r.c
	script, err := heartbeatScript(r.dir, n, c.apps)
	if err != nil {
		return err
	}
	hb, err := wrkTurns(r.ctx, c.wrk, sides, "/", c.conc, c.slices, c.warmup, script...)
	if err != nil {
		return err
	}
	r.printTurns("heartbeats at "+commas(n)+" instances", hb, "heartbeat")
	r.printLoad(hb, "heartbeat")
	r.compare(rateName, hb[0].rate(), hb[1].rate(), "/s", false)
	r.compare(cpuName, hb[0].cpuPerReq(), hb[1].cpuPerReq(), "µs", true)
	return nil
}

// memory reads each side's resident memory after a full collection.
func (r *javaRun) memory(sides []*registrySide, name string) error {
	var rss []uint64
	for _, s := range sides {
		b, err := s.resident()
		if err != nil {
			return err
		}
		rss = append(rss, b)
	}
	fmt.Fprintf(r.out, "  %-52s ours %s   java %s   (after a full collection: /bench/gc, jcmd GC.run)\n",
		"resident memory at "+commas(sides[0].held)+" instances", mbf(int64(rss[0])), mbf(int64(rss[1])))
	r.compare(name, float64(rss[0]), float64(rss[1]), "MB", true)
	return nil
}

// kb is a size in kilobytes.
func kb(n int) string { return fmt.Sprintf("%.0f KB", float64(n)/1e3) }

// printTurns prints a measurement's rates and CPU per request.
func (r *javaRun) printTurns(what string, t []turn, each string) {
	fmt.Fprintf(r.out, "  %-52s ours %8.0f/s (%6.1f µs CPU a %s)   java %8.0f/s (%6.1f µs)\n",
		what, t[0].rate(), 1e6*t[0].cpuPerReq(), each, t[1].rate(), 1e6*t[1].cpuPerReq())
}

// printLoad prints what wrk itself spent a request on each side, and
// the rate that alone allows ours: wrk -t1 is one thread, which can send
// no faster than one request per its own CPU a request, however little
// the server costs. Where ours reaches that rate, the generator, not our
// server, sets the ratio.
func (r *javaRun) printLoad(t []turn, each string) {
	ceiling := 1 / t[0].loadPerReq()
	fmt.Fprintf(r.out, "    wrk's own CPU a %s: ours %.1f µs, java %.1f µs; wrk alone caps ours at %.0f/s, %.2f times java's rate\n",
		each, 1e6*t[0].loadPerReq(), 1e6*t[1].loadPerReq(), ceiling, ceiling/t[1].rate())
}
