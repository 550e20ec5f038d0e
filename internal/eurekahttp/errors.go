package eurekahttp

import (
	"context"
	"errors"
	"strconv"
	"strings"

	"github.com/valyala/fasthttp"
)

// ErrBodyTooLarge is wrapped by the error of a request whose answer is
// larger than Config.MaxBodySize, as received or after gzip decoding.
var ErrBodyTooLarge = errors.New("response body over the limit")

// Error is a request that failed at one server: it got no usable answer
// (Err), or, in a Cluster, an answer whose status the request's
// FailoverRule counts as a failure (Status).
type Error struct {
	// Method and URL are the request's; URL carries no credentials.
	Method, URL string
	// Status is the answer's status when that was the failure, else 0.
	Status int
	// Err is the cause when no usable answer came, else nil.
	Err error
}

// Error reads "eurekahttp: GET http://host/eureka/apps/: status 503" or
// names the cause instead of the status.
func (e *Error) Error() string { return "eurekahttp: " + e.attempt() }

func (e *Error) attempt() string {
	s := e.Method + " " + e.URL + ": "
	if e.Err != nil {
		return s + e.Err.Error()
	}
	return s + "status " + strconv.Itoa(e.Status)
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// ClusterError is a request that failed on every server a Cluster tried,
// up to MaxServersPerRequest of them.
type ClusterError struct {
	// Attempts are the failures, one per server tried, in order.
	Attempts []*Error
}

// Error is the one attempt's error, or lists the attempts: "eurekahttp:
// request failed on 2 servers: GET http://a/eureka/apps/: status 503; GET
// http://b/eureka/apps/: dial tcp ...: connection refused".
func (e *ClusterError) Error() string {
	if len(e.Attempts) == 1 {
		return e.Attempts[0].Error()
	}
	parts := make([]string, len(e.Attempts))
	for n, a := range e.Attempts {
		parts[n] = a.attempt()
	}
	return "eurekahttp: request failed on " + strconv.Itoa(len(e.Attempts)) + " servers: " + strings.Join(parts, "; ")
}

// Unwrap returns the attempts, for errors.Is and errors.As.
func (e *ClusterError) Unwrap() []error {
	out := make([]error, len(e.Attempts))
	for n, a := range e.Attempts {
		out[n] = a
	}
	return out
}

// IsTimeout reports whether err, or an attempt in it, failed by timing
// out: connecting, reading the answer, or reaching ctx's deadline.
func IsTimeout(err error) bool { return err != nil && isTimeout(err) }

// isTimeout walks the whole tree of err, as one timed-out attempt among
// refused ones counts.
func isTimeout(err error) bool {
	if t, ok := err.(interface{ Timeout() bool }); ok && t.Timeout() {
		return true
	}
	if err == fasthttp.ErrDialTimeout || err == context.DeadlineExceeded {
		return true
	}
	switch u := err.(type) {
	case interface{ Unwrap() error }:
		if inner := u.Unwrap(); inner != nil {
			return isTimeout(inner)
		}
	case interface{ Unwrap() []error }:
		for _, inner := range u.Unwrap() {
			if inner != nil && isTimeout(inner) {
				return true
			}
		}
	}
	return false
}
