// Command registry is a Eureka registry embedded in a small fx application:
// the Registry module (the Store and its background loops) and the Server
// module (the REST API over fasthttp), with settings of our own and a zap
// logger for the registry's state changes.
//
//	go run ./examples/registry -addr 127.0.0.1:8761
package main

import (
	"flag"
	"time"

	"go.uber.org/fx"
	"go.uber.org/fx/fxevent"
	"go.uber.org/zap"

	"github.com/eurekagate/eurekagate/fxmodules"
	"github.com/eurekagate/eurekagate/registry"
	"github.com/eurekagate/eurekagate/registry/httpapi"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:8761", "listen address")
	flag.Parse()
	// Info and up, without the stack traces development loggers add to
	// warnings.
	log, _ := zap.NewDevelopment(zap.IncreaseLevel(zap.InfoLevel), zap.AddStacktrace(zap.ErrorLevel))
	fx.New(options(*addr, log)).Run()
}

// options is the whole application, so that its test can start it.
func options(addr string, log *zap.Logger) fx.Option {
	return fx.Options(
		fxmodules.Registry,
		fxmodules.Server,
		fx.Supply(
			fxmodules.RegistryConfig{Store: registry.Config{EvictionInterval: 30 * time.Second}},
			httpapi.ServerConfig{Addr: addr},
			log,
		),
		fx.WithLogger(func() fxevent.Logger {
			l := &fxevent.ZapLogger{Logger: log.Named("fx")}
			l.UseLogLevel(zap.DebugLevel) // fx's start-up events; its errors still show
			return l
		}),
	)
}
