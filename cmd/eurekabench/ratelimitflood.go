package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"time"
)

// limitSide is one gateway of the ratelimit study and its turns.
type limitSide struct {
	name, url string
	pid       int
	jvm       bool        // warmed up until its rate stops rising
	warmed    []float64   // the warm-up's answers a second
	turns     []limitTurn // one a round
}

// limitTurn is one flood of a gateway: wrk's counts by status, its time
// and 99th percentile, and the CPU the gateway and Redis spent meanwhile.
type limitTurn struct {
	answered, accepted, limited int // all, 200, 429
	socketErrors                int // wrk's: connections it lost, answers it waited for in vain (2 s)
	seconds                     float64
	p99                         time.Duration
	cpu, redisCPU               float64 // seconds
}

func (t limitTurn) answeredRate() float64 { return float64(t.answered) / t.seconds }

// acceptedRate is the requests accepted a second beyond the burst, which
// each turn starts with whole (rateLimitConfig.check).
func (t limitTurn) acceptedRate(burst int) float64 {
	return float64(t.accepted-burst) / t.seconds
}

// statusScript is the wrk script that counts the answers by status and
// prints the counts last, as statusLine reads them.
const statusScript = `local threads = {}
function setup(thread) table.insert(threads, thread) end
function init(args) ok = 0; limited = 0; other = 0 end
function response(status, headers, body)
  if status == 200 then ok = ok + 1 elseif status == 429 then limited = limited + 1 else other = other + 1 end
end
function done(summary, latency, requests)
  for _, t in ipairs(threads) do
    io.write(string.format("statuses: 200 %d, 429 %d, other %d\n", t:get("ok"), t:get("limited"), t:get("other")))
  end
end
`

var statusLine = regexp.MustCompile(`statuses: 200 (\d+), 429 (\d+), other (\d+)`)

// parseStatuses reads statusScript's line from wrk's output.
func parseStatuses(outp []byte) (ok, limited, other int, err error) {
	m := statusLine.FindSubmatch(outp)
	if m == nil {
		return 0, 0, 0, fmt.Errorf("no statuses in wrk's output:\n%s", outp)
	}
	ok, _ = strconv.Atoi(string(m[1]))
	limited, _ = strconv.Atoi(string(m[2]))
	other, _ = strconv.Atoi(string(m[3]))
	return ok, limited, other, nil
}

// flood runs wrk with statusScript (at script) against url for d, and
// refuses a turn with an answer other than 200 or 429. Socket errors are
// counted, not refused: a loaded machine makes a cold JVM miss wrk's
// timeout.
func flood(ctx context.Context, c rateLimitConfig, script, url string, d time.Duration, args ...string) (limitTurn, error) {
	w, outp, err := runWrkOutput(ctx, c.wrk, c.conns, d, url, append([]string{"-s", script}, args...)...)
	if err != nil {
		return limitTurn{}, err
	}
	ok, limited, other, err := parseStatuses(outp)
	switch {
	case err != nil:
		return limitTurn{}, err
	case other > 0:
		return limitTurn{}, fmt.Errorf("%s: %d answers neither 200 nor 429", url, other)
	}
	return limitTurn{answered: w.requests, accepted: ok, limited: limited, socketErrors: w.socketErrors(), seconds: w.seconds, p99: w.p99}, nil
}

// measureLimits warms each side up under the flood (the JVM until its
// rate stops rising, for its JIT; ours one turn), then floods each in
// turn, rounds times, waiting before each turn until both gateways and
// Redis are idle. A turn without a 429 is an error: the flood did not
// reach the limit, or the limiter is not on.
func measureLimits(ctx context.Context, c rateLimitConfig, dir string, sides []*limitSide, redisPID int) error {
	script := filepath.Join(dir, "statuses.lua")
	if err := os.WriteFile(script, []byte(statusScript), 0o644); err != nil {
		return err
	}
	cpuOf := func(pid int) func() float64 {
		return func() float64 { return cpuSeconds(func() []int { return []int{pid} }) }
	}
	idle := []func() float64{cpuOf(redisPID)}
	for _, s := range sides {
		idle = append(idle, cpuOf(s.pid))
		turn := func(d time.Duration) func() (float64, error) {
			return func() (float64, error) {
				t, err := flood(ctx, c, script, s.url, d)
				return t.answeredRate(), err
			}
		}
		var err error
		if s.jvm {
			s.warmed, err = warmUp(c.warmTurns, turn(c.warmTurn))
		} else {
			s.warmed, err = warmUp(1, turn(c.d))
		}
		if err != nil {
			return fmt.Errorf("%s: warm-up: %v", s.name, err)
		}
	}
	for range c.rounds {
		for _, s := range sides {
			settle(idle...)
			cpu, redisCPU := cpuOf(s.pid)(), cpuOf(redisPID)()
			t, err := flood(ctx, c, script, s.url, c.d, "--latency")
			if err == nil && t.p99 == 0 {
				err = errors.New("no 99th percentile in wrk's output")
			}
			if err == nil && t.limited == 0 {
				err = fmt.Errorf("no 429 among %d answers (%.0f a second) over a limit of %d/s: the limiter is not on", t.answered, t.answeredRate(), c.rate)
			}
			if err != nil {
				return fmt.Errorf("%s: %v", s.name, err)
			}
			t.cpu, t.redisCPU = cpuOf(s.pid)()-cpu, cpuOf(redisPID)()-redisCPU
			s.turns = append(s.turns, t)
		}
	}
	return nil
}

