package balancer

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"

	"github.com/eurekagate/eurekagate/eureka"
)

// HTTPClient sends requests to an application by name: the request URL's
// host is the app name (http://inventory/items/7), replaced by the address
// of the instance the Balancer picks. A connection failure is reported to
// the balancer and the request is retried on the next instance. A request
// counts as in progress (for LeastRequests) until its response body is
// closed, so close it, as net/http asks.
type HTTPClient struct {
	// Balancer picks the instances. Required.
	Balancer *Balancer
	// Client sends the requests. Default http.DefaultClient.
	Client *http.Client
	// Retries is how many other instances are tried after a connection
	// failure. Default 2. Requests whose body cannot be replayed (no
	// GetBody) are not retried.
	Retries int
}

// Do sends req to an instance of the app named by req.URL.Host.
func (c *HTTPClient) Do(req *http.Request) (*http.Response, error) {
	client := c.Client
	if client == nil {
		client = http.DefaultClient
	}
	retries := c.Retries
	if retries == 0 {
		retries = 2
	}
	app := strings.ToUpper(req.URL.Hostname())
	tried := map[string]bool{}
	var lastErr error
	for attempt := 0; attempt <= retries; attempt++ {
		inst, err := c.pick(app, tried)
		if err != nil {
			if lastErr != nil {
				return nil, lastErr
			}
			return nil, fmt.Errorf("balancer: %s: %w", app, err)
		}
		tried[inst.ID()] = true
		out, err := instanceRequest(req, inst, attempt)
		if err != nil {
			return nil, err
		}
		end := c.Balancer.Begin(inst)
		resp, err := client.Do(out)
		if err == nil {
			c.Balancer.ReportSuccess(inst)
			resp.Body = endOnClose(resp.Body, end)
			return resp, nil
		}
		end()
		lastErr = err
		if !connectionFailure(req.Context(), err) {
			return nil, err
		}
		c.Balancer.ReportFailure(inst)
		if req.Body != nil && req.GetBody == nil {
			return nil, err
		}
	}
	return nil, lastErr
}

// pick returns an instance not tried yet, or any instance if all were.
func (c *HTTPClient) pick(app string, tried map[string]bool) (*eureka.InstanceInfo, error) {
	first, err := c.Balancer.Pick(app)
	if err != nil || !tried[first.ID()] {
		return first, err
	}
	for range len(c.Balancer.src.Instances(app)) {
		if i, err := c.Balancer.Pick(app); err == nil && !tried[i.ID()] {
			return i, nil
		}
	}
	return first, nil
}

// endOnClose returns body, calling end when it is closed. A body that can
// also be written (a 101 Switching Protocols response's) stays writable.
func endOnClose(body io.ReadCloser, end func()) io.ReadCloser {
	rc := &endingBody{ReadCloser: body, end: end}
	if w, ok := body.(io.Writer); ok {
		return &endingWriteBody{endingBody: rc, Writer: w}
	}
	return rc
}

type endingBody struct {
	io.ReadCloser
	end func()
}

func (b *endingBody) Close() error {
	err := b.ReadCloser.Close()
	b.end()
	return err
}

type endingWriteBody struct {
	*endingBody
	io.Writer
}

// instanceRequest clones req for inst. Retries get a fresh body.
func instanceRequest(req *http.Request, inst *eureka.InstanceInfo, attempt int) (*http.Request, error) {
	out := req.Clone(req.Context())
	out.URL.Host = Address(inst, req.URL.Scheme == "https")
	out.Host = ""
	if attempt > 0 && req.GetBody != nil {
		body, err := req.GetBody()
		if err != nil {
			return nil, err
		}
		out.Body = body
	}
	return out, nil
}

// Address returns host:port of inst: its secure port when secure, else its
// port. The host is the registered hostName (Spring registers the IP there
// when preferIpAddress is set).
func Address(inst *eureka.InstanceInfo, secure bool) string {
	port := inst.Port.Number
	if secure {
		port = inst.SecurePort.Number
	}
	host := inst.HostName
	if host == "" {
		host = inst.IPAddr
	}
	return net.JoinHostPort(host, strconv.Itoa(port))
}

// connectionFailure reports whether err means the instance could not be
// reached (as opposed to the caller giving up).
func connectionFailure(ctx context.Context, err error) bool {
	if ctx.Err() != nil {
		return false
	}
	var op *net.OpError
	return errors.As(err, &op) && op.Op == "dial"
}
