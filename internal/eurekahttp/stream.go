package eurekahttp

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/eurekagate/eurekagate/eureka"
)

// Stream sends r to server and hands the answer to read as it arrives: the
// status and headers in resp (Body nil), and the body, gzip-decoded, as
// body, which read consumes. Reading past MaxBodySize (as received or
// decoded) fails with an error wrapping ErrBodyTooLarge. Stream returns
// read's error, or the request's, as an *Error naming the method and URL.
//
// The answer is bounded by ctx, for the whole read, and by ReadTimeout on
// each wait: for the headers, then for every next piece of the body. So a
// large registry read over a slow link takes as long as it needs while
// bytes flow, and a server that stops sending fails in ReadTimeout.
func (c *Client) Stream(ctx context.Context, server eureka.ServiceURL, r Request, read func(resp Response, body io.Reader) error) error {
	method, url := r.method(), r.url(server)
	fail := func(err error) error {
		return &Error{Method: method, URL: url, Err: c.explainTLS(url, err)}
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	idle := time.AfterFunc(c.cfg.ReadTimeout, func() { cancel(errIdle{c.cfg.ReadTimeout}) })
	defer idle.Stop()

	var reqBody io.Reader
	if r.Body != nil {
		reqBody = bytes.NewReader(r.Body)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, reqBody)
	if err != nil {
		return fail(err)
	}
	c.setHeaders(req, server, r)
	resp, err := c.held.Do(req)
	if err != nil {
		return fail(cause(ctx, err))
	}
	defer resp.Body.Close()
	idle.Stop()

	body := io.Reader(&progressReader{r: resp.Body, idle: idle, timeout: c.cfg.ReadTimeout})
	body = &limitedReader{r: body, left: int64(c.cfg.MaxBodySize), tooLarge: c.tooLarge}
	switch enc := strings.ToLower(resp.Header.Get("Content-Encoding")); enc {
	case "", "identity":
	case "gzip", "x-gzip":
		zr, err := gzip.NewReader(body)
		if errors.Is(err, io.EOF) {
			body = strings.NewReader("") // a bodiless answer with the header set
			break
		}
		if err != nil {
			return fail(cause(ctx, fmt.Errorf("gzip body: %w", err)))
		}
		body = &limitedReader{r: zr, left: int64(c.cfg.MaxBodySize), tooLarge: c.tooLarge}
	default:
		return fail(fmt.Errorf("unsupported Content-Encoding %q", enc))
	}
	if err := read(Response{Status: resp.StatusCode, Server: server, Header: resp.Header}, body); err != nil {
		return fail(cause(ctx, err))
	}
	return nil
}

// setHeaders sets what every request of ours carries, then r's own headers.
func (c *Client) setHeaders(req *http.Request, server eureka.ServiceURL, r Request) {
	req.Header.Set("Accept", "application/json")
	req.Header.Set("Accept-Encoding", "gzip")
	req.Header.Set("User-Agent", c.cfg.UserAgent)
	if server.Authorization != "" {
		req.Header.Set("Authorization", server.Authorization)
	}
	if r.Body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for name, values := range r.Header {
		req.Header[http.CanonicalHeaderKey(name)] = values
	}
}

// cause is ctx's cause when ctx ended (the idle timeout, the deadline),
// which explains err better than "context canceled".
func cause(ctx context.Context, err error) error {
	if c := context.Cause(ctx); c != nil && !errors.Is(err, c) {
		return fmt.Errorf("%w: %w", c, err)
	}
	return err
}

// errIdle ends a Stream whose server sent nothing for its ReadTimeout.
type errIdle struct{ after time.Duration }

func (e errIdle) Error() string   { return fmt.Sprintf("no bytes for %v", e.after) }
func (e errIdle) Timeout() bool   { return true }
func (e errIdle) Temporary() bool { return true }

// progressReader runs the idle timer while it waits for bytes, and only
// then: a reader that decodes and stores what it read (a registry app by
// app) takes its time without its server being taken for silent.
type progressReader struct {
	r       io.Reader
	idle    *time.Timer
	timeout time.Duration
}

func (p *progressReader) Read(b []byte) (int, error) {
	p.idle.Reset(p.timeout)
	n, err := p.r.Read(b)
	p.idle.Stop() // the reader's own work between reads is not the server's silence
	return n, err
}

// limitedReader fails once more than left bytes have passed.
type limitedReader struct {
	r        io.Reader
	left     int64
	tooLarge func() error
}

func (l *limitedReader) Read(b []byte) (int, error) {
	if l.left < 0 {
		return 0, l.tooLarge()
	}
	if int64(len(b)) > l.left+1 {
		b = b[:l.left+1]
	}
	n, err := l.r.Read(b)
	l.left -= int64(n)
	if l.left < 0 {
		return n, l.tooLarge()
	}
	return n, err
}
