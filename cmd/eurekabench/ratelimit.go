package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/eurekagate/eurekagate/eureka"
)

// The ratelimit study (issue 50, side by side): Spring Cloud Gateway's
// RequestRateLimiter on Redis beside our gateway's rate limit, with the
// same limit (N a second, a burst of B, one bucket for the app), the same
// backend and the same flood, well over the limit: wrk -t1, the two
// gateways taking turns so that whatever else the machine runs weighs on
// both alike. Every server runs in a process of its own on loopback:
//
//   - Redis: Debian's redis-server on a free port, as a cache (no
//     snapshots, no append-only file);
//   - Spring Cloud Gateway: the interop suite's (interop/java/gateway),
//     built with Maven into a temporary directory, with its ratelimit
//     profile: RequestRateLimiter as a default filter, so on the discovery
//     locator's routes (application-ratelimit.yml says why not the
//     locator's own filters), its RedisRateLimiter on the study's Redis
//     (replenishRate N, burstCapacity B, requestedTokens 1), keyed by the
//     route; its discovery locator reads our registry;
//   - ours: cmd/eureka with -gateway and a rules file holding the limit
//     {key: app, rate: N/s, burst: B}, a limit of the gateway's own; with
//     -shared, the limit shared: true through -gateway-redis on the same
//     Redis;
//   - the backend, answering 200, in this process.
//
// For each gateway it prints the requests it answered a second (200 and
// 429), those it accepted a second beyond the burst and their error
// against N, wrk's 99th percentile, and the CPU a request costs the
// gateway and Redis.
//
//	go run ./cmd/eurekabench ratelimit
//	go run ./cmd/eurekabench ratelimit -rate 1000 -burst 1000 -duration 20s

// rateLimitConfig is the study's settings.
type rateLimitConfig struct {
	rate, burst int           // the limit: a second, at once
	d           time.Duration // a turn
	rounds      int
	conns       int           // wrk's connections
	warmTurns   int           // Spring Cloud Gateway's warm-up turns, at most
	warmTurn    time.Duration // each of them
	shared      bool          // our limit shared through the Redis
	keep        bool          // keep the temporary directory
	wrk, redis  string        // the tools' paths
}

func rateLimitCommand(fs *flag.FlagSet) func(io.Writer, *record) error {
	c := rateLimitConfig{warmTurns: 18, warmTurn: 10 * time.Second}
	fs.IntVar(&c.rate, "rate", 100, "the limit's rate, requests a second (Spring Cloud Gateway's replenishRate)")
	fs.IntVar(&c.burst, "burst", 100, "the limit's burst, requests at once (Spring Cloud Gateway's burstCapacity; the default, the rate, is its documented steady rate)")
	fs.DurationVar(&c.d, "duration", 10*time.Second, "how long wrk floods a gateway per round, in whole seconds")
	fs.IntVar(&c.rounds, "rounds", 3, "rounds, each gateway flooded once a round")
	fs.IntVar(&c.conns, "connections", 32, "wrk's connections")
	fs.BoolVar(&c.shared, "shared", false, "our limit shared: true, on the study's Redis through cmd/eureka -gateway-redis (issue 50's shared limits: until they are in, cmd/eureka refuses both)")
	fs.BoolVar(&c.keep, "keep", false, "keep the temporary directory with the logs and the builds, and say where it is")
	return func(out io.Writer, rec *record) error {
		if err := c.check(); err != nil {
			return err
		}
		for _, tool := range []string{"java", "mvn", "wrk", "redis-server"} {
			if _, err := exec.LookPath(tool); err != nil {
				return fmt.Errorf("%s not found: the study needs a JDK 17 with Maven, wrk and redis-server (apt-get install openjdk-17-jdk-headless maven wrk redis-server)", tool)
			}
		}
		c.wrk, _ = exec.LookPath("wrk")
		c.redis, _ = exec.LookPath("redis-server")
		return untilStopped(out, func(ctx context.Context, out io.Writer) error { return runRateLimit(ctx, c, out, rec) })
	}
}

