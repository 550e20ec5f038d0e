package caddymodule

import (
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"

	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
)

// tunnel carries an Upgrade (a WebSocket) that the instance accepted
// (res, a 101): the client's connection, taken from Caddy's server, and
// the instance's, copied both ways until either side closes, without an
// idle limit, as reverse_proxy's tunnels. The handler's goroutine copies
// one way and a goroutine of its own the other, and the handler waits
// for it. The tunnel is closed when the config is unloaded.
func (t *ownTransport) tunnel(w *statusWriter, r *http.Request, res *http.Response) error {
	backConn, ok := res.Body.(io.ReadWriteCloser)
	if !ok {
		res.Body.Close()
		return caddyhttp.Error(http.StatusBadGateway, errors.New("a 101 answer whose body cannot be written"))
	}
	asked, got := r.Header.Get("Upgrade"), res.Header.Get("Upgrade")
	if got == "" || !strings.EqualFold(asked, got) {
		backConn.Close()
		return caddyhttp.Error(http.StatusBadGateway, errors.New("the instance switched to a protocol not asked for: "+got))
	}
	removeHopByHop(res.Header, false)
	h := w.Header()
	for k, vv := range res.Header {
		h[k] = append(h[k], vv...)
	}
	h["Upgrade"], h["Connection"] = []string{got}, []string{"Upgrade"}
	w.WriteHeader(http.StatusSwitchingProtocols)
	conn, brw, err := http.NewResponseController(w).Hijack()
	if err != nil {
		backConn.Close()
		return err
	}
	if !t.tunnels.add(conn, backConn) {
		conn.Close()
		backConn.Close()
		return nil // the config is being unloaded
	}
	defer t.tunnels.remove(conn)
	closeBoth := func() { conn.Close(); backConn.Close() }
	if n := brw.Reader.Buffered(); n > 0 { // what the client sent already
		b, _ := brw.Reader.Peek(n)
		if _, err := backConn.Write(b); err != nil {
			closeBoth()
			return nil
		}
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		copyTunnel(backConn, conn)
		closeBoth()
	}()
	copyTunnel(conn, backConn)
	closeBoth()
	<-done
	return nil
}

// copyTunnel copies src to dst with a pooled buffer until either fails.
func copyTunnel(dst io.Writer, src io.Reader) {
	bp := copyBuffers.Get().(*[]byte)
	defer copyBuffers.Put(bp)
	io.CopyBuffer(onlyWriter{dst}, onlyReader{src}, *bp)
}

// onlyWriter and onlyReader hide ReadFrom and WriteTo, so that
// io.CopyBuffer uses the pooled buffer.
type (
	onlyWriter struct{ io.Writer }
	onlyReader struct{ io.Reader }
)

// tunnels are a transport's open tunnels, by the client's connection,
// with the instance's: closed together when the config is unloaded.
type tunnels struct {
	mu     sync.Mutex
	open   map[io.Closer]io.Closer
	closed bool
}

// add records a tunnel; false once closeAll has run.
func (ts *tunnels) add(client, instance io.Closer) bool {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if ts.closed {
		return false
	}
	if ts.open == nil {
		ts.open = map[io.Closer]io.Closer{}
	}
	ts.open[client] = instance
	return true
}

// remove forgets a tunnel that ended.
func (ts *tunnels) remove(client io.Closer) {
	ts.mu.Lock()
	delete(ts.open, client)
	ts.mu.Unlock()
}

// closeAll closes the open tunnels (their handlers then return) and any
// that would open after.
func (ts *tunnels) closeAll() {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	ts.closed = true
	for c, i := range ts.open {
		c.Close()
		i.Close()
	}
}
