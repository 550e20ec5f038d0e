package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/eurekagate/eurekagate/balancer"
	"github.com/eurekagate/eurekagate/discovery"
	"github.com/eurekagate/eurekagate/eureka"
)

// targetInstance is the propagation trials' backend at addr, registered
// as app, with a lease of an hour (nothing renews it during a trial), and
// the app's name in lower case as its VIP address, as Spring's client
// registers: Spring's discovery client looks a service up by VIP address,
// not by app.
func targetInstance(app, addr string) *eureka.InstanceInfo {
	i := benchInstance(addr)
	i.App, i.InstanceID = app, strings.ToLower(app)+"-1"
	i.VIPAddress, i.SecureVIPAddress = strings.ToLower(app), strings.ToLower(app)
	i.LeaseInfo = eureka.LeaseInfo{RenewalIntervalInSecs: 30, DurationInSecs: 3600}
	return i
}

// startBackend serves answerOK on a loopback port until stop.
func startBackend() (addr string, stop func(), err error) {
	ln, err := newLoopbackListener()
	if err != nil {
		return "", nil, err
	}
	srv := &fasthttp.Server{Handler: answerOK}
	done := make(chan struct{})
	go func() { srv.Serve(ln); close(done) }()
	return ln.Addr().String(), func() { srv.Shutdown(); <-done }, nil
}

// springCaller is the interop suite's Spring Boot service with the Eureka
// client at its defaults (a fetch every 30 s, Spring Cloud LoadBalancer's
// cache of 35 s), against one registry; GET /call/<app> calls app by name
// through Spring Cloud LoadBalancer.
func startSpringCaller(dir, name, jar, registry string) (*node, string, error) {
	ports, err := freePorts(1)
	if err != nil {
		return nil, "", err
	}
	n, err := startJava(dir, name, jar, "1g",
		"--server.port="+ports[0], "--server.address=127.0.0.1",
		"--spring.application.name=caller", "--eureka.instance.instance-id=caller-"+name,
		"--eureka.instance.hostname=127.0.0.1", "--eureka.instance.ip-address=127.0.0.1",
		"--eureka.client.service-url.defaultZone=http://"+registry+"/eureka/",
		// A call to an app it cannot find yet is an error with a stack
		// trace in Tomcat's log; the trials make one every 250 ms.
		"--logging.level.org.apache.catalina.core.ContainerBase=OFF")
	return n, "127.0.0.1:" + ports[0], err
}

