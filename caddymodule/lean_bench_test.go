package caddymodule

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2/modules/caddyhttp"

	"github.com/eurekagate/eurekagate/internal/fixture"
	"github.com/eurekagate/eurekagate/routing"
)

// BenchmarkAttempt is one attempt of a GET, as eureka_gateway makes it
// (prepareOutgoing's headers, a request context that can end), to an
// instance on loopback answering 200 with 2 bytes: on the lean client
// and on net/http's Transport. The instance's work is in both.
func BenchmarkAttempt(b *testing.B) {
	inst := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "ok")
	}))
	defer inst.Close()
	addr := inst.Listener.Addr().String()
	t, err := newOwnTransport(routing.Config{}.WithDefaults(), nil)
	if err != nil {
		b.Fatal(err)
	}
	defer t.close()
	for _, c := range []struct {
		name    string
		attempt func(w *statusWriter, r *http.Request) error
	}{
		{"lean", func(w *statusWriter, r *http.Request) error { return t.lean.attempt(w, r, nil, addr) }},
		{"transport", func(w *statusWriter, r *http.Request) error { return t.roundTrip(w, r, nil, false, false, addr) }},
	} {
		b.Run(c.name, func(b *testing.B) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			r := httptest.NewRequestWithContext(ctx, "GET", "http://gw.example/svc/x", nil)
			r.Header.Set("X-Canary", "1")
			r.Header.Set("X-User-Id", "user-42")
			r.Header.Set("Cookie", "session=abc")
			prepareOutgoing(r, false, false, nil)
			out := &discardWriter{h: http.Header{}}
			b.ReportAllocs()
			for b.Loop() {
				clear(out.h)
				w := &statusWriter{ResponseWriterWrapper: &caddyhttp.ResponseWriterWrapper{ResponseWriter: out}}
				if err := c.attempt(w, r); err != nil || w.status != 200 {
					b.Fatalf("%d %v", w.status, err)
				}
			}
		})
	}
}

// BenchmarkLeanWriteRequest is the lean client writing the head of a GET
// as eureka_gateway sends it (the study's headers, prepareOutgoing's and
// the gateway's own) to a connection that takes every byte at once: the
// work of writeRequest alone.
func BenchmarkLeanWriteRequest(b *testing.B) {
	r := httptest.NewRequest("GET", "http://gw.example/x?a=1", nil)
	for _, h := range fixture.RuleHeaders {
		r.Header.Set(h[0], h[1])
	}
	r.Header.Set("Accept", "*/*")
	r.RemoteAddr = "127.0.0.1:40000"
	var vals headerValues
	setRoute(r.Header, nil, &vals)
	setRequestID(r.Header, false, &vals)
	vals.put(r.Header, forwardedPrefix, "/svc")
	prepareOutgoing(r, false, false, &vals)
	c := newLeanConn(takingConn{}, "127.0.0.1:8080", time.Minute)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := c.writeRequest(r, &vals); err != nil {
			b.Fatal(err)
		}
	}
}

// takingConn is a connection that takes whatever is written to it.
type takingConn struct{ net.Conn }

func (takingConn) Write(p []byte) (int, error)      { return len(p), nil }
func (takingConn) SetWriteDeadline(time.Time) error { return nil }
func (takingConn) SetReadDeadline(time.Time) error  { return nil }

// BenchmarkLeanHead is the head of an ordinary answer (a Node instance's:
// five fields, Connection: keep-alive among them) read by leanHead and by
// http.ReadResponse, from a reader holding it whole.
func BenchmarkLeanHead(b *testing.B) {
	raw := []byte("HTTP/1.1 200 OK\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: 2\r\n" +
		"Date: Sun, 06 Dec 2026 20:00:00 GMT\r\nConnection: keep-alive\r\nKeep-Alive: timeout=5\r\n\r\n{}")
	req := &http.Request{Method: http.MethodGet}
	src := bytes.NewReader(raw)
	br := bufio.NewReaderSize(src, leanBufferSize)
	var h leanHead
	for _, c := range []struct {
		name string
		read func() (*http.Response, error)
	}{
		{"leanHead", func() (*http.Response, error) { return h.read(br, req) }},
		{"ReadResponse", func() (*http.Response, error) { return http.ReadResponse(br, req) }},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				src.Reset(raw)
				br.Reset(src)
				if res, err := c.read(); err != nil || res == nil || res.StatusCode != 200 {
					b.Fatal(res, err)
				}
			}
		})
	}
}