// check refuses settings the study cannot measure.
func (c rateLimitConfig) check() error {
	switch {
	case c.rate < 1 || c.burst < 1 || c.rounds < 1 || c.conns < 1:
		return errors.New("-rate, -burst, -rounds and -connections need at least 1")
	case c.d < time.Second || c.d%time.Second != 0:
		return fmt.Errorf("-duration %v: wrk runs whole seconds, at least one", c.d)
	case 2*c.burst < c.rate:
		// request_rate_limiter.lua sets its keys with a TTL of
		// floor(2 × burstCapacity / replenishRate) seconds, and sets none
		// when that is 0: no request is ever refused.
		return fmt.Errorf("-burst %d under half of -rate %d: Spring Cloud Gateway's limiter keeps no state then (its keys' TTL, 2 × burst / rate seconds rounded down, is 0) and refuses nothing", c.burst, c.rate)
	case c.burst > c.rate*int(c.d/time.Second-1):
		// A gateway's next turn comes after the other's; its bucket must
		// be full again by then, in the whole seconds Spring Cloud
		// Gateway's limiter counts, for the burst to be known.
		return fmt.Errorf("-burst %d: more than -rate × (-duration − 1 s) = %d, which a bucket refills between a gateway's turns", c.burst, c.rate*int(c.d/time.Second-1))
	}
	return nil
}

// rulesDoc is our gateway's rules: the limit on the app, in the form
// docs/gateway.md gives.
func (c rateLimitConfig) rulesDoc() string {
	shared := ""
	if c.shared {
		shared = ", shared: true"
	}
	return fmt.Sprintf("apps:\n  SVC:\n    limits: [{key: app, rate: %d/s, burst: %d%s}]\n", c.rate, c.burst, shared)
}

func runRateLimit(ctx context.Context, c rateLimitConfig, out io.Writer, rec *record) error {
	dir, done, err := workDir("ratelimit", c.keep, out)
	if err != nil {
		return err
	}
	defer done()
	fmt.Fprintf(out, "eurekabench ratelimit: %d CPUs, load average %s, %s, the JVM %s; a limit of %d/s with a burst of %d on the app, wrk -t1 -c%d, %d rounds of %v a gateway, the medians\n",
		runtime.NumCPU(), loadAverage(), redisVersion(c.redis), javaVersion(), c.rate, c.burst, c.conns, c.rounds, c.d)
	start := time.Now()
	bin, err := buildEureka(ctx, dir, "")
	if err != nil {
		return err
	}
	goBuild := time.Since(start)
	start = time.Now()
	jar, err := buildJar(ctx, dir, "gateway")
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "built cmd/eureka in %.0f s and Spring Cloud Gateway with Maven in %.0f s\n", goBuild.Seconds(), time.Since(start).Seconds())

	var stops []func()
	defer func() {
		for i := len(stops) - 1; i >= 0; i-- {
			stops[i]()
		}
	}()
	redis, redisAddr, err := startRedis(c.redis, dir)
	if err != nil {
		return fmt.Errorf("starting redis-server: %v", err)
	}
	stops = append(stops, redis.stop)
	backend, stopBackend, err := startBackend()
	if err != nil {
		return err
	}
	stops = append(stops, stopBackend)
	ours, oursURL, err := startLimitedEureka(c, bin, dir, redisAddr, backend)
	if ours != nil {
		stops = append(stops, ours.stop)
	}
	if err != nil {
		return err
	}
	scg, scgURL, err := startLimitedSpring(c, jar, dir, redisAddr, ours.registry)
	if scg != nil {
		stops = append(stops, scg.stop)
	}
	if err != nil {
		return err
	}

	sides := []*limitSide{
		{name: "our gateway, limit key: app (local)", url: oursURL, pid: ours.pid()},
		{name: "Spring Cloud Gateway, RequestRateLimiter on Redis", url: scgURL, pid: scg.pid(), jvm: true},
	}
	if c.shared {
		sides[0].name = "our gateway, limit key: app, shared on Redis"
	}
	if err := measureLimits(ctx, c, dir, sides, redis.pid()); err != nil {
		return err
	}
	printLimits(c, sides, out, rec)
	return nil
}

// redisVersion is redis-server --version's "v=..." as "Redis 7.0.15".
func redisVersion(bin string) string {
	outp, _ := exec.Command(bin, "--version").Output()
	for _, f := range strings.Fields(string(outp)) {
		if v, ok := strings.CutPrefix(f, "v="); ok {
			return "Redis " + v
		}
	}
	return "Redis (version unknown)"
}