// springPropagation registers trials apps, one every stagger, on each
// registry at once, and times each until the Spring caller of that
// registry answers a call to it by name. The registrations are spread
// over a fetch interval, so that the trials fall at every point of the
// client's cycle; they run side by side, since each is mostly waiting.
func springPropagation(ctx context.Context, registries, callers []string, backend string, trials int, stagger time.Duration) ([][]time.Duration, error) {
	out := make([][]time.Duration, len(registries))
	errs := make([]error, len(registries))
	var wg sync.WaitGroup
	var mu sync.Mutex
	for t := range trials {
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(time.Duration(min(t, 1)) * stagger):
		}
		app := "TARGET-" + strconv.Itoa(t)
		for s := range registries {
			sent := time.Now()
			if status, err := request(registries[s], "POST", "/eureka/apps/"+app, eureka.AppendInstanceJSON(nil, targetInstance(app, backend))); err != nil || status != fasthttp.StatusNoContent {
				return nil, fmt.Errorf("registering %s at %s: %d %v", app, registries[s], status, err)
			}
			wg.Go(func() {
				url := "http://" + callers[s] + "/call/" + strings.ToLower(app)
				for time.Since(sent) < 4*time.Minute && ctx.Err() == nil {
					if resp, err := callClient.Get(url); err == nil {
						body, _ := io.ReadAll(resp.Body)
						resp.Body.Close()
						if resp.StatusCode == 200 && string(body) == "ok" {
							mu.Lock()
							out[s] = append(out[s], time.Since(sent))
							mu.Unlock()
							return
						}
					}
					time.Sleep(250 * time.Millisecond)
				}
				mu.Lock()
				errs[s] = fmt.Errorf("%s never answered a call to %s within 4 minutes", callers[s], app)
				mu.Unlock()
			})
		}
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// callClient calls the Spring callers; a call that hangs is a failed
// one.
var callClient = &http.Client{Timeout: 10 * time.Second}

// pushPropagation times, trials times, a registration on our registry
// until our discovery client (its defaults: the watch on) and balancer
// can call the new app by name.
func pushPropagation(registry, backend string, trials int) ([]time.Duration, error) {
	client, err := discovery.New(discovery.Config{ServiceURLs: []string{"http://" + registry + "/eureka/"}})
	if err != nil {
		return nil, err
	}
	client.Start()
	defer client.Stop(context.Background())
	<-client.Ready()
	hc := &balancer.HTTPClient{Balancer: balancer.New(client, balancer.Config{})}
	var out []time.Duration
	for t := range trials {
		app := "PUSH-" + strconv.Itoa(t)
		sent := time.Now()
		if status, err := request(registry, "POST", "/eureka/apps/"+app, eureka.AppendInstanceJSON(nil, targetInstance(app, backend))); err != nil || status != fasthttp.StatusNoContent {
			return nil, fmt.Errorf("registering %s: %d %v", app, status, err)
		}
		for {
			req, _ := http.NewRequest("GET", "http://"+strings.ToLower(app)+"/hello", nil)
			if resp, err := hc.Do(req); err == nil {
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode == 200 {
					break
				}
			}
			if time.Since(sent) > 30*time.Second {
				return nil, fmt.Errorf("our client could not call %s within 30 s", app)
			}
			time.Sleep(time.Millisecond)
		}
		out = append(out, time.Since(sent))
	}
	return out, nil
}

// clusterSync registers n instances on one node (from conc connections,
// as a fleet's clients would) and returns the time from the first
// registration until the other node holds every one of them, as
// GET /eureka/apps/{app}/{id} answers there: the one read both servers
// answer from the registry itself rather than from a cache (the Java
// server's full and app reads come from its 30 s response cache).
func clusterSync(from, to string, n, apps, conc int) (time.Duration, error) {
	bodies := registrationBodies(0, n, apps)
	start := time.Now()
	if _, err := load(registrations(from, bodies, serviceApp(0, apps), conc)); err != nil {
		return 0, fmt.Errorf("registering on %s: %v", from, err)
	}
	missing := make([]int, n)
	for k := range missing {
		missing[k] = k
	}
	client := &fasthttp.HostClient{Addr: to, MaxConns: 8, ReadTimeout: 10 * time.Second}
	defer client.CloseIdleConnections()
	for len(missing) > 0 {
		if time.Since(start) > 5*time.Minute {
			return 0, fmt.Errorf("%s holds %d of %d instances after 5 minutes", to, n-len(missing), n)
		}
		held := make([]bool, len(missing))
		var next sync.WaitGroup
		work := make(chan int)
		for range 8 {
			next.Go(func() {
				req, resp := fasthttp.AcquireRequest(), fasthttp.AcquireResponse()
				defer fasthttp.ReleaseRequest(req)
				defer fasthttp.ReleaseResponse(resp)
				for k := range work {
					i := javaInstance(missing[k], apps)
					req.SetRequestURI("http://" + to + "/eureka/apps/" + i.App + "/" + i.InstanceID)
					req.Header.Set("Accept", "application/json")
					held[k] = client.Do(req, resp) == nil && resp.StatusCode() == 200
				}
			})
		}
		for k := range missing {
			work <- k
		}
		close(work)
		next.Wait()
		still := missing[:0]
		for k, m := range missing {
			if !held[k] {
				still = append(still, m)
			}
		}
		missing = still
	}
	return time.Since(start), nil
}

// loopbackAddr is host with a free port (found on 127.0.0.1, which on
// Linux is as free on the rest of 127.0.0.0/8).
func loopbackAddr(host string) (string, error) {
	ports, err := freePorts(1)
	if err != nil {
		return "", err
	}
	return net.JoinHostPort(host, ports[0]), nil
}

// propagation is the propagation phase: a registration until a Spring
// Boot service calls it by name, against each server, and until our
// discovery client does against ours.
func (r *javaRun) propagation() error {
	c := r.c
	fmt.Fprintf(r.out, "\npropagation: a registration until a caller reaches it by name (%d trials)\n", c.trials)
	backend, stopBackend, err := startBackend()
	if err != nil {
		return err
	}
	defer stopBackend()
	java, ours, _, stop, err := r.standalone("-propagation")
	if err != nil {
		return err
	}
	defer stop()

	push, err := pushPropagation(ours.registry, backend, c.trials)
	if err != nil {
		return err
	}
	registries := []string{ours.registry, java.registry}
	callers := make([]string, len(registries))
	callerNodes := make([]*node, len(registries))
	errs := make([]error, len(registries))
	var wg sync.WaitGroup
	for k, reg := range registries {
		wg.Go(func() {
			callerNodes[k], callers[k], errs[k] = startSpringCaller(r.dir, "spring-caller-"+[]string{"ours", "java"}[k], r.jars.client, reg)
		})
	}
	wg.Wait()
	defer func() {
		for _, n := range callerNodes {
			if n != nil {
				n.stop()
			}
		}
	}()
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("starting the Spring callers: %v", err)
	}
	spring, err := springPropagation(r.ctx, registries, callers, backend, c.trials, c.stagger)
	if err != nil {
		return err
	}
	p := func(l []time.Duration) latencies { return summarize(slices.Clone(l)) }
	pp, ps, pj := p(push), p(spring[0]), p(spring[1])
	fmt.Fprintf(r.out, "  %-52s p50 %9v   max %9v\n", "our discovery client with its watch, on ours", pp.p50, pp.max)
	fmt.Fprintf(r.out, "  %-52s p50 %9v   max %9v\n", "the Spring Boot service (default intervals), on ours", ps.p50.Round(time.Millisecond), ps.max.Round(time.Millisecond))
	fmt.Fprintf(r.out, "  %-52s p50 %9v   max %9v\n", "the Spring Boot service (default intervals), on java", pj.p50.Round(time.Millisecond), pj.max.Round(time.Millisecond))
	r.compare("propagation p50", pp.p50.Seconds(), pj.p50.Seconds(), "s", true)
	r.compare("propagation max", pp.max.Seconds(), pj.max.Seconds(), "s", true)
	r.compare("propagation p50, spring client on both", ps.p50.Seconds(), pj.p50.Seconds(), "s", true)
	return nil
}

