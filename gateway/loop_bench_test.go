package gateway

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"testing"

	"github.com/valyala/fasthttp"

	"github.com/eurekagate/eurekagate/internal/fixture"
	"github.com/eurekagate/eurekagate/registry"
	"github.com/eurekagate/eurekagate/routing"
)

// BenchmarkLoopsProxy is a proxied request through the event loops over
// loopback, one kept-alive client connection at a time, to a fasthttp
// backend that answers "ok": bare (the defaults, as -gateway alone) and
// with every feature on (the gateway study's 20 rules, the matching one
// last, and an access log). The client and the backend allocate nothing
// per request, so allocs/op is the gateway's.
//
//	go test ./gateway -run XXX -bench LoopsProxy -benchmem
func BenchmarkLoopsProxy(b *testing.B) {
	b.Run("bare", func(b *testing.B) { benchLoopsProxy(b, false) })
	b.Run("every-feature", func(b *testing.B) { benchLoopsProxy(b, true) })
}

func benchLoopsProxy(b *testing.B, every bool) {
	roundTrip := startLoopsProxy(b, every)
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if err := roundTrip(); err != nil {
			b.Fatal(err)
		}
	}
}

// A request the loops proxy allocates nothing on the gateway's side, with
// every feature on: what a request costs the collector is paid by each.
func TestLoopsProxyAllocatesNothing(t *testing.T) {
	roundTrip := startLoopsProxy(t, true)
	var err error
	allocs := testing.AllocsPerRun(2000, func() {
		if e := roundTrip(); e != nil {
			err = e
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	// Under one on average: the access log's batches and the loops' tick
	// allocate now and then.
	if allocs >= 0.5 {
		t.Errorf("%.2f allocations per request", allocs)
	}
}

// startLoopsProxy starts a fasthttp backend answering "ok" and the gateway
// in front of it (bare, or with every feature on), and returns a round
// trip of one request on one kept-alive connection, which allocates
// nothing itself.
func startLoopsProxy(b testing.TB, every bool) (roundTrip func() error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	backend := &fasthttp.Server{Handler: func(ctx *fasthttp.RequestCtx) { ctx.WriteString("ok") }}
	go backend.Serve(ln)
	b.Cleanup(func() { backend.Shutdown() })

	cfg, store := benchGateway(b, every, ln.Addr().(*net.TCPAddr).Port)
	base, _, _ := startServer(b, cfg, ServerConfig{}, store)

	conn, err := net.Dial("tcp", strings.TrimPrefix(base, "http://"))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { conn.Close() })
	raw := studyRequest("")
	br := bufio.NewReader(conn)
	body := make([]byte, 64)
	return func() error {
		if _, err := conn.Write(raw); err != nil {
			return err
		}
		return readOK(br, body)
	}
}

// benchGateway returns the config of the benchmarks' gateway, bare or
// with every feature on (the gateway study's 20 rules, the matching one
// last, and an access log), and its registry, where SVC's instances
// (versions 2.0 and 2.1 with the rules) listen on port of 127.0.0.1.
func benchGateway(b testing.TB, every bool, port int) (Config, *registry.Store) {
	store := registry.New(registry.Config{})
	cfg := Config{}
	versions := []string{""}
	if every {
		rules, err := routing.ParseRules("bench rules", []byte(fixture.TwentyRules()))
		if err != nil {
			b.Fatal(err)
		}
		cfg.Routing.Rules = rules
		cfg.AccessLog = io.Discard
		versions = []string{"2.0", "2.1"}
	}
	for _, v := range versions {
		i := fixture.Inst("SVC", "backend-"+v)
		i.HostName, i.Port.Number = "127.0.0.1", port
		if v != "" {
			i.Metadata = map[string]string{"version": v}
		}
		if err := store.Register(i, false); err != nil {
			b.Fatal(err)
		}
	}
	return cfg, store
}

// studyRequest is the gateway study's request, with the fields head
// (lines ending in CRLF) after its Host.
func studyRequest(head string) []byte {
	var req strings.Builder
	req.WriteString("GET /svc/x HTTP/1.1\r\nHost: gateway\r\n" + head)
	for _, h := range fixture.RuleHeaders {
		req.WriteString(h[0] + ": " + h[1] + "\r\n")
	}
	req.WriteString("\r\n")
	return []byte(req.String())
}

// readOK reads one response of status 200 and its body, into body,
// without allocating.
func readOK(br *bufio.Reader, body []byte) error {
	line, err := br.ReadSlice('\n')
	if err != nil {
		return err
	}
	if !bytes.HasPrefix(line, []byte("HTTP/1.1 200 ")) {
		return fmt.Errorf("answered %q", line)
	}
	n := 0
	for {
		line, err = br.ReadSlice('\n')
		if err != nil {
			return err
		}
		if len(line) <= 2 {
			break
		}
		if k, v, ok := bytes.Cut(line, []byte(":")); ok && bytes.EqualFold(k, []byte("Content-Length")) {
			n, _ = strconv.Atoi(string(bytes.TrimSpace(v)))
		}
	}
	_, err = io.ReadFull(br, body[:n])
	return err
}
