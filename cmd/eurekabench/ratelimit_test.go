package main

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/valyala/fasthttp"
)

// The study refuses a limit it cannot measure before it builds anything,
// naming why.
func TestRateLimitStudyRefuses(t *testing.T) {
	for _, c := range []struct {
		args   []string
		stderr string
	}{
		{[]string{"-rate", "100", "-burst", "49"}, "-burst 49 under half of -rate 100: Spring Cloud Gateway's limiter keeps no state then"},
		{[]string{"-rate", "10", "-burst", "100", "-duration", "10s"}, "-burst 100: more than -rate × (-duration − 1 s) = 90"},
		{[]string{"-duration", "1500ms"}, "-duration 1.5s: wrk runs whole seconds"},
		{[]string{"-rounds", "0"}, "-rate, -burst, -rounds and -connections need at least 1"},
	} {
		var stdout, stderr strings.Builder
		if code := dispatch(append([]string{"ratelimit"}, c.args...), &stdout, &stderr); code != 1 || !strings.Contains(stderr.String(), "eurekabench ratelimit: "+c.stderr) {
			t.Errorf("%q: exit %d; stderr:\n%s", c.args, code, stderr.String())
		}
	}
}

// Our limit goes into the rules document as docs/gateway.md writes one,
// and with -shared through the study's Redis.
func TestRateLimitStudyRules(t *testing.T) {
	c := rateLimitConfig{rate: 100, burst: 50}
	if got, want := c.rulesDoc(), "apps:\n  SVC:\n    limits: [{key: app, rate: 100/s, burst: 50}]\n"; got != want {
		t.Errorf("rules %q, want %q", got, want)
	}
	if got := strings.Join(c.limitsArgs("r.yaml", "127.0.0.1:6390"), " "); got != "-gateway-rules r.yaml" {
		t.Errorf("args %q", got)
	}
	c.shared = true
	if got, want := c.rulesDoc(), "apps:\n  SVC:\n    limits: [{key: app, rate: 100/s, burst: 50, shared: true}]\n"; got != want {
		t.Errorf("shared rules %q, want %q", got, want)
	}
	if got := strings.Join(c.limitsArgs("r.yaml", "127.0.0.1:6390"), " "); got != "-gateway-rules r.yaml -gateway-redis redis://127.0.0.1:6390" {
		t.Errorf("shared args %q", got)
	}
}

// The error line's ratio is how many times ours is nearer the rate, an
// error under the resolution counted as the resolution.
func TestRateLimitErrorLine(t *testing.T) {
	for _, c := range []struct {
		ours, java, resolution float64
		want                   string
	}{
		{0.002, -0.04, 0.001, "e: ours=+0.2% java=-4.0% ratio=20.00"},
		{0, 0.01, 0.001, "e: ours=+0.0% java=+1.0% ratio=10.00"},
		{-0.05, 0.01, 0.001, "e: ours=-5.0% java=+1.0% ratio=0.20"},
		{0, 0, 0.001, "e: ours=+0.0% java=+0.0% ratio=1.00"},
	} {
		if got := errorLine("e", c.ours, c.java, c.resolution); got != c.want {
			t.Errorf("got  %s\nwant %s", got, c.want)
		}
	}
}

