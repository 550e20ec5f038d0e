// Package xdsfixture is what the xDS tests and cmd/eurekabench share
// without importing testing: gRPC backends that answer their name, the
// call that asks it, and grpc-go's bootstrap for an xDS server.
package xdsfixture

import (
	"context"
	"fmt"
	"net"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/types/known/emptypb"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

// whoMethod is the one RPC the backends serve: it answers the backend's
// name, so a client sees which instance took each call.
const whoMethod = "/test.Who/Name"

// StartBackend starts a gRPC server on loopback answering with name and
// returns its port and what stops it (and waits for it).
func StartBackend(name string) (port int, stop func(), err error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, nil, err
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
	return ln.Addr().(*net.TCPAddr).Port, func() {
		srv.Stop()
		<-done
	}, nil
}

// Bootstrap is grpc-go's bootstrap configuration for an xDS server at
// addr, reached with channelCreds (`{"type":"insecure"}` for plaintext).
func Bootstrap(addr, channelCreds, node string) []byte {
	return fmt.Appendf(nil, `{"xds_servers":[{"server_uri":%q,"channel_creds":[%s],"server_features":["xds_v3"]}],"node":{"id":%q,"locality":{"zone":"z1"}}}`,
		addr, channelCreds, node)
}

// Who calls a backend once over conn and returns its name.
func Who(conn *grpc.ClientConn, timeout time.Duration) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	var name wrapperspb.StringValue
	err := conn.Invoke(ctx, whoMethod, &emptypb.Empty{}, &name)
	return name.GetValue(), err
}

// Count calls n times with the metadata pairs md (key, value, ...) and
// returns how many calls each backend answered; a failed call counts as
// "error".
func Count(conn *grpc.ClientConn, n int, md ...string) map[string]int {
	got := map[string]int{}
	for range n {
		ctx, cancel := context.WithTimeout(metadata.AppendToOutgoingContext(context.Background(), md...), 2*time.Second)
		var name wrapperspb.StringValue
		if err := conn.Invoke(ctx, whoMethod, &emptypb.Empty{}, &name); err != nil {
			name.Value = "error"
		}
		cancel()
		got[name.GetValue()]++
	}
	return got
}
