package main

import (
	"context"
	"encoding/base64"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/eurekagate/eurekagate/internal/testkit"
	"github.com/eurekagate/eurekagate/registry"
	"github.com/eurekagate/eurekagate/registry/httpapi"
)

// authFloodConfig sizes the authflood study.
type authFloodConfig struct {
	d          time.Duration // each phase
	conc       int           // heartbeat clients in flight
	floodConns int           // the flooding client's connections
	instances  int
	rounds     int // alone and flooded phases, in turn
}

var defaultAuthFlood = authFloodConfig{d: 3 * time.Second, conc: 64, floodConns: 16, instances: 1000, rounds: 3}

// authFloodMain runs the authflood study from its arguments and returns the
// exit code.
func authFloodMain(args []string) int {
	fs := flag.NewFlagSet("authflood", flag.ExitOnError)
	c := defaultAuthFlood
	fs.DurationVar(&c.d, "duration", c.d, "how long each phase runs")
	fs.IntVar(&c.conc, "concurrency", c.conc, "authenticated heartbeats in flight")
	fs.IntVar(&c.floodConns, "flood-conns", c.floodConns, "connections of the client that floods wrong passwords")
	fs.IntVar(&c.rounds, "rounds", c.rounds, "rounds of an alone and a flooded phase")
	fs.Parse(args)
	if _, err := runAuthFlood(c, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "eurekabench authflood:", err)
		return 1
	}
	return 0
}

// authFloodResult is what the study measured.
type authFloodResult struct {
	alone, flooded       float64 // authenticated heartbeats per second
	aloneP99, floodedP99 time.Duration
	floodRate            float64 // wrong-password requests answered per second
	floodRefused         float64 // of which checked and refused (401)
	floodBusy            float64 // of which turned away unchecked (503)
}

// runAuthFlood measures authenticated heartbeats against the standalone
// server with a user whose hash has bcrypt's default cost, alone and while
// one client sends distinct wrong passwords for that user as fast as its
// connections allow, in turn for c.rounds rounds.
func runAuthFlood(c authFloodConfig, out io.Writer) (*authFloodResult, error) {
	hash, err := httpapi.HashPassword("s3cret")
	if err != nil {
		return nil, err
	}
	store := registry.New(registry.Config{})
	for i := range c.instances {
		if err := store.Register(testkit.SampleInstance(i), false); err != nil {
			return nil, err
		}
	}
	api := httpapi.NewAPI(store, httpapi.APIConfig{Auth: httpapi.AuthConfig{Users: []httpapi.Account{{Username: "ops", PasswordHash: hash}}}})
	srv := httpapi.NewServer(api, httpapi.ServerConfig{Addr: "127.0.0.1:0"})
	if err := srv.Start(); err != nil {
		return nil, err
	}
	defer srv.Stop(context.Background())
	addr := srv.Addr().String()

	paths := make([]string, c.instances)
	for n := range paths {
		i := testkit.SampleInstance(n)
		paths[n] = "/eureka/apps/" + i.App + "/" + i.InstanceID + "?status=UP&lastDirtyTimestamp=" + strconv.FormatInt(i.LastDirtyTimestamp, 10)
	}
	valid := "Basic " + base64.StdEncoding.EncodeToString([]byte("ops:s3cret"))
	heartbeats := func(d time.Duration) (*loadResult, error) {
		return timedLoad(addr, c.conc, d, func(n int, req *fasthttp.Request) {
			req.Header.SetMethod("PUT")
			req.SetRequestURI(paths[n%len(paths)])
			req.Header.Set("Authorization", valid)
		})
	}
	// A first pass checks the password once and warms up.
	if _, err := heartbeats(c.d / 5); err != nil {
		return nil, err
	}
	// Alone and flooded in turn, so that a change in the machine's other
	// load weighs on both alike.
	var alone, flooded loadResult
	var fl floodCounts
	for range c.rounds {
		r, err := heartbeats(c.d)
		if err != nil {
			return nil, err
		}
		alone.add(r)
		stop := startFlood(addr, c.floodConns, paths, &fl)
		time.Sleep(c.d / 10) // the flood under way
		r, err = heartbeats(c.d)
		if ferr := stop(); err == nil {
			err = ferr
		}
		if err != nil {
			return nil, err
		}
		flooded.add(r)
	}
	res := &authFloodResult{alone: alone.rate(), flooded: flooded.rate(), aloneP99: alone.p99(), floodedP99: flooded.p99()}
	secs := fl.elapsed.Seconds()
	res.floodRefused, res.floodBusy = float64(fl.refused.Load())/secs, float64(fl.busy.Load())/secs
	res.floodRate = res.floodRefused + res.floodBusy

	fmt.Fprintf(out, "%-52s %12s\n", fmt.Sprintf("authflood (bcrypt cost 10, %d x %v per phase)", c.rounds, c.d), "result")
	fmt.Fprintf(out, "%-52s %12.0f /s   (p99 %v)\n", "authenticated heartbeats, alone", res.alone, res.aloneP99.Round(time.Microsecond))
	fmt.Fprintf(out, "%-52s %12.0f /s   (p99 %v)\n", "authenticated heartbeats, during the flood", res.flooded, res.floodedP99.Round(time.Microsecond))
	fmt.Fprintf(out, "%-52s %12.2f      (target > 0.50)\n", "share kept during the flood", res.flooded/res.alone)
	fmt.Fprintf(out, "%-52s %12.0f /s   (%d connections)\n", "wrong passwords answered", res.floodRate, c.floodConns)
	fmt.Fprintf(out, "%-52s %12.1f /s\n", "  of which checked with bcrypt (401)", res.floodRefused)
	fmt.Fprintf(out, "%-52s %12.0f /s\n", "  of which turned away unchecked (503)", res.floodBusy)
	return res, nil
}

