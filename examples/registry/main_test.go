package main

import (
	"net/http"
	"testing"

	"go.uber.org/fx"
	"go.uber.org/fx/fxtest"
	"go.uber.org/zap"

	"github.com/eurekagate/eurekagate/internal/testkit"
	"github.com/eurekagate/eurekagate/registry/httpapi"
)

func TestMain(m *testing.M) { testkit.VerifyTestMain(m) }

func TestEmbeddedRegistry(t *testing.T) {
	var srv *httpapi.Server
	app := fxtest.New(t, options("127.0.0.1:0", zap.NewNop()), fx.Populate(&srv))
	app.RequireStart()
	defer app.RequireStop()
	body := `{"instance":{"hostName":"h","app":"orders","ipAddr":"127.0.0.1","dataCenterInfo":{"name":"MyOwn"}}}`
	if status, _ := testkit.HTTPPost(t, "http://"+srv.Addr().String()+"/eureka/apps/ORDERS", "application/json", body); status != 204 {
		t.Fatalf("register: %d", status)
	}
	http.DefaultClient.CloseIdleConnections()
}
