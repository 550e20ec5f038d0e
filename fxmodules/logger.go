package fxmodules

import (
	"strings"

	"go.uber.org/fx"
	"go.uber.org/zap"
)

// LoggerParams is the application's logger, if it provides one.
type LoggerParams struct {
	fx.In

	Logger *zap.Logger `optional:"true"`
}

// namedLogger gives a module's constructors the application's logger
// named after the module (eureka.registry), or a no-op logger when the
// application provides none. Under a logger already named eureka (as
// Caddy names the eureka app's), the module adds only its own name, so
// lines read eureka.registry rather than eureka.eureka.registry. fx
// scopes the decoration to the module.
func namedLogger(name string) fx.Option {
	return fx.Decorate(func(p LoggerParams) *zap.Logger {
		if p.Logger == nil {
			return zap.NewNop().Named(name)
		}
		if n := p.Logger.Name(); n == "eureka" || strings.HasSuffix(n, ".eureka") {
			return p.Logger.Named(strings.TrimPrefix(name, "eureka."))
		}
		return p.Logger.Named(name)
	})
}