// socketErrors are wrk's socket errors over the side's turns.
func (s *limitSide) socketErrors() int {
	n := 0
	for _, t := range s.turns {
		n += t.socketErrors
	}
	return n
}

// sideMedians are a side's medians over its turns.
type sideMedians struct {
	answered, accepted, err float64 // a second; err a fraction of the rate
	p99                     time.Duration
	cpu, redisCPU           float64 // seconds an answered request
}

func (s *limitSide) medians(rate, burst int) sideMedians {
	var m sideMedians
	var answered, accepted, errs, cpu, redisCPU []float64
	var p99 []time.Duration
	for _, t := range s.turns {
		answered = append(answered, t.answeredRate())
		accepted = append(accepted, t.acceptedRate(burst))
		errs = append(errs, t.acceptedRate(burst)/float64(rate)-1)
		p99 = append(p99, t.p99)
		cpu = append(cpu, t.cpu/float64(t.answered))
		redisCPU = append(redisCPU, t.redisCPU/float64(t.answered))
	}
	m.answered, m.accepted, m.err, m.p99 = median(answered), median(accepted), median(errs), median(p99)
	m.cpu, m.redisCPU = median(cpu), median(redisCPU)
	return m
}

// errorLine is the accepted rate's error of both sides as NAME: ours=X
// java=Y ratio=Z, the ratio how many times ours is nearer the configured
// rate: |java| / |ours|, an error under one request of a turn's counted
// ones (resolution, a fraction of them) taken as that request.
func errorLine(name string, ours, java, resolution float64) string {
	return fmt.Sprintf("%s: ours=%+.1f%% java=%+.1f%% ratio=%.2f", name, 100*ours, 100*java,
		math.Max(math.Abs(java), resolution)/math.Max(math.Abs(ours), resolution))
}

// printLimits prints each side's medians and every turn's accepted rate,
// then the comparisons, ours first, Spring Cloud Gateway second; and
// records the medians.
func printLimits(c rateLimitConfig, sides []*limitSide, out io.Writer, rec *record) {
	if w := sides[1].warmed; len(w) > 1 {
		fmt.Fprintf(out, "  %-52s %s answers/s\n", fmt.Sprintf("Spring Cloud Gateway's warm-up, %.0f s a turn", c.warmTurn.Seconds()), rateList(w))
	}
	fmt.Fprintf(out, "  %-52s %10s %10s %7s %9s %14s %12s\n", "", "answered/s", "accepted/s", "error", "p99", "gateway CPU", "Redis CPU")
	m := make([]sideMedians, len(sides))
	for k, s := range sides {
		m[k] = s.medians(c.rate, c.burst)
		fmt.Fprintf(out, "  %-52s %10.0f %10.1f %+6.1f%% %9v %9.1f µs/r %7.1f µs/r\n", s.name, m[k].answered, m[k].accepted, 100*m[k].err,
			m[k].p99, 1e6*m[k].cpu, 1e6*m[k].redisCPU)
		var accepted []float64
		for _, t := range s.turns {
			accepted = append(accepted, t.acceptedRate(c.burst))
		}
		fmt.Fprintf(out, "  %-52s %s accepted/s beyond the burst, by round\n", "", ratesWith(accepted, 1))
		if lost := s.socketErrors(); lost > 0 {
			fmt.Fprintf(out, "  %-52s %d socket errors in the rounds (requests wrk did not count)\n", "", lost)
		}
		for _, f := range []struct {
			what  string
			value float64
			unit  string
		}{{"answered", m[k].answered, "/s"}, {"accepted", m[k].accepted, "/s"}, {"accepted error", 100 * m[k].err, "%"},
			{"p99", m[k].p99.Seconds(), "s"}, {"cpu", 1e6 * m[k].cpu, "µs"}, {"redis cpu", 1e6 * m[k].redisCPU, "µs"}} {
			rec.add(s.name+"."+f.what, f.value, f.unit)
		}
	}
	ours, java := m[0], m[1]
	limit := fmt.Sprintf("%d/s burst %d", c.rate, c.burst)
	fmt.Fprintf(out, "\nthe comparisons (ratio: how many times ours is better; below 1 Spring Cloud Gateway is)\n")
	fmt.Fprintln(out, errorLine("accepted rate error, "+limit, ours.err, java.err, 1/(float64(c.rate)*c.d.Seconds())))
	for _, cmp := range []comparison{
		{"answered/s under a flood over " + limit, ours.answered, java.answered, "/s", false},
		{"p99 under a flood over " + limit, ours.p99.Seconds(), java.p99.Seconds(), "s", true},
		{"cpu per request under a flood, the gateway's and redis's", ours.cpu + ours.redisCPU, java.cpu + java.redisCPU, "µs", true},
	} {
		fmt.Fprintln(out, cmp)
	}
}
