package caddymodule

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"sync"

	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp/reverseproxy"

	"github.com/eurekagate/eurekagate/balancer"
	"github.com/eurekagate/eurekagate/routing"
)

// What eureka_gateway needs around each attempt that reverse_proxy
// carries: whether the response began, how the attempt failed, and a body
// that can be sent again.

// statusWriter notes the status of the response the client is sent, for
// the traffic counters and for the attempts: once it has one, the
// request is answered and cannot go elsewhere. An informational answer
// (100 Continue, 103 Early Hints) is not the response: the instance may
// still fail the request after it.
type statusWriter struct {
	*caddyhttp.ResponseWriterWrapper
	status int
	// via holds the response's Via value, so that it costs no slice of
	// its own (the writer is not pooled: see exchange).
	via [1]string
}

func (w *statusWriter) WriteHeader(status int) {
	if w.status == 0 && (status >= 200 || status == http.StatusSwitchingProtocols) {
		w.status = status
	}
	w.ResponseWriterWrapper.WriteHeader(status)
}

func (w *statusWriter) Write(p []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriterWrapper.Write(p)
}

func (w *statusWriter) ReadFrom(r io.Reader) (int64, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriterWrapper.ReadFrom(r)
}

// wrote reports whether the response began.
func (w *statusWriter) wrote() bool { return w.status != 0 }

// failureOf classifies the error of an attempt that wrote nothing: a
// failed dial never reached the instance, a 504 is a timeout, the other
// errors of either transport (502) a broken connection. ok is false for a
// client that gave up (499) and for errors that are not the instance's.
func failureOf(err error) (balancer.Failure, bool) {
	var dial reverseproxy.DialError
	if errors.As(err, &dial) || isDialError(err) {
		return balancer.Refused, true
	}
	var he caddyhttp.HandlerError
	if !errors.As(err, &he) {
		return 0, false
	}
	switch he.StatusCode {
	case http.StatusGatewayTimeout:
		return balancer.TimedOut, true
	case http.StatusBadGateway:
		return balancer.Broken, true
	}
	return 0, false
}

// replayBody reads a request body of at most routing.MaxReplayBody bytes
// into a buffer of replayPool (returned, for the caller to put back), so
// that an idempotent request can be sent to another instance after a
// failure; a larger or chunked body streams, and its request is retried
// only when its instance never got it. resend says the request may be
// sent twice.
func replayBody(r *http.Request) (body *bytes.Buffer, resend bool, err error) {
	if !routing.Resendable(r.Method, true) {
		return nil, false, nil
	}
	if !hasBody(r) {
		return nil, true, nil
	}
	if r.ContentLength < 0 || r.ContentLength > routing.MaxReplayBody {
		return nil, false, nil
	}
	body = replayPool.Get().(*bytes.Buffer)
	body.Reset()
	if _, err := io.CopyN(body, r.Body, r.ContentLength); err != nil {
		replayPool.Put(body)
		return nil, false, err
	}
	return body, true, nil
}

// replayPool holds the buffers of replayable bodies.
var replayPool = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// plainAnswer answers with a short plain-text message, as the fasthttp
// gateway does.
func plainAnswer(w http.ResponseWriter, a routing.Answer) error {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(a.Status)
	_, err := w.Write([]byte(a.Reason))
	return err
}

// dropClaims removes the headers a client may not set (as the fasthttp
// gateway does): those of routing.ClientClaims unless the client is a
// trusted proxy (reverse_proxy itself replaces X-Forwarded-For, -Proto
// and -Host), and any whose name has an underscore (routing.HasUnderscore).
func dropClaims(r *http.Request, trusted bool) {
	if !trusted {
		for _, h := range routing.ClientClaims { // canonical names
			delete(r.Header, h)
		}
	}
	for k := range r.Header {
		if routing.HasUnderscore(k) {
			delete(r.Header, k)
		}
	}
	// No trailer fields either: they come after the headers were decided
	// on (the fasthttp gateway, like nginx, forwards none).
	r.Trailer = nil
	delete(r.Header, "Trailer")
}
