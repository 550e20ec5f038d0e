package caddymodule

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"sync"
	"testing"

	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"go.uber.org/zap"

	"github.com/eurekagate/eurekagate/eureka"
	"github.com/eurekagate/eurekagate/internal/fixture"
	"github.com/eurekagate/eurekagate/internal/testkit"
	"github.com/eurekagate/eurekagate/routing"
	"github.com/eurekagate/eurekagate/traffic"
)

// BenchmarkGatewayServeHTTP is eureka_gateway's handler on the path of
// the gateway study's requests with every feature of ours on: the 20
// rules of fixture.TwentyRules (the matching one last), its headers, a
// new request id, the traffic counters and Caddy's access log fields,
// carried by the gateway's own transport to an instance on loopback that
// answers each request with fixed bytes (allocating nothing, so that
// allocs/op are the gateway's). Each iteration also makes what Caddy's
// server hands the handler (the request, its vars and log fields), the
// same few allocations before and after any change of the gateway.
func BenchmarkGatewayServeHTTP(b *testing.B) {
	g := benchGateway(b)
	tmpl, err := http.NewRequest(http.MethodGet, "http://gateway.test/svc/x", nil)
	if err != nil {
		b.Fatal(err)
	}
	tmpl.RemoteAddr = "127.0.0.1:40000"
	for _, h := range fixture.RuleHeaders {
		tmpl.Header.Set(h[0], h[1])
	}
	tmpl.Header.Set("User-Agent", "wrk")
	w := &discardWriter{h: http.Header{}}
	b.ReportAllocs()
	for b.Loop() {
		clear(w.h)
		w.status = 0
		if err := g.ServeHTTP(w, caddyRequest(tmpl), nil); err != nil || w.status != http.StatusOK {
			b.Fatalf("status %d, error %v", w.status, err)
		}
	}
}

// caddyRequest is tmpl as Caddy's server hands it to a handler: a copy
// of its own, with the vars (an untrusted client at 127.0.0.1) and the
// access log's extra fields in its context.
func caddyRequest(tmpl *http.Request) *http.Request {
	vars := map[string]any{caddyhttp.TrustedProxyVarKey: false, caddyhttp.ClientIPVarKey: "127.0.0.1"}
	ctx := context.WithValue(context.Background(), caddyhttp.VarsCtxKey, vars)
	ctx = context.WithValue(ctx, caddyhttp.ExtraLogFieldsCtxKey, new(caddyhttp.ExtraLogFields))
	return tmpl.Clone(ctx)
}

// benchGateway is eureka_gateway as Provision makes it, with the study's
// rules, over SVC's two versions, both at an instance on loopback.
func benchGateway(b *testing.B) *Gateway {
	addr := fixedAnswerServer(b)
	var svc []*eureka.InstanceInfo
	for _, v := range []string{"2.0", "2.1"} {
		i := fixture.Inst("SVC", "backend-"+v)
		i.HostName, i.Port.Number, i.Metadata = "127.0.0.1", addr.Port, map[string]string{"version": v}
		svc = append(svc, i)
	}
	g := &Gateway{log: zap.NewNop(), traffic: traffic.New()}
	cfg, err := g.routerConfig()
	if err != nil {
		b.Fatal(err)
	}
	if cfg.Rules, err = routing.ParseRules("rules.yaml", []byte(fixture.TwentyRules())); err != nil {
		b.Fatal(err)
	}
	cfg.Instances = fixedInstances{"SVC": svc}
	if g.router, err = routing.New(cfg); err != nil {
		b.Fatal(err)
	}
	if g.own, err = newOwnTransport(g.router.Config(), nil); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { g.own.close() }) // before the instance's cleanup waits for its connections
	return g
}

// fixedInstances is an Instancer over fixed lists, all UP.
type fixedInstances map[string][]*eureka.InstanceInfo

func (f fixedInstances) Instances(app string) []*eureka.InstanceInfo    { return f[app] }
func (f fixedInstances) AllInstances(app string) []*eureka.InstanceInfo { return f[app] }

// fixedAnswerServer is an instance on loopback that answers every
// request (without a body) with the same 200, allocating nothing per
// request; its connections end when the gateway closes them, and the
// cleanup waits for them.
func fixedAnswerServer(b *testing.B) *net.TCPAddr {
	var conns sync.WaitGroup
	b.Cleanup(conns.Wait) // after RawServer's cleanup and the gateway's close
	answer := []byte("HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 2\r\n\r\nok")
	return testkit.RawServer(b, func(c net.Conn) {
		conns.Go(func() {
			defer c.Close()
			br := bufio.NewReader(c)
			for {
				line, err := br.ReadSlice('\n')
				if err != nil {
					return
				}
				if len(bytes.TrimRight(line, "\r\n")) == 0 {
					if _, err := c.Write(answer); err != nil {
						return
					}
				}
			}
		})
	})
}

// discardWriter is a client's response writer that keeps the status and
// drops the body, copying it with a pooled buffer as net/http's server
// does (ReadFrom).
type discardWriter struct {
	h      http.Header
	status int
}

func (w *discardWriter) Header() http.Header { return w.h }

func (w *discardWriter) WriteHeader(status int) {
	if w.status == 0 {
		w.status = status
	}
}

func (w *discardWriter) Write(p []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return len(p), nil
}

func (w *discardWriter) ReadFrom(r io.Reader) (int64, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return io.Copy(io.Discard, r)
}
