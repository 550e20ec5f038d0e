package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
)

// floorHandler is the least a Caddy handler that proxies does, for
// reference beside eureka_gateway: the request's path (its first segment
// stripped, as eureka_gateway strips the app's name) to one backend over
// kept connections, the status, Content-Type and body back; no routing,
// no other headers, no timeouts, no retries, no checks of the answer
// beyond its Content-Length. What it costs in Caddy, with Caddy's log and
// metrics around it, is the floor under any gateway written as a Caddy
// handler.
type floorHandler struct {
	Backend string `json:"backend"`
	idle    chan *floorConn
}

type floorConn struct {
	net.Conn
	r   *bufio.Reader
	req []byte
}

func init() { caddy.RegisterModule(new(floorHandler)) }

// CaddyModule returns the Caddy module information.
func (*floorHandler) CaddyModule() caddy.ModuleInfo {
	return caddy.ModuleInfo{ID: "http.handlers.eurekabench_floor", New: func() caddy.Module { return new(floorHandler) }}
}

// Provision makes the pool of kept connections.
func (f *floorHandler) Provision(caddy.Context) error {
	f.idle = make(chan *floorConn, 256)
	return nil
}

// Cleanup closes the kept connections.
func (f *floorHandler) Cleanup() error {
	for {
		select {
		case c := <-f.idle:
			c.Close()
		default:
			return nil
		}
	}
}

func (f *floorHandler) ServeHTTP(w http.ResponseWriter, r *http.Request, _ caddyhttp.Handler) error {
	c, err := f.conn()
	if err != nil {
		return caddyhttp.Error(http.StatusBadGateway, err)
	}
	status, ctype, body, err := c.exchange(f.Backend, r.URL.Path)
	if err != nil {
		c.Close()
		return caddyhttp.Error(http.StatusBadGateway, err)
	}
	select {
	case f.idle <- c:
	default:
		c.Close()
	}
	if ctype != "" {
		w.Header().Set("Content-Type", ctype)
	}
	w.WriteHeader(status)
	_, err = w.Write(body)
	return err
}

func (f *floorHandler) conn() (*floorConn, error) {
	select {
	case c := <-f.idle:
		return c, nil
	default:
	}
	nc, err := net.Dial("tcp", f.Backend)
	if err != nil {
		return nil, err
	}
	return &floorConn{Conn: nc, r: bufio.NewReader(nc)}, nil
}

// exchange sends GET path (its first segment stripped) and reads the
// answer's status, Content-Type and body.
func (c *floorConn) exchange(host, path string) (status int, ctype string, body []byte, err error) {
	if i := strings.IndexByte(path[1:], '/'); i >= 0 {
		path = path[i+1:]
	}
	c.req = append(append(append(append(c.req[:0], "GET "...), path...), " HTTP/1.1\r\nHost: "...), host...)
	c.req = append(c.req, "\r\n\r\n"...)
	if _, err := c.Write(c.req); err != nil {
		return 0, "", nil, err
	}
	line, err := c.r.ReadSlice('\n')
	if err != nil {
		return 0, "", nil, err
	}
	if len(line) < 12 {
		return 0, "", nil, fmt.Errorf("status line %q", line)
	}
	if status, err = strconv.Atoi(string(line[9:12])); err != nil {
		return 0, "", nil, err
	}
	length := -1
	for {
		line, err := c.r.ReadSlice('\n')
		if err != nil {
			return 0, "", nil, err
		}
		name, value, _ := bytes.Cut(bytes.TrimRight(line, "\r\n"), []byte(":"))
		switch {
		case len(name) == 0:
			if length < 0 {
				return 0, "", nil, fmt.Errorf("no Content-Length")
			}
			body = make([]byte, length)
			_, err = io.ReadFull(c.r, body)
			return status, ctype, body, err
		case strings.EqualFold(string(name), "Content-Length"):
			if length, err = strconv.Atoi(string(bytes.TrimSpace(value))); err != nil {
				return 0, "", nil, err
			}
		case strings.EqualFold(string(name), "Content-Type"):
			ctype = string(bytes.TrimSpace(value))
		}
	}
}
