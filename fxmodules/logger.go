package fxmodules

import (
	"go.uber.org/fx"
	"go.uber.org/zap"
)

// LoggerParams is the application's logger, if it provides one.
type LoggerParams struct {
	fx.In

	Logger *zap.Logger `optional:"true"`
}

// namedLogger gives a module's constructors the application's logger
// named after the module, or a no-op logger when the application provides
// none. fx scopes the decoration to the module.
func namedLogger(name string) fx.Option {
	return fx.Decorate(func(p LoggerParams) *zap.Logger {
		if p.Logger == nil {
			return zap.NewNop().Named(name)
		}
		return p.Logger.Named(name)
	})
}
