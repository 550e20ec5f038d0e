package main

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/eurekagate/eurekagate/eureka"
)

// gatewayRow is one way to the backend in the gateway comparison.
type gatewayRow struct {
	name, url string
	pids      func() []int  // the proxy's processes; nil for none
	jvm       bool          // warmed up in turns of warmTurn until its rate stops rising
	warmTurn  time.Duration // a JVM's turn
	warmed    []float64     // the warm-up's rates
	warmBad   int           // a JVM's warm-up's answers not 2xx or 3xx, and socket errors
	log       func() string // a JVM's log's tail
	rates     []float64     // requests/s, per round
	p99s      []time.Duration
	cpu       []float64 // the proxy's CPU seconds per request, per round
}

// logTail is "; its log ends:" and the tail of a row's log, or nothing
// for a row without one.
func (r *gatewayRow) logTail() string {
	if r.log == nil {
		return ""
	}
	return "; its log ends:\n" + r.log()
}

// rateList is rates, rounded, separated by commas.
func rateList(rates []float64) string { return ratesWith(rates, 0) }

// ratesWith is rates with decimals digits after the point, separated by
// commas.
func ratesWith(rates []float64, decimals int) string {
	var b strings.Builder
	for k, r := range rates {
		if k > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%.*f", decimals, r)
	}
	return b.String()
}

// median is the middle of a round's figures (the lower middle of an even
// count).
func median[T int | float64 | time.Duration](xs []T) T {
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[(len(s)-1)/2]
}

// measureGateways loads each row with wrk in turn, rounds times, for d
// each, after each row's warm-up.
func measureGateways(ctx context.Context, wrk string, conns int, d time.Duration, rounds int, rows []*gatewayRow) error {
	for _, r := range rows {
		var err error
		if r.jvm {
			// A JVM's warm-up is its JIT's first minutes under load, in
			// which Spring Cloud Gateway has answered a few of a hundred
			// thousand requests with an error: they are counted and
			// reported, not fatal; the measured rounds after it take none.
			r.warmed, err = warmUp(18, func() (float64, error) { // at most 18 turns
				w, err := runWrk(ctx, wrk, conns, r.warmTurn, r.url)
				r.warmBad += w.non2xx + w.socketErrors()
				if err == nil && w.requests == w.non2xx {
					// Hung, refusing or failing every request: no rate to
					// warm, and one that would never stop rising.
					err = fmt.Errorf("no answer 2xx or 3xx in %v (%d socket errors)%s", r.warmTurn, w.socketErrors(), r.logTail())
				}
				return w.rate(), err
			})
		} else {
			r.warmed, err = warmUp(1, func() (float64, error) {
				w, err := runWrkClean(ctx, wrk, conns, 5*time.Second, r.url)
				return w.rate(), err
			})
		}
		if err != nil {
			return fmt.Errorf("%s: warm-up: %v", r.name, err)
		}
	}
	var cpu []func() float64
	for _, r := range rows {
		if r.pids != nil {
			cpu = append(cpu, func() float64 { return cpuSeconds(r.pids) })
		}
	}
	for range rounds {
		for _, r := range rows {
			settle(cpu...)
			before := cpuSeconds(r.pids)
			w, err := runWrkClean(ctx, wrk, conns, d, r.url, "--latency")
			if err == nil && w.p99 == 0 {
				err = errors.New("no 99th percentile in wrk's output")
			}
			if err != nil && r.jvm {
				err = fmt.Errorf("%v (%d errors in its warm-up)%s", err, r.warmBad, r.logTail())
			}
			if err != nil {
				return fmt.Errorf("%s: %v", r.name, err)
			}
			r.rates, r.p99s = append(r.rates, w.rate()), append(r.p99s, w.p99)
			if r.pids != nil {
				r.cpu = append(r.cpu, (cpuSeconds(r.pids)-before)/float64(w.requests))
			}
		}
	}
	return nil
}

