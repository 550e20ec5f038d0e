package gateway

import (
	"bufio"
	"io"
	"net"
	"sync"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/eurekagate/eurekagate/balancer"
	"github.com/eurekagate/eurekagate/eureka"
	"github.com/eurekagate/eurekagate/routing"
)

// maxUpgradeRefusal bounds the body of an instance's answer to an upgrade
// request that it refuses (anything but 101).
const maxUpgradeRefusal = 1 << 20

// tunnel serves an Upgrade request (a WebSocket, say): it sends the
// request to an instance on a connection of its own and, when the
// instance switches protocols, relays the bytes both ways until either
// side closes. Tunnels have no idle timeout, as a WebSocket may be quiet
// for long; Close ends them.
func (g *Gateway) tunnel(ctx *fasthttp.RequestCtx, rt *routing.Route, name []byte, o *observed) {
	ctx.Request.Header.Set(fasthttp.HeaderConnection, "Upgrade")
	// Only a connection not made is retried: once sent, the upgrade
	// request may have been acted on, and its body streams.
	try := g.router.Retry(rt, false)
	var conn net.Conn
	var inst *eureka.InstanceInfo
	var addr string
	for {
		inst = try.Next()
		addr = balancer.Address(inst, rt.Secure)
		var err error
		// No idle limit: a WebSocket may be quiet for long.
		conn, err = g.dialer.connect(addr, rt.Secure, 0)
		if err == nil {
			break
		}
		f := failureOf(err)
		g.logFailure(rt.App, inst, addr, try.Attempt(), err)
		// Counted as forward counts them (Caddy's too), so that a retry
		// ends its place in the app's retry budget with the request.
		again := try.Failed(f)
		o.Failed(f, again)
		if !again {
			answer(ctx, routing.Failed(name, f))
			return
		}
	}
	if g.cfg.RewriteHost || len(ctx.Request.Header.Host()) == 0 {
		ctx.Request.Header.SetHost(addr)
	}

	resp := fasthttp.AcquireResponse()
	defer fasthttp.ReleaseResponse(resp)
	br, err := g.upgradeRequest(ctx, conn, resp)
	if err != nil {
		conn.Close()
		f := failureOf(err)
		g.logFailure(rt.App, inst, addr, try.Attempt(), err)
		try.Failed(f)
		answer(ctx, routing.Failed(name, f))
		return
	}
	try.Succeeded()
	if resp.StatusCode() != fasthttp.StatusSwitchingProtocols {
		conn.Close()
		resp.CopyTo(&ctx.Response)
		stripResponse(&ctx.Response.Header, false, new(hopSet))
		return
	}
	stripResponse(&resp.Header, true, new(hopSet))
	resp.Header.Set(fasthttp.HeaderConnection, "Upgrade")
	head := append([]byte(nil), resp.Header.Header()...)
	// The instance's answer goes out as it came, before the tunnel.
	ctx.Response.SetStatusCode(fasthttp.StatusSwitchingProtocols) // what served logs
	ctx.HijackSetNoResponse(true)
	ctx.Hijack(func(client net.Conn) { g.relay(client, conn, br, head) })
}

// upgradeRequest sends the request on conn and reads the answer's header
// (and body, when it is not 101), within ResponseHeaderTimeout (or, with
// none, ResponseReadTimeout).
func (g *Gateway) upgradeRequest(ctx *fasthttp.RequestCtx, conn net.Conn, resp *fasthttp.Response) (*bufio.Reader, error) {
	timeout := g.cfg.Routing.ResponseHeaderTimeout
	if timeout <= 0 {
		timeout = g.cfg.Routing.ReadTimeout
	}
	if err := conn.SetDeadline(time.Now().Add(timeout)); err != nil {
		return nil, err
	}
	bw := bufio.NewWriterSize(conn, bufferSize)
	if err := ctx.Request.Write(bw); err != nil {
		return nil, err
	}
	if err := bw.Flush(); err != nil {
		return nil, err
	}
	br := bufio.NewReaderSize(conn, bufferSize)
	resp.Header.SetNoDefaultContentType(true)
	if err := resp.ReadLimitBody(br, maxUpgradeRefusal); err != nil {
		return nil, err
	}
	return br, conn.SetDeadline(time.Time{})
}

// relay copies between the client and the instance until either side is
// done, then ends both directions. It runs on the goroutine fasthttp
// gives a hijacked connection, and owns one more, which it waits for.
func (g *Gateway) relay(client, conn net.Conn, br *bufio.Reader, head []byte) {
	t := &tunnelConns{client: client, upstream: conn}
	if !g.hijacked.add(t) {
		conn.Close()
		return
	}
	defer g.hijacked.done(t)
	defer conn.Close() // fasthttp closes the client's when this returns
	unboundReads(client)
	if _, err := client.Write(head); err != nil {
		return
	}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		io.Copy(client, br) // what the instance sent, buffered or not
		t.end()
	}()
	io.Copy(conn, client)
	t.end()
	wg.Wait()
}

// tunnelConns are the two ends of a tunnel.
type tunnelConns struct {
	client, upstream net.Conn
	once             sync.Once
}

// end unblocks both directions: the client's connection gets a deadline
// in the past (fasthttp closes it), the instance's is closed.
func (t *tunnelConns) end() {
	t.once.Do(func() {
		t.client.SetDeadline(time.Unix(1, 0))
		t.upstream.Close()
	})
}
