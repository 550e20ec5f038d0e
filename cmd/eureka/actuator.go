package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"strings"
	"time"

	"go.uber.org/fx"
	"go.uber.org/zap"

	"github.com/eurekagate/eurekagate/registry/actuator"
)

// actuatorFlags are the Spring Boot actuator endpoints' settings.
type actuatorFlags struct {
	exposure, path, details string
}

// actuatorOptions are what main serves the endpoints with.
type actuatorOptions struct {
	// exposure names the endpoints served; none when empty (-actuator
	// off).
	exposure []string
	path     string
	// managementAddr is the address of a server of their own
	// (management.server.port); "" serves them on the registry's.
	managementAddr string
	details        string // always, never or when-authorized
}

func (f *actuatorFlags) register(fs *flag.FlagSet, o *options) {
	fs.StringVar(&f.exposure, "actuator", "health", "comma-separated Spring Boot actuator endpoints served under -actuator-path (management.endpoints.web.exposure.include): health (with its liveness and readiness groups; readiness answers 503 until the start-up sync is done and during the graceful stop), info, prometheus (the families of /metrics), or *; off for none")
	fs.StringVar(&f.path, "actuator-path", actuator.DefaultBasePath, "where the actuator endpoints are served (management.endpoints.web.base-path)")
	fs.StringVar(&o.actuator.managementAddr, "management-addr", "", "serve the actuator endpoints on this address of their own (management.server.port) instead of the registry's")
	fs.StringVar(&f.details, "actuator-health-details", "when-authorized", "who sees the components of /actuator/health (management.endpoint.health.show-details): always, never, or when-authorized (callers with credentials of -auth-users; everyone without -auth-users)")
}

// apply checks the settings into o.
func (f *actuatorFlags) apply(o *options) error {
	a := &o.actuator
	path, err := actuator.BasePath(f.path)
	if err != nil {
		return fmt.Errorf("-actuator-path %s: %w", f.path, err)
	}
	a.path = path
	switch f.details {
	case "always", "never", "when-authorized":
		a.details = f.details
	default:
		return fmt.Errorf("-actuator-health-details %q: always, never or when-authorized", f.details)
	}
	if a.managementAddr == o.server.Addr {
		a.managementAddr = "" // Spring's management.server.port equal to server.port: one server
	}
	if f.exposure == "off" {
		if a.managementAddr != "" {
			return errors.New("-management-addr is set with -actuator off: the address is the actuator's")
		}
		return nil
	}
	for _, e := range splitList(f.exposure) {
		if _, err := actuator.Exposed(e); err != nil {
			return fmt.Errorf("-actuator: %w", err)
		}
		a.exposure = append(a.exposure, e)
	}
	return nil
}

// actuatorHandler builds the endpoints over the server's pieces: health's
// details shown as -actuator-health-details says, prometheus the
// handler of /metrics. It returns nil with -actuator off.
func actuatorHandler(opts *options, p serverParams, metrics http.Handler) (*actuator.Actuator, error) {
	a := opts.actuator
	if len(a.exposure) == 0 {
		return nil, nil
	}
	cfg := actuator.Config{BasePath: a.path, Exposure: a.exposure, Store: p.Store, Prometheus: metrics, NotReady: p.API.NotReady}
	if p.Peers != nil {
		cfg.Peers = p.Peers
	}
	if s := opts.gatewayRules.Limits.Shared; s != nil {
		cfg.Degraded = func() map[string]actuator.Component {
			return map[string]actuator.Component{"redis": redisComponent(s.Health())}
		}
	}
	switch a.details {
	case "never":
		cfg.Details = func(*http.Request) bool { return false }
	case "when-authorized":
		cfg.Details = p.API.Credentialed
	}
	return actuator.New(cfg)
}

// mountActuator puts the endpoints in front of other (the registry's
// operator pages, protected by -auth-reads when protect is set): health
// and its groups answer anyone, as probes have no credentials; the other
// endpoints are reads like /metrics.
func mountActuator(act *actuator.Actuator, other http.Handler, protect func(http.Handler) http.Handler) http.Handler {
	mux := http.NewServeMux()
	health := act.Path() + "health"
	mux.Handle(health, act)
	mux.Handle(health+"/", act)
	mux.Handle(act.Path(), protect(act))
	mux.Handle(strings.TrimSuffix(act.Path(), "/"), protect(act))
	if other != nil {
		mux.Handle("/", other)
	}
	return mux
}

// readHeaderTimeout bounds a request header on the management server, so
// that a client sending it slowly does not hold a connection for good.
const readHeaderTimeout = 10 * time.Second

// serveManagement serves h on addr, a server of its own, from the app's
// start to its stop, which waits for it.
func serveManagement(lc fx.Lifecycle, addr string, h http.Handler, log *zap.Logger) {
	srv := &http.Server{Addr: addr, Handler: h, ReadHeaderTimeout: readHeaderTimeout}
	done := make(chan struct{})
	lc.Append(fx.Hook{
		OnStart: func(context.Context) error {
			ln, err := net.Listen("tcp", addr)
			if err != nil {
				return fmt.Errorf("-management-addr: %w", err)
			}
			log.Info("management listening", zap.String("addr", ln.Addr().String()))
			go func() {
				defer close(done)
				srv.Serve(ln)
			}()
			return nil
		},
		OnStop: func(ctx context.Context) error {
			err := srv.Shutdown(ctx)
			<-done
			return err
		},
	})
}
