package main

import (
	"context"
	"encoding/base64"
	"flag"
	"fmt"
	"io"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/valyala/fasthttp"

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
	rounds     int // alone and flooded phases, in turn
}

var defaultAuthFlood = authFloodConfig{d: 3 * time.Second, conc: 64, floodConns: 16, instances: 1000, rounds: 3}

func authFloodCommand(fs *flag.FlagSet) func(io.Writer, *record) error {
	c := defaultAuthFlood
	fs.DurationVar(&c.d, "duration", c.d, "how long each phase runs")
	fs.IntVar(&c.conc, "concurrency", c.conc, "authenticated heartbeats in flight")
	fs.IntVar(&c.floodConns, "flood-conns", c.floodConns, "connections of the client that floods wrong passwords")
	fs.IntVar(&c.rounds, "rounds", c.rounds, "rounds of an alone and a flooded phase")
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
		} {
			rec.add(f.Name, f.Value, f.Unit)
		}
		return nil
	}
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
