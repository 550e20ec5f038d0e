package xdsmodule_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"go.uber.org/fx"

	"github.com/eurekagate/eurekagate/fxmodules"
	"github.com/eurekagate/eurekagate/fxmodules/xdsmodule"
	"github.com/eurekagate/eurekagate/internal/testkit"
	"github.com/eurekagate/eurekagate/xds"
)

func TestMain(m *testing.M) { testkit.VerifyTestMain(m) }

// The module serves the Registry module's Store from start to stop, and
// refuses a Config without an address.
func TestModuleServesFromStartToStop(t *testing.T) {
	var s *xds.Server
	app := fx.New(fx.NopLogger, fxmodules.Registry, xdsmodule.Module, fx.Supply(xdsmodule.Config{Addr: "127.0.0.1:0"}), fx.Populate(&s))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := app.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if s.Addr() == nil {
		t.Error("started without an address")
	}
	if err := app.Stop(ctx); err != nil {
		t.Fatal(err)
	}

	err := fx.New(fx.NopLogger, fxmodules.Registry, xdsmodule.Module, fx.Supply(xdsmodule.Config{}), fx.Invoke(func(*xds.Server) {})).Err()
	if err == nil || !strings.Contains(err.Error(), "Config.Addr is empty") {
		t.Errorf("a Config without an address: %v", err)
	}
}
