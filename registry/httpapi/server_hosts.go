package httpapi

import (
	"net"
	"os"

	"github.com/valyala/fasthttp"
	"go.uber.org/zap"
)

// startHostGuard sets the server's HostGuard when it listens on loopback
// only (at addr) and its API has no credentials: the case a page rebound
// to 127.0.0.1 attacks. Otherwise AllowedHosts has no effect, which it
// logs when they are set.
func (s *Server) startHostGuard(addr net.Addr) error {
	if s.api.auth != nil || !listensOnLoopback(addr) {
		if len(s.cfg.AllowedHosts) > 0 && s.cfg.Log != nil {
			s.cfg.Log.Warn("allowed hosts have no effect: the registry answers every Host when it listens beyond loopback or has credentials",
				zap.Strings("allowed_hosts", s.cfg.AllowedHosts), zap.Stringer("addr", addr))
		}
		return ParseAllowedHosts(s.cfg.AllowedHosts)
	}
	own := []string{}
	if host, _, err := net.SplitHostPort(s.cfg.Addr); err == nil {
		own = append(own, host)
	}
	if name, err := os.Hostname(); err == nil {
		own = append(own, name)
	}
	g, err := NewHostGuard(s.cfg.AllowedHosts, "AllowedHosts (-allowed-hosts)", own...)
	if err != nil {
		return err
	}
	s.hosts = g
	return nil
}

// guardHosts answers 403 to a request whose Host the guard refuses, when
// there is a guard; the API, the dashboard and its data alike.
func (s *Server) guardHosts(h fasthttp.RequestHandler) fasthttp.RequestHandler {
	return func(ctx *fasthttp.RequestCtx) {
		if g := s.hosts; g != nil {
			if host := transient(ctx.Request.Header.Host()); !g.Allows(host) {
				ctx.Error(g.Refusal(host), fasthttp.StatusForbidden)
				return
			}
		}
		h(ctx)
	}
}
