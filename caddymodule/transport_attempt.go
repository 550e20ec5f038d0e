package caddymodule

import (
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"

	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
)

// statusClientClosed is the status of a request whose client went away
// (nginx's 499), as reverse_proxy reports it.
const statusClientClosed = 499

// errAborted is returned when a response broke after it began: the
// client's connection is closed then (http.ErrAbortHandler, as
// reverse_proxy does), so that it does not take a partial response for a
// whole one.
var errAborted = errors.New("eureka_gateway: the response broke after it began")

// attempt sends r to the instance at addr (host:port) and writes its
// response to w, or returns the attempt's error in reverse_proxy's form
// (a caddyhttp.HandlerError: 502, 504 after a timeout, 499 when the
// client went away; a dialError within for a connection not made), which
// failureOf classifies. r's headers are prepareOutgoing's, with the
// pending fields of vals. The lean client carries what it can
// (leanClient.carries), net/http's Transport the rest.
func (t *ownTransport) attempt(w *statusWriter, r *http.Request, vals *headerValues, secure, upgrade bool, addr string) error {
	if !secure && !upgrade && t.lean.carries(r, addr) {
		return t.lean.attempt(w, r, vals, addr)
	}
	return t.roundTrip(w, r, vals, secure, upgrade, addr)
}

// roundTrip is attempt on net/http's Transport.
func (t *ownTransport) roundTrip(w *statusWriter, r *http.Request, vals *headerValues, secure, upgrade bool, addr string) error {
	out := r.WithContext(r.Context()) // a shallow copy, r's headers shared
	if vals.anyPending() {
		// On a copy: Caddy's placeholders after the gateway read r's.
		out.Header = r.Header.Clone()
		vals.addTo(out.Header)
	}
	u := *r.URL
	u.Scheme, u.Host = "http", addr
	if secure {
		u.Scheme = "https"
	}
	out.URL, out.RequestURI, out.Close = &u, "", false
	if out.ContentLength == 0 {
		out.Body = nil // no body: the transport may send the request again
	} else if out.Body != nil && out.Body != http.NoBody {
		// The transport closes the body it was given, even when it did
		// not send it (a refused connection): the next attempt sends it.
		out.Body = io.NopCloser(out.Body)
	}
	res, err := t.rt[b2i(secure)][b2i(upgrade)].RoundTrip(out)
	if err != nil {
		return attemptError(r, err)
	}
	if res.StatusCode == http.StatusSwitchingProtocols {
		return t.tunnel(w, r, res)
	}
	return writeResponse(w, res)
}

// attemptError is err, an attempt's that wrote nothing, as reverse_proxy
// returns it.
func attemptError(r *http.Request, err error) error {
	if r.Context().Err() != nil {
		return caddyhttp.Error(statusClientClosed, err)
	}
	if !isDialError(err) && timedOut(err) {
		return caddyhttp.Error(http.StatusGatewayTimeout, err)
	}
	return caddyhttp.Error(http.StatusBadGateway, err)
}

// writeResponse writes res to w as reverse_proxy does: the hop-by-hop
// headers removed, Caddy's Server header left out for the instance's,
// Caddy in Via, the trailers announced and sent after the body, which
// streams (flushed as it comes when its length is unknown).
func writeResponse(w *statusWriter, res *http.Response) error {
	defer res.Body.Close()
	removeConnectionNamed(res.Header, true) // the copy below leaves out hopHeaders
	h := w.Header()
	delete(h, "Server")
	if prior := h["Via"]; len(prior) > 0 {
		h["Via"] = append(prior, via(res.ProtoMajor, res.ProtoMinor))
	} else {
		w.via[0] = via(res.ProtoMajor, res.ProtoMinor)
		h["Via"] = w.via[:1:1] // capped: an append elsewhere copies
	}
	for k, vv := range res.Header {
		if isHopHeader(k) {
			continue // as removeHopByHop, without a delete for each
		}
		if prior := h[k]; len(prior) > 0 {
			h[k] = append(prior, vv...)
		} else {
			h[k] = vv // res is done with: its values move over, uncopied
		}
	}
	if len(res.Trailer) > 0 {
		keys := make([]string, 0, len(res.Trailer))
		for k := range res.Trailer {
			keys = append(keys, k)
		}
		h.Add("Trailer", strings.Join(keys, ", "))
	}
	w.WriteHeader(res.StatusCode)
	var err error
	var whole []byte
	if lb, ok := res.Body.(*leanBody); ok {
		whole = lb.take()
	}
	if whole != nil {
		// Already read whole: one Write, without io.Copy's way down
		// Caddy's writers' ReadFrom (a LimitReader each, a copy buffer).
		_, err = w.Write(whole)
	} else if res.ContentLength == -1 {
		err = copyFlushing(w, res.Body)
	} else {
		_, err = io.Copy(w, res.Body)
	}
	if err != nil {
		http.NewResponseController(w).Flush() // what came, the client gets
		return errAborted
	}
	for k, vv := range res.Trailer {
		h[http.TrailerPrefix+k] = vv
	}
	return nil
}

// copyFlushing copies a body of unknown length, a stream (server-sent
// events, say), flushing each piece to the client as it comes.
func copyFlushing(w *statusWriter, body io.Reader) error {
	bp := copyBuffers.Get().(*[]byte)
	defer copyBuffers.Put(bp)
	buf := *bp
	rc := http.NewResponseController(w)
	for {
		n, err := body.Read(buf)
		if n > 0 {
			if _, werr := w.Write(buf[:n]); werr != nil {
				return werr
			}
			if ferr := rc.Flush(); ferr != nil {
				return ferr
			}
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// copyBuffers are the buffers of streamed bodies and tunnels.
var copyBuffers = sync.Pool{New: func() any { b := make([]byte, 32<<10); return &b }}
