package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"runtime"
	"slices"
	"time"

	"github.com/hudl/fargo"
	logging "github.com/op/go-logging"

	"github.com/eurekagate/eurekagate/discovery"
	"github.com/eurekagate/eurekagate/internal/fixture"
	"github.com/eurekagate/eurekagate/registry"
	"github.com/eurekagate/eurekagate/registry/httpapi"
)

// fetchResult is what one client's full fetches measured.
type fetchResult struct {
	name   string
	median time.Duration // time per full fetch
	mean   time.Duration
	best   time.Duration
	heap   uint64 // heap held by the fetched registry
}

// fetchCommand is "eurekabench fetch": our registry in this process on
// loopback with n sample instances, fetched in full by discovery.Client
// and by hudl/fargo (JSON and XML), rounds times each. The median is the
// figure to read on a shared machine, where another process can stall any
// one fetch.
func fetchCommand(fs *flag.FlagSet) func(io.Writer, *record) error {
	n := fs.Int("instances", 10000, "registered instances")
	rounds := fs.Int("rounds", 21, "full fetches per client")
	return func(out io.Writer, rec *record) error { return runFetch(*n, *rounds, out, rec) }
}

// runFetch fetches, prints the table and records each client's figures
// under its name.
func runFetch(n, rounds int, out io.Writer, rec *record) error {
	end := meter{rec: rec}.phase("full fetches")
	res, err := benchFetch(n, rounds)
	end()
	if err != nil {
		return err
	}
	rec.add("instances", float64(n), "")
	for _, r := range res {
		rec.add(r.name+".median", ms(r.median), "ms")
		rec.add(r.name+".mean", ms(r.mean), "ms")
		rec.add(r.name+".best", ms(r.best), "ms")
		rec.add(r.name+".heap", float64(r.heap), "B")
	}
	fmt.Fprintf(out, "eurekabench fetch: %d CPUs (GOMAXPROCS %d), %d instances, %d full fetches per client\n\n",
		runtime.NumCPU(), runtime.GOMAXPROCS(0), n, rounds)
	fmt.Fprintf(out, "%-28s %12s %12s %12s %12s\n", "client", "median", "mean", "best", "heap held")
	for _, r := range res {
		fmt.Fprintf(out, "%-28s %9.1f ms %9.1f ms %9.1f ms %9.1f MB\n", r.name, ms(r.median), ms(r.mean), ms(r.best), float64(r.heap)/1e6)
	}
	fmt.Fprintln(out)
	ours := res[0]
	for _, r := range res[1:] {
		fmt.Fprintf(out, "%s: %.1fx the median time of discovery.Client (target >= 5x), %.1fx its mean, %.1fx its heap\n", r.name,
			float64(r.median)/float64(ours.median), float64(r.mean)/float64(ours.mean), float64(r.heap)/float64(ours.heap))
	}
	return nil
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func us(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }

func benchFetch(n, rounds int) ([]fetchResult, error) {
	logging.SetLevel(logging.WARNING, "fargo")
	store := registry.New(registry.Config{})
	for k := range n {
		if err := store.Register(fixture.SampleInstance(k), false); err != nil {
			return nil, err
		}
	}
	srv := httpapi.NewServer(httpapi.NewAPI(store, httpapi.APIConfig{}), httpapi.ServerConfig{Addr: "127.0.0.1:0"})
	if err := srv.Start(); err != nil {
		return nil, err
	}
	defer srv.Stop(context.Background())
	base := "http://" + srv.Addr().String() + "/eureka/"

	// discovery.Client, not started: with deltas off, each Refresh is a
	// full fetch (GET apps/, JSON, gzip) decoded into its local registry.
	newClient := func() (*discovery.Client, error) {
		return discovery.New(discovery.Config{ServiceURLs: []string{base}, DisableDelta: true})
	}
	client, err := newClient()
	if err != nil {
		return nil, err
	}
	defer client.Stop(context.Background())
	ours := func(c *discovery.Client) (any, int, error) {
		err := c.Refresh()
		total := 0
		for _, a := range c.Applications().Applications {
			total += len(a.Instances)
		}
		return c, total, err
	}
	fargoFetch := func(useJSON bool) func() (any, int, error) {
		return func() (any, int, error) {
			conn := fargo.NewConn(base[:len(base)-1])
			conn.UseJson = useJSON
			apps, err := conn.GetApps()
			total := 0
			for _, a := range apps {
				total += len(a.Instances)
			}
			return apps, total, err
		}
	}
	clients := []struct {
		fetch, fresh func() (any, int, error)
	}{
		{func() (any, int, error) { return ours(client) }, func() (any, int, error) {
			c, err := newClient()
			if err != nil {
				return nil, 0, err
			}
			return ours(c)
		}},
		{fargoFetch(true), fargoFetch(true)},
		{fargoFetch(false), fargoFetch(false)},
	}
	res := []fetchResult{{name: "discovery.Client (JSON)"}, {name: "hudl/fargo GetApps (JSON)"}, {name: "hudl/fargo GetApps (XML)"}}

	// One untimed fetch each: the server builds and gzips its payloads on
	// the first. Then the clients take turns, so that each sees the same
	// load on a shared machine; every fetch starts after a collection.
	times := make([][]time.Duration, len(clients))
	for k, c := range clients {
		if _, _, err := c.fetch(); err != nil {
			return nil, fmt.Errorf("%s: %v", res[k].name, err)
		}
	}
	for range rounds {
		for k, c := range clients {
			runtime.GC()
			start := time.Now()
			_, got, err := c.fetch()
			d := time.Since(start)
			if err != nil {
				return nil, fmt.Errorf("%s: %v", res[k].name, err)
			}
			if got != n {
				return nil, fmt.Errorf("%s: %d of %d instances", res[k].name, got, n)
			}
			times[k] = append(times[k], d)
		}
	}
	for k, c := range clients {
		var total time.Duration
		for _, d := range times[k] {
			total += d
		}
		slices.Sort(times[k])
		r := &res[k]
		r.median, r.mean, r.best = times[k][len(times[k])/2], total/time.Duration(rounds), times[k][0]
		if r.heap, err = heldHeap(c.fresh); err != nil {
			return nil, fmt.Errorf("%s: %v", r.name, err)
		}
	}
	return res, nil
}

// heldHeap is the heap that fresh holds: what is live after a collection,
// less what was live before it made a new client and fetched.
func heldHeap(fresh func() (any, int, error)) (uint64, error) {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&before)
	held, _, err := fresh()
	if err != nil {
		return 0, err
	}
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(held)
	if c, ok := held.(*discovery.Client); ok {
		c.Stop(context.Background())
	}
	if after.HeapAlloc < before.HeapAlloc {
		return 0, nil
	}
	return after.HeapAlloc - before.HeapAlloc, nil
}