// limitsArgs are cmd/eureka's arguments for the study's gateway: the
// rules file, and with -shared the Redis its limit is shared through.
func (c rateLimitConfig) limitsArgs(rules, redisAddr string) []string {
	args := []string{"-gateway-rules", rules}
	if c.shared {
		args = append(args, "-gateway-redis", "redis://"+redisAddr)
	}
	return args
}

// startLimitedEureka runs cmd/eureka (bin) with its gateway and the
// study's rules, registers the backend as SVC, and waits until the
// gateway routes /svc/x.
func startLimitedEureka(c rateLimitConfig, bin, dir, redisAddr, backend string) (*node, string, error) {
	rules := dir + "/rules.yaml"
	if err := os.WriteFile(rules, []byte(c.rulesDoc()), 0o644); err != nil {
		return nil, "", err
	}
	ports, err := freePorts(2)
	if err != nil {
		return nil, "", err
	}
	reg, gw := "127.0.0.1:"+ports[0], "127.0.0.1:"+ports[1]
	n, err := startEureka(bin, dir, "eureka", reg, append([]string{"-gateway", gw}, c.limitsArgs(rules, redisAddr)...)...)
	if err != nil {
		return nil, "", err
	}
	body := eureka.AppendInstanceJSON(nil, targetInstance("SVC", backend))
	if err := awaitStatus(n, reg, "POST", "/eureka/apps/SVC", body, 204, time.Minute); err != nil {
		return n, "", fmt.Errorf("registering the backend with cmd/eureka: %v", err)
	}
	if err := awaitStatus(n, gw, "GET", "/svc/x", nil, 200, time.Minute); err != nil {
		return n, "", fmt.Errorf("our gateway: %v", err)
	}
	return n, "http://" + gw + "/svc/x", nil
}

// startLimitedSpring runs Spring Cloud Gateway with its ratelimit profile
// on the study's Redis and limit, its discovery locator reading registry
// (host:port), and waits until it routes /svc/x.
func startLimitedSpring(c rateLimitConfig, jar, dir, redisAddr, registry string) (*node, string, error) {
	ports, err := freePorts(1)
	if err != nil {
		return nil, "", err
	}
	redisHost, redisPort, _ := strings.Cut(redisAddr, ":")
	n, err := startJava(dir, "spring-gateway", jar, "1g",
		"--server.port="+ports[0], "--server.address=127.0.0.1",
		"--spring.application.name=gateway", "--eureka.instance.hostname=127.0.0.1",
		"--eureka.client.service-url.defaultZone=http://"+registry+"/eureka/",
		"--eureka.client.register-with-eureka=false",
		"--spring.cloud.gateway.server.webflux.discovery.locator.enabled=true",
		"--spring.cloud.gateway.server.webflux.discovery.locator.lower-case-service-id=true",
		"--spring.profiles.active=ratelimit",
		"--spring.data.redis.host="+redisHost, "--spring.data.redis.port="+redisPort,
		"--ratelimit.replenish-rate="+strconv.Itoa(c.rate), "--ratelimit.burst-capacity="+strconv.Itoa(c.burst))
	if err != nil {
		return n, "", fmt.Errorf("starting Spring Cloud Gateway: %v", err)
	}
	addr := "127.0.0.1:" + ports[0]
	if err := awaitStatus(n, addr, "GET", "/svc/x", nil, 200, 2*time.Minute); err != nil {
		return n, "", fmt.Errorf("Spring Cloud Gateway: %v", err)
	}
	return n, "http://" + addr + "/svc/x", nil
}

// awaitStatus sends the request to addr until it is answered want, for
// at most within; n is the server, whose log an error ends with.
func awaitStatus(n *node, addr, method, path string, body []byte, want int, within time.Duration) error {
	var status int
	var err error
	for deadline := time.Now().Add(within); ; time.Sleep(200 * time.Millisecond) {
		if status, err = request(addr, method, path, body); err == nil && status == want {
			return nil
		}
		if n.exited() || time.Now().After(deadline) {
			return fmt.Errorf("%s %s answered %d (%v), not %d, within %v:\n%s", method, path, status, err, want, within, n.logTail())
		}
	}
}