// clusters is the cluster phase: c.cluster registrations on one node of
// a two-node cluster until the other holds them all, Java-Java, then
// ours-ours. Each node has a loopback address of its own.
func (r *javaRun) clusters() error {
	c := r.c
	fmt.Fprintf(r.out, "\ntwo-node clusters: %s registrations on one node until the other holds them all\n", commas(c.cluster))
	pair := func(hosts ...string) ([]string, []string, error) {
		var addrs, urls []string
		for _, h := range hosts {
			a, err := loopbackAddr(h)
			if err != nil {
				return nil, nil, err
			}
			addrs, urls = append(addrs, a), append(urls, "http://"+a+"/eureka/")
		}
		return addrs, urls, nil
	}
	addrs, urls, err := pair("127.0.0.2", "127.0.0.3")
	if err != nil {
		return err
	}
	nodes := make([]*node, 2)
	errs := make([]error, 2)
	var wg sync.WaitGroup
	for k := range nodes {
		wg.Go(func() {
			nodes[k], errs[k] = startJavaServer(r.dir, "java-node-"+strconv.Itoa(k+1), r.jars.server, addrs[k], urls,
				"--eureka.server.registry-sync-retry-wait-ms=1000",
				"--eureka.server.peer-node-connect-timeout-ms=1000", "--eureka.server.peer-node-read-timeout-ms=5000")
		})
	}
	wg.Wait()
	stopNodes := func() {
		for _, n := range nodes {
			if n != nil {
				n.stop()
			}
		}
	}
	if err := errors.Join(errs...); err != nil {
		stopNodes()
		return fmt.Errorf("starting the Java cluster: %v", err)
	}
	javaSync, err := clusterSync(addrs[0], addrs[1], c.cluster, c.apps, c.conc)
	stopNodes()
	if err != nil {
		return fmt.Errorf("the Java cluster: %v", err)
	}

	if addrs, urls, err = pair("127.0.0.4", "127.0.0.5"); err != nil {
		return err
	}
	for k := range nodes {
		if nodes[k], _, err = r.startOurs("eureka-node-"+strconv.Itoa(k+1), addrs[k], "-peers", strings.Join(urls, ","), "-self-url", urls[k]); err != nil {
			stopNodes()
			return err
		}
	}
	oursSync, err := clusterSync(addrs[0], addrs[1], c.cluster, c.apps, c.conc)
	stopNodes()
	if err != nil {
		return fmt.Errorf("our cluster: %v", err)
	}
	fmt.Fprintf(r.out, "  %-52s ours %.2f s   java %.2f s\n", "until the second node holds every instance", oursSync.Seconds(), javaSync.Seconds())
	r.compare("cluster sync 10k", oursSync.Seconds(), javaSync.Seconds(), "s", true)
	return nil
}
