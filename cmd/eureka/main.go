// Command eureka is the standalone Eurekagate registry: a Eureka-compatible
// server that Spring Cloud, hudl/fargo and Node Eureka clients use as they
// would a Netflix or Spring Cloud Eureka server.
//
//	go run ./cmd/eureka                  # listens on :8761
//	go run ./cmd/eureka -addr 127.0.0.1:8761 -self-preservation=false
//
// Every flag can also be set as an environment variable: -eviction-interval
// as EUREKA_EVICTION_INTERVAL. Run with -h for the list. SIGINT or SIGTERM
// stops it gracefully: in-flight requests finish and background loops stop.
package main

import (
	"errors"
	"flag"
	"fmt"
	"os"

	"go.uber.org/fx"
	"go.uber.org/fx/fxevent"
	"go.uber.org/zap"

	"github.com/eurekagate/eurekagate/fxmodules"
)

func main() {
	opts, err := parseOptions(os.Args[1:], os.Getenv, os.Stderr)
	if errors.Is(err, flag.ErrHelp) {
		return
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "eureka:", err)
		os.Exit(2)
	}
	log, err := zap.NewProduction()
	if err != nil {
		fmt.Fprintln(os.Stderr, "eureka:", err)
		os.Exit(1)
	}
	defer log.Sync()
	fx.New(appOptions(opts, log)).Run()
}

// appOptions assembles the server: the registry module and the fasthttp
// server module, with the parsed settings.
func appOptions(opts *options, log *zap.Logger) fx.Option {
	return fx.Options(
		fxmodules.Registry,
		fxmodules.Server,
		fx.Supply(opts.registry, opts.server, log),
		fx.WithLogger(func() fxevent.Logger {
			l := &fxevent.ZapLogger{Logger: log.Named("fx")}
			l.UseLogLevel(zap.DebugLevel)
			return l
		}),
	)
}
