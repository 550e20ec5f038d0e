package gateway

import (
	"errors"
	"fmt"

	"github.com/valyala/fasthttp"
	"go.uber.org/zap"

	"github.com/eurekagate/eurekagate/eureka"
)

// What the gateway does when an instance fails a request, the same on
// every path (fasthttp's forward and tunnel, the loops).

// noteFailure reports inst's failure to the balancer (passive health) and
// logs it.
func (g *Gateway) noteFailure(app string, inst *eureka.InstanceInfo, addr string, attempt int, err error) {
	g.bal.ReportFailure(inst)
	g.cfg.Logger.Info("instance failed", zap.String("app", app), zap.String("instance", inst.ID()),
		zap.String("addr", addr), zap.Int("attempt", attempt+1), zap.Error(err))
}

// mayRetry reports whether a request that failed with err on its
// attempt'th try may go to another instance: always after a failed dial
// (it never reached the instance), after anything else only when it may
// be sent twice (replayable: idempotent, with its body in memory), and
// Config.Retries times at most.
func (g *Gateway) mayRetry(err error, replayable bool, attempt int) bool {
	var dial *dialError
	return (errors.As(err, &dial) || replayable) && attempt < g.cfg.Retries
}

// failedAnswer is what a client gets once its request's instance failed
// it for good: 504 after a timeout, else 502, with the reason.
func failedAnswer(app string, err error) (status int, reason string) {
	if timedOut(err) {
		return fasthttp.StatusGatewayTimeout, fmt.Sprintf("application %q: the instance did not answer in time\n", app)
	}
	return fasthttp.StatusBadGateway, fmt.Sprintf("application %q: the instance failed to answer\n", app)
}

// busyReason is the 503 reason when every connection to the instance is
// taken (Config.MaxConnsPerInstance).
func busyReason(app string) string {
	return fmt.Sprintf("application %q: every connection to the instance is busy\n", app)
}

// setPlain makes h the header of a short plain-text answer with status.
func setPlain(h *fasthttp.ResponseHeader, status int) {
	h.SetStatusCode(status)
	h.SetContentType("text/plain; charset=utf-8")
	h.Set("Cache-Control", "no-store")
}
