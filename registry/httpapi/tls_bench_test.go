package httpapi

import (
	"crypto/tls"
	"testing"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/eurekagate/eurekagate/internal/testkit"
	"github.com/eurekagate/eurekagate/registry"
)

// BenchmarkRenewTLS measures heartbeats (PUT renew) through the standalone
// server over plain HTTP and over TLS with keep-alive, 8 connections each,
// and reports the TLS throughput as a share of the plain one
// (tls/plain; the target is 0.8 or more).
func BenchmarkRenewTLS(b *testing.B) {
	ca := testkit.NewCA(b, b.TempDir(), "ca")
	cert, key := ca.Issue(b, "server")
	serverTLS, err := TLSFiles(cert, key, "")
	if err != nil {
		b.Fatal(err)
	}
	run := func(tlsCfg *tls.Config) float64 {
		s := registry.New(registry.Config{})
		mustRegister(b, s, inst("A", "x"), false)
		srv := NewServer(NewAPI(s, APIConfig{}), ServerConfig{Addr: "127.0.0.1:0", TLS: tlsCfg})
		if err := srv.Start(); err != nil {
			b.Fatal(err)
		}
		defer srv.Stop(b.Context())
		scheme := "http://"
		if tlsCfg != nil {
			scheme = "https://"
		}
		url := scheme + srv.Addr().String() + "/eureka/apps/A/x"
		c := &fasthttp.Client{TLSConfig: &tls.Config{RootCAs: ca.Pool}, MaxConnsPerHost: 8}
		defer c.CloseIdleConnections()
		const workers = 8
		start := time.Now()
		testkit.InParallel(workers, func(w int) {
			req, resp := fasthttp.AcquireRequest(), fasthttp.AcquireResponse()
			defer fasthttp.ReleaseRequest(req)
			defer fasthttp.ReleaseResponse(resp)
			req.Header.SetMethod("PUT")
			req.SetRequestURI(url)
			for n := w; n < b.N; n += workers {
				if err := c.Do(req, resp); err != nil || resp.StatusCode() != 200 {
					b.Errorf("renew: %d %v", resp.StatusCode(), err)
					return
				}
			}
		})
		return float64(b.N) / time.Since(start).Seconds()
	}
	b.ResetTimer()
	plain := run(nil)
	overTLS := run(serverTLS)
	b.ReportMetric(plain, "plain-renews/s")
	b.ReportMetric(overTLS, "tls-renews/s")
	b.ReportMetric(overTLS/plain, "tls/plain")
}