// floodCounts are the flood's answers, over all its runs.
type floodCounts struct {
	refused, busy atomic.Int64
	next          atomic.Int64
	elapsed       time.Duration
}

// startFlood starts one client that sends heartbeats with distinct wrong
// passwords for the real user over conns connections, as fast as they
// are answered. The returned function stops it and reports the first
// unexpected answer.
func startFlood(addr string, conns int, paths []string, fl *floodCounts) func() error {
	done := make(chan struct{})
	var firstErr atomic.Value
	var wg sync.WaitGroup
	client := &fasthttp.HostClient{Addr: addr, MaxConns: conns, ReadTimeout: 30 * time.Second}
	start := time.Now()
	for range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req, resp := fasthttp.AcquireRequest(), fasthttp.AcquireResponse()
			defer fasthttp.ReleaseRequest(req)
			defer fasthttp.ReleaseResponse(resp)
			for {
				select {
				case <-done:
					return
				default:
				}
				n := fl.next.Add(1)
				req.Reset()
				req.Header.SetMethod("PUT")
				req.SetRequestURI(paths[int(n)%len(paths)])
				req.SetHost(addr)
				req.Header.Set("Authorization", "Basic "+base64.StdEncoding.EncodeToString([]byte("ops:guess-"+strconv.FormatInt(n, 10))))
				if err := client.Do(req, resp); err != nil {
					firstErr.CompareAndSwap(nil, err)
					return
				}
				switch resp.StatusCode() {
				case fasthttp.StatusUnauthorized:
					fl.refused.Add(1)
				case fasthttp.StatusServiceUnavailable:
					fl.busy.Add(1)
				default:
					firstErr.CompareAndSwap(nil, fmt.Errorf("a wrong password got %d", resp.StatusCode()))
					return
				}
			}
		}()
	}
	return func() error {
		close(done)
		wg.Wait()
		fl.elapsed += time.Since(start)
		client.CloseIdleConnections()
		err, _ := firstErr.Load().(error)
		return err
	}
}

// loadResult is what timedLoad measured: answers, time and latencies.
type loadResult struct {
	n         int
	elapsed   time.Duration
	latencies []time.Duration
}

func (r *loadResult) add(o *loadResult) {
	r.n += o.n
	r.elapsed += o.elapsed
	r.latencies = append(r.latencies, o.latencies...)
}

func (r *loadResult) rate() float64 { return float64(r.n) / r.elapsed.Seconds() }

func (r *loadResult) p99() time.Duration {
	slices.Sort(r.latencies)
	return r.latencies[len(r.latencies)*99/100]
}

// timedLoad sends requests from conc workers for d and returns the 200
// answers and their latencies. Any other answer is an error.
func timedLoad(addr string, conc int, d time.Duration, build func(n int, req *fasthttp.Request)) (*loadResult, error) {
	client := &fasthttp.HostClient{Addr: addr, MaxConns: conc, ReadTimeout: 30 * time.Second, WriteTimeout: 30 * time.Second}
	defer client.CloseIdleConnections()
	var next atomic.Int64
	var firstErr atomic.Value
	latencies := make([][]time.Duration, conc)
	start := time.Now()
	deadline := start.Add(d)
	var wg sync.WaitGroup
	for w := range conc {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req, resp := fasthttp.AcquireRequest(), fasthttp.AcquireResponse()
			defer fasthttp.ReleaseRequest(req)
			defer fasthttp.ReleaseResponse(resp)
			for time.Now().Before(deadline) && firstErr.Load() == nil {
				req.Reset()
				build(int(next.Add(1)-1), req)
				req.SetHost(addr)
				sent := time.Now()
				if err := client.Do(req, resp); err != nil {
					firstErr.CompareAndSwap(nil, err)
					return
				}
				if resp.StatusCode() != fasthttp.StatusOK {
					firstErr.CompareAndSwap(nil, fmt.Errorf("%s %s: status %d", req.Header.Method(), req.URI().Path(), resp.StatusCode()))
					return
				}
				latencies[w] = append(latencies[w], time.Since(sent))
			}
		}()
	}
	wg.Wait()
	if err, _ := firstErr.Load().(error); err != nil {
		return nil, err
	}
	r := &loadResult{elapsed: time.Since(start), latencies: slices.Concat(latencies...)}
	r.n = len(r.latencies)
	if r.n == 0 {
		return nil, fmt.Errorf("no answer in %v", d)
	}
	return r, nil
}
