package main

import (
	"context"
	"encoding/base64"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/valyala/fasthttp"
	"golang.org/x/crypto/bcrypt"

	"github.com/eurekagate/eurekagate/internal/fixture"
	"github.com/eurekagate/eurekagate/registry"
	"github.com/eurekagate/eurekagate/registry/httpapi"
)

// authFloodConfig sizes the authflood study.
type authFloodConfig struct {
	d          time.Duration // each phase
	conc       int           // heartbeat clients in flight
	floodConns int           // the flooding client's connections
	instances  int
	rounds     int    // alone and flooded phases, in turn
	services   int    // services that start during the flood (authflood_arrivals.go)
	baseline   string // a cmd/eureka of an earlier commit to run the arrivals against too
	eureka     string // this tree's cmd/eureka for them; "": built
}

var defaultAuthFlood = authFloodConfig{d: 3 * time.Second, conc: 64, floodConns: 16, instances: 1000, rounds: 3, services: 20}

func authFloodCommand(fs *flag.FlagSet) func(io.Writer, *record) error {
	c := defaultAuthFlood
	fs.DurationVar(&c.d, "duration", c.d, "how long each phase runs")
	fs.IntVar(&c.conc, "concurrency", c.conc, "authenticated heartbeats in flight")
	fs.IntVar(&c.floodConns, "flood-conns", c.floodConns, "connections of the client that floods wrong passwords")
	fs.IntVar(&c.rounds, "rounds", c.rounds, "rounds of an alone and a flooded phase")
	fs.IntVar(&c.services, "services", c.services, "services that start with credentials never seen during the flood, from 127.0.0.2 on")
	fs.StringVar(&c.baseline, "baseline", "", "a cmd/eureka built from an earlier commit (git worktree add DIR REV; go build -o BIN ./cmd/eureka there) whose scheduling of credential checks the services' arrivals are also run against, in a process of its own; this tree's then runs in one too")
	fs.StringVar(&c.eureka, "eureka", "", "with -baseline, this tree's cmd/eureka binary (default: built into a temporary directory)")
	return func(out io.Writer, rec *record) error {
		end := meter{rec: rec}.phase("heartbeats alone and flooded")
		res, err := runAuthFlood(c, out)
		end()
		if err != nil {
			return err
		}
		for _, f := range []figure{
			{"heartbeats.alone", res.alone, "/s"}, {"heartbeats.alone.p99", ms(res.aloneP99), "ms"},
			{"heartbeats.flooded", res.flooded, "/s"}, {"heartbeats.flooded.p99", ms(res.floodedP99), "ms"},
			{"flood.rate", res.floodRate, "/s"}, {"flood.refused", res.floodRefused, "/s"}, {"flood.busy", res.floodBusy, "/s"},
			{"bcrypt.check", ms(res.check), "ms"},
		} {
			rec.add(f.Name, f.Value, f.Unit)
		}
		for n, a := range res.arrivals {
			prefix := "arrivals."
			if n > 0 {
				prefix = "arrivals.baseline."
			}
			rec.add(prefix+"max", ms(a.max()), "ms")
			rec.add(prefix+"within1s", float64(a.within(time.Second)), "")
			rec.add(prefix+"heartbeats.p99", ms(a.heartbeats.answered.p99), "ms")
		}
		return nil
	}
}

// authFloodResult is what the study measured.
type authFloodResult struct {
	alone, flooded       float64 // authenticated heartbeats per second
	aloneP99, floodedP99 time.Duration
	floodRate            float64           // wrong-password requests answered per second
	floodRefused         float64           // of which checked and refused (401)
	floodBusy            float64           // of which turned away unchecked (503)
	check                time.Duration     // one bcrypt check at the default cost
	arrivals             []*arrivalsResult // this tree's, then the baseline's
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
		if err := store.Register(fixture.SampleInstance(i), false); err != nil {
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
		i := fixture.SampleInstance(n)
		paths[n] = "/eureka/apps/" + i.App + "/" + i.InstanceID + "?status=UP&lastDirtyTimestamp=" + strconv.FormatInt(i.LastDirtyTimestamp, 10)
	}
	valid := "Basic " + base64.StdEncoding.EncodeToString([]byte("ops:s3cret"))
	heartbeats := func(d time.Duration) (*loadResult, error) {
		return load(loadSpec{addr: addr, conc: c.conc, d: d, latencies: true, build: func(n int, req *fasthttp.Request) {
			req.Header.SetMethod("PUT")
			req.SetRequestURI(paths[n%len(paths)])
			req.Header.Set("Authorization", valid)
		}})
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

	// What a restart costs: no outcome is kept, so each distinct
	// credential is checked again, one slot's worth at a time.
	if res.check, err = bcryptCheckTime(bcrypt.DefaultCost); err != nil {
		return nil, err
	}
	slots := max(1, runtime.GOMAXPROCS(0)/4)
	fmt.Fprintf(out, "%-52s %12v      (%d slot(s) at GOMAXPROCS %d)\n", "one bcrypt check at cost 10", res.check.Round(time.Millisecond), slots, runtime.GOMAXPROCS(0))
	for _, n := range []int{20, 100, 1000} {
		fmt.Fprintf(out, "%-52s %12v\n", fmt.Sprintf("  after a restart, %d distinct credentials checked in", n), (time.Duration(n) * res.check / time.Duration(slots)).Round(time.Millisecond))
	}

	if c.services > 0 {
		users, err := arrivalsUsers(c.services)
		if err != nil {
			return nil, err
		}
		if c.baseline == "" {
			a, err := runArrivalsInProcess(c, users)
			if err != nil {
				return nil, err
			}
			res.arrivals = append(res.arrivals, a)
		} else {
			dir, err := os.MkdirTemp("", "authflood")
			if err != nil {
				return nil, err
			}
			defer os.RemoveAll(dir)
			bin, _, err := eurekaBinary(context.Background(), dir, c.eureka)
			if err != nil {
				return nil, err
			}
			for _, s := range []struct{ name, bin string }{{"this tree", bin}, {"baseline", c.baseline}} {
				a, err := runArrivalsProcess(c, users, s.name, s.bin)
				if err != nil {
					return nil, err
				}
				res.arrivals = append(res.arrivals, a)
			}
		}
		printArrivals(out, c, res.arrivals)
	}
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
	stop := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		r, err := load(loadSpec{addr: addr, conc: conns, until: stop, build: func(_ int, req *fasthttp.Request) {
			n := fl.next.Add(1)
			req.Header.SetMethod("PUT")
			req.SetRequestURI(paths[int(n)%len(paths)])
			req.Header.Set("Authorization", "Basic "+base64.StdEncoding.EncodeToString([]byte("ops:guess-"+strconv.FormatInt(n, 10))))
		}, check: func(status int) error {
			switch status {
			case fasthttp.StatusUnauthorized:
				fl.refused.Add(1)
			case fasthttp.StatusServiceUnavailable:
				fl.busy.Add(1)
			default:
				return fmt.Errorf("a wrong password got %d", status)
			}
			return nil
		}})
		if r != nil {
			fl.elapsed += r.elapsed
		}
		done <- err
	}()
	return func() error {
		close(stop)
		return <-done
	}
}
