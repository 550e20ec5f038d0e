package discovery_test

import (
	"context"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/eurekagate/eurekagate/discovery"
	"github.com/eurekagate/eurekagate/eureka"
	"github.com/eurekagate/eurekagate/internal/testkit"
	"github.com/eurekagate/eurekagate/registry"
	"github.com/eurekagate/eurekagate/registry/httpapi"
)

// BenchmarkFullFetchOfAMillion has a discovery client with its defaults
// read the whole registry of one of our nodes holding a million instances
// (EUREKAGATE_BENCH_INSTANCES sets another count), over loopback: the
// registry our server serves at the scale one node holds must be one our
// own client reads. It reports the instances read.
//
//	go test ./discovery/ -run '^$' -bench FullFetchOfAMillion -benchtime 1x
func BenchmarkFullFetchOfAMillion(b *testing.B) {
	n := 1_000_000
	if v := os.Getenv("EUREKAGATE_BENCH_INSTANCES"); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil {
			b.Fatal(err)
		}
	}
	s := registry.New(registry.Config{DisableSelfPreservation: true})
	for k := range n {
		if err := s.Register(testkit.SampleInstance(k), false); err != nil {
			b.Fatal(err)
		}
	}
	// Built as Prebuild leaves it once the registry is quiet (a first
	// build at a million takes longer than the client's 8 s read timeout
	// on a loaded machine: Prebuild is what spares the fleet that wait).
	s.Documents().Full(eureka.FormatJSON).Gzip()
	srv := httpapi.NewServer(httpapi.NewAPI(s, httpapi.APIConfig{}), httpapi.ServerConfig{Addr: "127.0.0.1:0"})
	if err := srv.Start(); err != nil {
		b.Fatal(err)
	}
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		srv.Stop(ctx)
	}()
	url := "http://" + srv.Addr().String() + "/eureka/"
	b.ResetTimer()
	for range b.N {
		c, err := discovery.New(discovery.Config{ServiceURLs: []string{url}, DisableDelta: true})
		if err != nil {
			b.Fatal(err)
		}
		if err := c.Refresh(); err != nil {
			b.Fatalf("a full fetch of %d instances with the client's defaults: %v", n, err)
		}
		got := 0
		for _, a := range c.Applications().Applications {
			got += len(a.Instances)
		}
		if got != n {
			b.Fatalf("the client holds %d of %d instances", got, n)
		}
		b.ReportMetric(float64(got), "instances")
	}
}
