package xds_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/protobuf/types/known/emptypb"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/eurekagate/eurekagate/eureka"
	"github.com/eurekagate/eurekagate/internal/testkit"
	"github.com/eurekagate/eurekagate/registry"
	"github.com/eurekagate/eurekagate/registry/httpapi"
	"github.com/eurekagate/eurekagate/xds"
)

// whoMethod is the one RPC the test backends serve: it answers the
// backend's name, so a client sees which instance took each call.
const whoMethod = "/test.Who/Name"

// env is a registry served over Eureka's REST API on loopback and over
// xDS from the same Store.
type env struct {
	store *registry.Store
	api   string // the REST API's base URL, .../eureka
	xds   *xds.Server
}

func newEnv(t *testing.T, cfg xds.Config) *env {
	t.Helper()
	store := registry.New(registry.Config{})
	store.Start()
	t.Cleanup(store.Stop)
	api := httptest.NewServer(httpapi.NewHTTPHandler(httpapi.NewAPI(store, httpapi.APIConfig{})))
	t.Cleanup(api.Close)
	x, err := xds.New(store, cfg)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	x.Start(ln)
	t.Cleanup(x.Stop)
	return &env{store: store, api: api.URL + "/eureka", xds: x}
}

// backend starts a gRPC server on loopback answering whoMethod with name
// and returns its port.
func backend(t *testing.T, name string) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer(grpc.UnknownServiceHandler(func(_ any, st grpc.ServerStream) error {
		if err := st.RecvMsg(&emptypb.Empty{}); err != nil {
			return err
		}
		return st.SendMsg(wrapperspb.String(name))
	}))
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = srv.Serve(ln)
	}()
	t.Cleanup(func() {
		srv.Stop()
		<-done
	})
	return ln.Addr().(*net.TCPAddr).Port
}

// register registers app's instance id through the REST API, with the
// backend's port as its gRPC_port metadata and an HTTP port beside it.
func (e *env) register(t *testing.T, app, id string, grpcPort int, md map[string]string) {
	t.Helper()
	i := testkit.Inst(app, id)
	i.Metadata = map[string]string{xds.DefaultGRPCPortKey: strconv.Itoa(grpcPort)}
	for k, v := range md {
		i.Metadata[k] = v
	}
	code, body := testkit.HTTPPost(t, e.api+"/apps/"+app, "application/json", string(eureka.AppendInstanceJSON(nil, i)))
	if code != http.StatusNoContent {
		t.Fatalf("register %s/%s: %d %s", app, id, code, body)
	}
}

// send sends a request with method to the REST API and wants want.
func (e *env) send(t *testing.T, method, path string, want int) {
	t.Helper()
	req, err := http.NewRequest(method, e.api+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp, body := testkit.Do(t, http.DefaultClient, req); resp.StatusCode != want {
		t.Fatalf("%s %s: %d %s, want %d", method, path, resp.StatusCode, body, want)
	}
}

// bootstrap is grpc-go's bootstrap configuration for our server.
func (e *env) bootstrap(node string) []byte {
	return fmt.Appendf(nil, `{"xds_servers":[{"server_uri":%q,"channel_creds":[{"type":"insecure"}],"server_features":["xds_v3"]}],"node":{"id":%q,"locality":{"zone":"z1"}}}`,
		e.xds.Addr().String(), node)
}

// who calls whoMethod once over conn and returns the backend's name.
func who(conn *grpc.ClientConn, timeout time.Duration) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	var name wrapperspb.StringValue
	err := conn.Invoke(ctx, whoMethod, &emptypb.Empty{}, &name)
	return name.GetValue(), err
}