// wrk runs the status script as written: it counts the 200s and the 429s
// apart, and other answers apart again, which flood refuses.
func TestStatusScriptRunsInWrk(t *testing.T) {
	wrk, err := exec.LookPath("wrk")
	if err != nil {
		t.Skip("wrk not installed")
	}
	var n, ok, limited atomic.Int64
	teapot := atomic.Bool{}
	ln, err := newLoopbackListener()
	if err != nil {
		t.Fatal(err)
	}
	srv := &fasthttp.Server{Handler: func(ctx *fasthttp.RequestCtx) {
		switch {
		case teapot.Load():
			ctx.SetStatusCode(fasthttp.StatusTeapot)
		case n.Add(1)%3 == 0:
			ok.Add(1)
		default:
			limited.Add(1)
			ctx.SetStatusCode(fasthttp.StatusTooManyRequests)
		}
	}}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	defer func() { srv.Shutdown(); <-done }()
	dir := t.TempDir()
	script := dir + "/statuses.lua"
	if err := os.WriteFile(script, []byte(statusScript), 0o644); err != nil {
		t.Fatal(err)
	}
	c := rateLimitConfig{wrk: wrk, conns: 2}
	url := "http://" + ln.Addr().String() + "/x"
	turn, err := flood(context.Background(), c, script, url, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	// wrk stops with requests in flight: the server may have answered
	// one a connection more than wrk counted.
	if d := ok.Load() - int64(turn.accepted); turn.accepted == 0 || d < 0 || d > 2 {
		t.Errorf("wrk counted %d 200s, the server sent %d", turn.accepted, ok.Load())
	}
	if d := limited.Load() - int64(turn.limited); turn.limited == 0 || d < 0 || d > 2 {
		t.Errorf("wrk counted %d 429s, the server sent %d", turn.limited, limited.Load())
	}
	if turn.answered != turn.accepted+turn.limited {
		t.Errorf("%d answers, %d + %d counted", turn.answered, turn.accepted, turn.limited)
	}
	teapot.Store(true)
	if _, err := flood(context.Background(), c, script, url, time.Second); err == nil || !strings.Contains(err.Error(), "answers neither 200 nor 429") {
		t.Errorf("418s: %v", err)
	}
}

// The study runs end to end, briefly: Redis, cmd/eureka's gateway and
// Spring Cloud Gateway with its ratelimit profile, both flooded over the
// limit; each must answer 429s (measureLimits refuses a turn without
// one), and ours pass the rate it is given. Spring Cloud Gateway's
// accuracy is what the study measures, not checked here.
func TestRateLimitStudySmall(t *testing.T) {
	if testing.Short() {
		t.Skip("builds cmd/eureka and Spring Cloud Gateway, runs a JVM and redis-server")
	}
	c := rateLimitConfig{rate: 20, burst: 20, d: 2 * time.Second, rounds: 1, conns: 4, warmTurns: 1, warmTurn: time.Second}
	for _, tool := range []string{"java", "mvn", "wrk", "redis-server"} {
		path, err := exec.LookPath(tool)
		if err != nil {
			msg := tool + " not found: the ratelimit study needs a JDK 17 with Maven, wrk and redis-server (apt-get install openjdk-17-jdk-headless maven wrk redis-server)"
			if os.Getenv("CI") == "true" {
				t.Fatal(msg)
			}
			t.Skip(msg)
		}
		switch tool {
		case "wrk":
			c.wrk = path
		case "redis-server":
			c.redis = path
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	var out strings.Builder
	rec := newRecord("ratelimit", nil)
	if err := runRateLimit(ctx, c, &out, rec); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	t.Log(out.String())
	for _, want := range []string{"our gateway, limit key: app (local)", "Spring Cloud Gateway, RequestRateLimiter on Redis",
		"accepted rate error, 20/s burst 20: ours=", "answered/s under a flood over 20/s burst 20: ours=", "p99 under a flood over 20/s burst 20: ours="} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("no %q in the output", want)
		}
	}
	// 40 requests beyond the burst in 2 s: one more or less is 2.5 %.
	if e, ok := rec.figure("our gateway, limit key: app (local).accepted error"); !ok || e < -10 || e > 10 {
		t.Errorf("our accepted rate's error %.1f %% (recorded: %v), want within 10 %%", e, ok)
	}
	if v, ok := rec.figure("Spring Cloud Gateway, RequestRateLimiter on Redis.answered"); !ok || v <= 0 {
		t.Errorf("Spring Cloud Gateway answered %v a second (recorded: %v)", v, ok)
	}
}
