package main

import (
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/valyala/fasthttp"
)

// Each comparison prints as NAME: ours=X java=Y ratio=Z, the ratio how
// many times ours is better: ours / java for rates, java / ours for
// memory, CPU and time.
func TestComparisonLine(t *testing.T) {
	for _, c := range []struct {
		cmp  comparison
		want string
	}{
		{comparison{"heartbeats/s 10k", 50000, 4000, "/s", false}, "heartbeats/s 10k: ours=50000/s java=4000/s ratio=12.50"},
		{comparison{"full fetches/s gzip 10k", 900, 1000, "/s", false}, "full fetches/s gzip 10k: ours=900/s java=1000/s ratio=0.90"},
		{comparison{"rss 10k", 80e6, 540e6, "MB", true}, "rss 10k: ours=80MB java=540MB ratio=6.75"},
		{comparison{"cpu per heartbeat", 20e-6, 480e-6, "µs", true}, "cpu per heartbeat: ours=20.0µs java=480.0µs ratio=24.00"},
		{comparison{"propagation p50", 0.004, 58.3, "s", true}, "propagation p50: ours=4.0ms java=58.30s ratio=14575.00"},
	} {
		if got := c.cmp.String(); got != c.want {
			t.Errorf("got  %s\nwant %s", got, c.want)
		}
	}
}

// The 99th percentile is read from wrk --latency's distribution, in its
// unit; without the distribution it is 0, which the gateway rows refuse.
func TestParseWrkP99(t *testing.T) {
	out := `  Latency Distribution
     50%  635.00us
     75%  712.00us
     90%  800.00us
     99%    1.53ms
  208176 requests in 15.02s, 30.00MB read
`
	if w, err := parseWrk([]byte(out)); err != nil || w.p99 != 1530*time.Microsecond {
		t.Errorf("%v %v", w.p99, err)
	}
	if w, err := parseWrk([]byte(strings.Replace(out, "1.53ms", "2.00s", 1))); err != nil || w.p99 != 2*time.Second {
		t.Errorf("%v %v", w.p99, err)
	}
	if w, err := parseWrk([]byte("  208176 requests in 15.02s, 30.00MB read\n")); err != nil || w.p99 != 0 {
		t.Errorf("without the distribution: %v %v", w.p99, err)
	}
}

// The heartbeat script renews each of the first n instances in turn, at
// the path and with the lastDirtyTimestamp of its registration.
func TestHeartbeatScript(t *testing.T) {
	dir := t.TempDir()
	args, err := heartbeatScript(dir, 150, 100)
	if err != nil {
		t.Fatal(err)
	}
	if len(args) != 2 || args[0] != "-s" {
		t.Fatalf("wrk's arguments: %q", args)
	}
	b, err := os.ReadFile(args[1])
	if err != nil {
		t.Fatal(err)
	}
	script := string(b)
	for _, n := range []int{0, 99, 149} {
		i := javaInstance(n, 100)
		path := "/eureka/apps/" + i.App + "/" + i.InstanceID + "?status=UP&lastDirtyTimestamp=" + strconv.FormatInt(i.LastDirtyTimestamp, 10)
		if !strings.Contains(script, `"`+path+`"`) {
			t.Errorf("no renewal of instance %d (%s) in\n%.400s", n, path, script)
		}
	}
	if got := strings.Count(script, "/eureka/apps/"); got != 150 {
		t.Errorf("%d paths, want 150", got)
	}
	for _, want := range []string{`wrk.method = "PUT"`, "reqs[i] = wrk.format(nil, p)", "k = k % #reqs + 1", "return reqs[k]"} {
		if !strings.Contains(script, want) {
			t.Errorf("the script has no %q", want)
		}
	}
}

// A warm-up ends once two turns in a row come within 5 % of the best
// before them, or after its most turns.
func TestWarmUp(t *testing.T) {
	for _, c := range []struct {
		rates []float64
		most  int
		want  int // turns run
	}{
		{[]float64{1600, 4000, 6700, 7000, 8100, 8200, 7700, 9999}, 18, 7}, // Spring Cloud Gateway's climb
		{[]float64{30000, 30500, 29000, 99999}, 10, 3},                     // warm from the start
		{[]float64{1, 2, 3, 4, 5}, 4, 4},                                   // still rising: stops at most
		{[]float64{5, 99}, 1, 1},
	} {
		k := 0
		rates, err := warmUp(c.most, func() (float64, error) { k++; return c.rates[k-1], nil })
		if err != nil || len(rates) != c.want || k != c.want {
			t.Errorf("%v, most %d: %d turns (%v), want %d", c.rates, c.most, k, rates, c.want)
		}
	}
}

// wrk runs the heartbeat script as written: every request a PUT of one
// of the instances' renewal paths, in turn, with a Host header (a
// request formatted before wrk sets it has none, and a server answers it
// 400).
func TestHeartbeatScriptRunsInWrk(t *testing.T) {
	wrk, err := exec.LookPath("wrk")
	if err != nil {
		t.Skip("wrk not installed")
	}
	args, err := heartbeatScript(t.TempDir(), 50, 10)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{}
	for n := range 50 {
		i := javaInstance(n, 10)
		want["/eureka/apps/"+i.App+"/"+i.InstanceID+"?status=UP&lastDirtyTimestamp="+strconv.FormatInt(i.LastDirtyTimestamp, 10)] = true
	}
	var mu sync.Mutex
	seen := map[string]int{}
	var wrong []string
	ln, err := newLoopbackListener()
	if err != nil {
		t.Fatal(err)
	}
	srv := &fasthttp.Server{Handler: func(ctx *fasthttp.RequestCtx) {
		mu.Lock()
		defer mu.Unlock()
		uri := string(ctx.RequestURI())
		if !ctx.IsPut() || !want[uri] || len(ctx.Host()) == 0 {
			wrong = append(wrong, string(ctx.Method())+" "+uri+" Host "+string(ctx.Host()))
			ctx.SetStatusCode(fasthttp.StatusBadRequest)
			return
		}
		seen[uri]++
	}}
	go srv.Serve(ln)
	defer srv.Shutdown()
	outp, err := exec.Command(wrk, append(append([]string{"-t1", "-c2", "-d1s"}, args...), "http://"+ln.Addr().String()+"/")...).CombinedOutput()
	if err != nil {
		t.Fatalf("wrk: %v\n%s", err, outp)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(wrong) > 0 {
		t.Fatalf("%d requests not a renewal, the first: %s", len(wrong), wrong[0])
	}
	if len(seen) != 50 {
		t.Errorf("%d of the 50 instances renewed", len(seen))
	}
}
