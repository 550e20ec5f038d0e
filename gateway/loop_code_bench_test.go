package gateway

import (
	"bufio"
	"bytes"
	"net"
	"testing"

	"github.com/valyala/fasthttp"

	"github.com/eurekagate/eurekagate/registry/regions"
)

// BenchmarkLoopsCode is the Go code a loop runs for one proxied request,
// without the sockets: the request's parse, checks, route and header
// edits, the request's bytes for the instance, the response's parse and
// bytes for the client, the observation and the access log's line. The
// same request and gateways as BenchmarkLoopsProxy's, whose time the
// kernel's loopback path and the scheduling dominate.
//
//	go test ./gateway -run XXX -bench LoopsCode -benchmem
func BenchmarkLoopsCode(b *testing.B) {
	b.Run("bare", func(b *testing.B) { benchLoopsCode(b, false) })
	b.Run("every-feature", func(b *testing.B) { benchLoopsCode(b, true) })
}

func benchLoopsCode(b *testing.B, every bool) {
	lp, cc := codeLoop(b, every)
	header, resp := codeRequest(), codeResponse
	hl := headerLen(resp)
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		lp.clock() // the client's event
		ex := lp.exchange()
		if !lp.start(cc, ex, header) {
			b.Fatal("the loop would not serve the request")
		}
		lp.attempt(ex)
		lp.request(ex)
		lp.clock() // the instance's event
		h, err := lp.responseHeader(resp[:hl])
		if err != nil {
			b.Fatal(err)
		}
		lp.response(ex, h, resp[hl:])
		lp.finish(ex)
	}
}

// BenchmarkLoopsStrip is the hop-by-hop scans and removals of
// BenchmarkLoopsCode's request and response, which have no field to
// remove.
//
//	go test ./gateway -run XXX -bench LoopsStrip -benchmem -cpu 1
func BenchmarkLoopsStrip(b *testing.B) {
	var h fasthttp.RequestHeader
	var r fasthttp.ResponseHeader
	if h.Read(bufio.NewReader(bytes.NewReader(codeRequest()))) != nil || r.Read(bufio.NewReader(bytes.NewReader(codeResponse))) != nil {
		b.Fatal("the request or the response does not parse")
	}
	var s hopSet
	b.ReportAllocs()
	for range b.N {
		stripRequest(&h, &s)
		stripResponse(&r, false, &s)
	}
}

// codeRequest is the benchmarks' request: the gateway study's, with a
// User-Agent.
func codeRequest() []byte { return studyRequest("User-Agent: wrk\r\n") }

// codeResponse is the benchmarks' response, as fasthttp answers "ok".
var codeResponse = []byte("HTTP/1.1 200 OK\r\nServer: fasthttp\r\nDate: Sun, 06 Dec 2026 17:00:00 GMT\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: 2\r\n\r\nok")

// codeLoop returns a loop's state and a client connection on it, of a
// gateway (bare, or with every feature on: 20 rules and an access log)
// routing SVC to instances that are never dialled.
func codeLoop(b *testing.B, every bool) (*loopState, *clientConn) {
	cfg, store := benchGateway(b, every, 9)
	cfg.Routing.Instances = regions.InstancesOf(store)
	g, err := New(cfg)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { g.Close() })
	lp := &loopState{l: &loops{g: g, n: 1}}
	lp.br = bufio.NewReaderSize(&lp.rd, bufferSize)
	cc := &clientConn{lp: lp, remote: &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 40000}}
	cc.ip = appendClientIP(nil, cc.remote)
	return lp, cc
}
