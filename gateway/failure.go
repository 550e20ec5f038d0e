package gateway

import (
	"errors"
	"net"
	"os"

	"github.com/valyala/fasthttp"
	"go.uber.org/zap"

	"github.com/eurekagate/eurekagate/balancer"
	"github.com/eurekagate/eurekagate/eureka"
)

// How an instance failed a request, as the router's Retry takes it, the
// same on every path (fasthttp's forward and tunnel, the loops).

// failureOf classifies err, an instance's failure of a request: a failed
// dial never reached it.
func failureOf(err error) balancer.Failure {
	var dial *dialError
	switch {
	case errors.As(err, &dial):
		return balancer.Refused
	case timedOut(err):
		return balancer.TimedOut
	}
	return balancer.Broken
}

// timedOut reports whether err is a timeout.
func timedOut(err error) bool {
	if errors.Is(err, fasthttp.ErrTimeout) || errors.Is(err, os.ErrDeadlineExceeded) {
		return true
	}
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// logFailure logs an instance's failure of the attempt'th try.
func (g *Gateway) logFailure(app string, inst *eureka.InstanceInfo, addr string, attempt int, err error) {
	g.cfg.Logger.Info("instance failed", zap.String("app", app), zap.String("instance", inst.ID()),
		zap.String("addr", addr), zap.Int("attempt", attempt), zap.Error(err))
}

// setPlain makes h the header of a short plain-text answer with status.
func setPlain(h *fasthttp.ResponseHeader, status int) {
	h.SetStatusCode(status)
	h.SetContentType("text/plain; charset=utf-8")
	h.Set("Cache-Control", "no-store")
}
