package main

import (
	"cmp"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/valyala/fasthttp"
)

// loadSpec is a load: conc workers send requests to addr, each built by
// build (n counts the requests from 0), for d; or, when d is 0, until
// until is closed; or, without until either, exactly total of them.
type loadSpec struct {
	addr      string
	conc      int
	d         time.Duration
	until     <-chan struct{}
	total     int
	build     func(n int, req *fasthttp.Request)
	want      int                    // the status every answer must have; 0 for 200
	check     func(status int) error // instead of want: an error stops the load
	latencies bool                   // keep each request's latency
}

// over reports whether the load is over before request n.
func (s *loadSpec) over(n int, deadline time.Time) bool {
	switch {
	case s.d > 0:
		return time.Now().After(deadline)
	case s.until != nil:
		select {
		case <-s.until:
			return true
		default:
			return false
		}
	}
	return n >= s.total
}

// loadResult is what a load measured: the answers, in how long, and their
// latencies when asked for.
type loadResult struct {
	n         int
	elapsed   time.Duration
	latencies []time.Duration
}

func (r *loadResult) add(o *loadResult) {
	r.n += o.n
	r.elapsed += o.elapsed
	r.latencies = append(r.latencies, o.latencies...)
}

func (r *loadResult) rate() float64 { return float64(r.n) / r.elapsed.Seconds() }

func (r *loadResult) p99() time.Duration {
	slices.Sort(r.latencies)
	return r.latencies[len(r.latencies)*99/100]
}

// load runs s. An answer that s.check refuses, or with another status
// than s.want, or no answer at all, is an error.
func load(s loadSpec) (*loadResult, error) {
	if s.check == nil {
		want := cmp.Or(s.want, fasthttp.StatusOK)
		s.check = func(status int) error {
			if status != want {
				return fmt.Errorf("status %d, want %d", status, want)
			}
			return nil
		}
	}
	client := &fasthttp.HostClient{Addr: s.addr, MaxConns: s.conc, ReadTimeout: 30 * time.Second, WriteTimeout: 30 * time.Second}
	defer client.CloseIdleConnections()
	var next, done atomic.Int64
	var firstErr atomic.Value
	latencies := make([][]time.Duration, s.conc)
	start := time.Now()
	deadline := start.Add(s.d)
	var wg sync.WaitGroup
	for w := range s.conc {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req, resp := fasthttp.AcquireRequest(), fasthttp.AcquireResponse()
			defer fasthttp.ReleaseRequest(req)
			defer fasthttp.ReleaseResponse(resp)
			for {
				n := int(next.Add(1) - 1)
				if s.over(n, deadline) || firstErr.Load() != nil {
					return
				}
				req.Reset()
				s.build(n, req)
				req.SetHost(s.addr)
				var sent time.Time
				if s.latencies {
					sent = time.Now()
				}
				if err := client.Do(req, resp); err != nil {
					firstErr.CompareAndSwap(nil, err)
					return
				}
				if err := s.check(resp.StatusCode()); err != nil {
					firstErr.CompareAndSwap(nil, fmt.Errorf("%s %s: %v", req.Header.Method(), req.URI().Path(), err))
					return
				}
				if s.latencies {
					latencies[w] = append(latencies[w], time.Since(sent))
				}
				done.Add(1)
			}
		}()
	}
	wg.Wait()
	if err, _ := firstErr.Load().(error); err != nil {
		return nil, err
	}
	r := &loadResult{n: int(done.Load()), elapsed: time.Since(start), latencies: slices.Concat(latencies...)}
	if r.n == 0 {
		return nil, fmt.Errorf("no answer from %s in %v", s.addr, r.elapsed.Round(time.Millisecond))
	}
	return r, nil
}

// rate runs s and returns its answers per second.
func (s loadSpec) rate() (float64, error) {
	r, err := load(s)
	if err != nil {
		return 0, err
	}
	return r.rate(), nil
}

// request sends one request to addr and returns the answer's status.
func request(addr, method, path string, body []byte) (int, error) {
	req, resp := fasthttp.AcquireRequest(), fasthttp.AcquireResponse()
	defer fasthttp.ReleaseRequest(req)
	defer fasthttp.ReleaseResponse(resp)
	req.Header.SetMethod(method)
	req.SetRequestURI("http://" + addr + path)
	if body != nil {
		req.Header.SetContentType("application/json")
		req.SetBody(body)
	}
	err := fasthttp.DoTimeout(req, resp, 5*time.Second)
	return resp.StatusCode(), err
}