// gateways is the gateway phase: the same backend directly, through nginx
// with a static upstream, through Spring Cloud Gateway (lb:// by its
// discovery locator, against the Java server), through our fasthttp
// gateway by name and through Caddy's eureka_gateway, each proxy in a
// process of its own.
func (r *javaRun) gateways() error {
	c := r.c
	fmt.Fprintf(r.out, "\nthe gateways: wrk -t1 -c%d, %d rounds of %v each, the medians\n", c.gwConns, c.gwRounds, c.gwDuration)
	servers, err := thisBinary()
	if err != nil {
		return err
	}
	g := gatewayBenchConfig{servers: servers}
	ports, err := freePorts(6)
	if err != nil {
		return err
	}
	addr := func(i int) string { return "127.0.0.1:" + ports[i] }
	backend := addr(0)
	var stops []func()
	defer func() {
		for i := len(stops) - 1; i >= 0; i-- {
			stops[i]()
		}
	}()
	pids := map[string]int{}
	for _, role := range []struct{ name, listen string }{{"backend", backend}, {"fasthttp", addr(1)}, {"caddy", addr(2)}} {
		stop, pid, err := g.startServer(role.name, role.listen, backend)
		if err != nil {
			return fmt.Errorf("starting the %s: %v", role.name, err)
		}
		stops = append(stops, stop)
		pids[role.name] = pid
	}
	java, err := startJavaServer(r.dir, "java-server-gateway", r.jars.server, addr(3), nil)
	if err != nil {
		return fmt.Errorf("starting the Java server: %v", err)
	}
	stops = append(stops, java.stop)
	if status, err := request(addr(3), "POST", "/eureka/apps/SVC", eureka.AppendInstanceJSON(nil, targetInstance("SVC", backend))); err != nil || status != 204 {
		return fmt.Errorf("registering the backend with the Java server: %d %v", status, err)
	}
	_, port, _ := strings.Cut(addr(4), ":")
	scg, err := startJava(r.dir, "spring-gateway", r.jars.gateway, "1g",
		"--server.port="+port, "--server.address=127.0.0.1",
		"--spring.application.name=gateway", "--eureka.instance.hostname=127.0.0.1",
		"--eureka.client.service-url.defaultZone=http://"+addr(3)+"/eureka/",
		"--eureka.client.register-with-eureka=false",
		"--spring.cloud.gateway.server.webflux.discovery.locator.enabled=true",
		"--spring.cloud.gateway.server.webflux.discovery.locator.lower-case-service-id=true")
	if err != nil {
		return fmt.Errorf("starting Spring Cloud Gateway: %v", err)
	}
	stops = append(stops, scg.stop)
	for deadline := time.Now().Add(2 * time.Minute); ; time.Sleep(200 * time.Millisecond) {
		if status, err := request(addr(4), "GET", "/svc/x", nil); err == nil && status == 200 {
			break
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("Spring Cloud Gateway did not route /svc/x within 2 minutes:\n%s", scg.logTail())
		}
	}

	one := func(pid int) func() []int { return func() []int { return []int{pid} } }
	rows := []*gatewayRow{{name: "direct to the backend", url: "http://" + backend + "/x"}}
	if c.nginx != "" {
		stop, master, err := startNginx(c.nginx, addr(5), backend, false)
		if err != nil {
			return fmt.Errorf("starting nginx: %v", err)
		}
		stops = append(stops, stop)
		rows = append(rows, &gatewayRow{name: "nginx, static upstream", url: "http://" + addr(5) + "/x",
			pids: func() []int { return append(childrenOf(master), master) }})
	}
	// The JVM is loaded in turns of 10 s until its rate stops rising (its
	// JIT takes a minute or two of load to compile Reactor's operator
	// chains), the others for 5 s.
	spring := &gatewayRow{name: "Spring Cloud Gateway, lb:// by the locator", url: "http://" + addr(4) + "/svc/x", jvm: true, warmTurn: 10 * time.Second, pids: one(scg.pid()), log: scg.logTail}
	fast := &gatewayRow{name: "our fasthttp gateway, by name", url: "http://" + addr(1) + "/svc/x", pids: one(pids["fasthttp"])}
	caddyGW := &gatewayRow{name: "Caddy eureka_gateway, by name", url: "http://" + addr(2) + "/svc/x", pids: one(pids["caddy"])}
	rows = append(rows, spring, fast, caddyGW)
	if err := measureGateways(r.ctx, c.wrk, c.gwConns, c.gwDuration, c.gwRounds, rows); err != nil {
		return err
	}
	fmt.Fprintf(r.out, "  %-52s %s req/s\n", fmt.Sprintf("Spring Cloud Gateway's warm-up, %v a turn", spring.warmTurn), rateList(spring.warmed))
	if spring.warmBad > 0 {
		fmt.Fprintf(r.out, "  %d of the warm-up's answers were not 2xx or 3xx, or socket errors%s\n", spring.warmBad, spring.logTail())
	}
	for _, row := range rows {
		cpu := ""
		if row.cpu != nil {
			cpu = fmt.Sprintf("   proxy CPU %6.1f µs/request", 1e6*median(row.cpu))
		}
		fmt.Fprintf(r.out, "  %-52s %8.0f req/s   p99 %8v%s\n", row.name, median(row.rates), median(row.p99s).Round(10*time.Microsecond), cpu)
	}
	r.compare("fasthttp gateway vs spring cloud gateway req/s", median(fast.rates), median(spring.rates), "/s", false)
	r.compare("fasthttp gateway vs spring cloud gateway p99", median(fast.p99s).Seconds(), median(spring.p99s).Seconds(), "s", true)
	r.compare("fasthttp gateway vs spring cloud gateway cpu per request", median(fast.cpu), median(spring.cpu), "µs", true)
	r.compare("caddy gateway vs spring cloud gateway req/s", median(caddyGW.rates), median(spring.rates), "/s", false)
	r.compare("caddy gateway vs spring cloud gateway p99", median(caddyGW.p99s).Seconds(), median(spring.p99s).Seconds(), "s", true)
	return nil
}
