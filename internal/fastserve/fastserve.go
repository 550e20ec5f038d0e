// Package fastserve runs a fasthttp server on a listener in the background
// and stops it gracefully: what the registry's standalone server and the
// fasthttp gateway share.
package fastserve

import (
	"context"
	"errors"
	"net"
	"sync"

	"github.com/valyala/fasthttp"
	"go.uber.org/zap"
)

// Runner serves one fasthttp.Server on one listener. The zero value is
// ready for Start.
type Runner struct {
	// Name names the server in the log and in AcceptErrors. Default
	// "server".
	Name string
	// Log receives the failures to accept a connection, which the Runner
	// outlives (see Start). Default: none.
	Log *zap.Logger

	ln   net.Listener
	srv  *fasthttp.Server
	done chan struct{}

	mu       sync.Mutex
	err      error
	stopping bool
}

// Start serves srv on ln in a goroutine that Stop waits for. It does not
// block. A failed Accept (out of file descriptors, say) does not end the
// serving: it is logged, counted (AcceptErrors) and tried again after a
// backoff.
func (r *Runner) Start(srv *fasthttp.Server, ln net.Listener) {
	name := r.Name
	if name == "" {
		name = "server"
	}
	ln = KeepAccepting(ln, name, r.Log)
	r.srv, r.ln, r.done = srv, ln, make(chan struct{})
	go func() {
		defer close(r.done)
		if err := srv.Serve(ln); err != nil {
			r.mu.Lock()
			if !r.stopping {
				r.err = err
			}
			r.mu.Unlock()
		}
	}()
}

// Addr returns the listener's address, after Start.
func (r *Runner) Addr() net.Addr { return r.ln.Addr() }

// Stop stops accepting connections, lets in-flight requests finish (until
// ctx is done) and waits for the serving goroutine. It returns what
// serving failed with, if anything. Stop before Start does nothing.
func (r *Runner) Stop(ctx context.Context) error {
	if r.done == nil {
		return nil
	}
	// Close the listener ourselves: fasthttp's Shutdown does nothing if it
	// runs before Serve has registered the listener.
	r.mu.Lock()
	r.stopping = true
	r.mu.Unlock()
	r.ln.Close()
	err := r.srv.ShutdownWithContext(ctx)
	if errors.Is(err, net.ErrClosed) {
		err = nil // we closed it
	}
	select {
	case <-r.done:
	case <-ctx.Done():
		return errors.Join(err, ctx.Err())
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return errors.Join(err, r.err)
}
