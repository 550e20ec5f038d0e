package balancer

import (
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/eurekagate/eurekagate/eureka"
	"github.com/eurekagate/eurekagate/internal/testkit"
)

// healthServer is an instance whose health URL answers with status.
type healthServer struct {
	srv    *httptest.Server
	status atomic.Int32
	checks atomic.Int32
}

func newHealthServer(t *testing.T, name string) *healthServer {
	h := &healthServer{}
	h.status.Store(200)
	h.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/health" {
			h.checks.Add(1)
			w.WriteHeader(int(h.status.Load()))
			return
		}
		io.WriteString(w, name)
	}))
	t.Cleanup(h.srv.Close)
	return h
}

func (h *healthServer) instance(id string) *eureka.InstanceInfo {
	i := loopbackInstance(id, serverPort(h.srv))
	i.HealthCheckURL = h.srv.URL + "/health"
	return i
}

// listInstancer serves one app whose list can be replaced.
type listInstancer struct {
	mu   sync.Mutex
	list []*eureka.InstanceInfo
}

func (l *listInstancer) Instances(app string) []*eureka.InstanceInfo {
	l.mu.Lock()
	defer l.mu.Unlock()
	if app != "INVENTORY" {
		return nil
	}
	return l.list
}

func (l *listInstancer) set(list ...*eureka.InstanceInfo) {
	l.mu.Lock()
	l.list = list
	l.mu.Unlock()
}

// picked returns the instances n picks chose, by id.
func picked(b *Balancer, n int) map[string]int {
	m := map[string]int{}
	for range n {
		i, err := b.Pick("INVENTORY")
		if err != nil {
			return nil
		}
		m[i.ID()]++
	}
	return m
}

// An instance whose health URL starts answering 503 is out of the
// rotation within two check intervals, and back within two intervals of
// answering 200 again.
func TestCheckerTakesFailingInstanceOutAndBack(t *testing.T) {
	const interval = 150 * time.Millisecond
	a, b, c := newHealthServer(t, "a"), newHealthServer(t, "b"), newHealthServer(t, "c")
	src := &listInstancer{}
	src.set(a.instance("a"), b.instance("b"), c.instance("c"))
	checker := NewChecker(src, CheckConfig{Interval: interval})
	checker.Start()
	defer checker.Stop()
	bal := New(src, Config{Checker: checker})

	if got := picked(bal, 30); got["a"] != 10 || got["b"] != 10 || got["c"] != 10 {
		t.Fatalf("all healthy: %v", got)
	}
	testkit.Eventually(t, time.Second, "the first checks", func() bool { return b.checks.Load() > 0 })

	b.status.Store(503)
	start := time.Now()
	testkit.Eventually(t, 2*interval, "b out of the rotation", func() bool { return picked(bal, 6)["b"] == 0 })
	t.Logf("out of the rotation %v after its health URL answered 503", time.Since(start).Round(time.Millisecond))
	if got := picked(bal, 30); got["b"] != 0 || got["a"] != 15 || got["c"] != 15 {
		t.Fatalf("with b failing its check: %v", got)
	}

	b.status.Store(200)
	start = time.Now()
	testkit.Eventually(t, 2*interval, "b back in the rotation", func() bool { return picked(bal, 3)["b"] == 1 })
	t.Logf("back %v after its health URL answered 200", time.Since(start).Round(time.Millisecond))

	// An instance that leaves is forgotten: failing when it leaves, it is
	// healthy (not checked yet) when it comes back.
	b.status.Store(503)
	testkit.Eventually(t, 2*interval, "b out again", func() bool { return !checker.Healthy(b.instance("b")) })
	src.set(a.instance("a"), c.instance("c"))
	testkit.Eventually(t, 2*interval, "b forgotten", func() bool { return !checker.anyDown() })
	n := 0
	checker.states.Range(func(any, any) bool { n++; return true })
	if n != 0 {
		t.Errorf("%d instance states kept", n)
	}
}

// A check fails on a timeout, on a status other than the expected one and
// on a redirect, which it does not follow; an instance without a health URL
// is not checked. Every instance failing: the balancer still picks one.
func TestCheckerFailures(t *testing.T) {
	const interval = 100 * time.Millisecond
	hung := testkit.NewHung(t, "hung")
	elsewhere := newHealthServer(t, "elsewhere")
	redirect := httptest.NewServer(http.RedirectHandler(elsewhere.srv.URL+"/health", http.StatusFound))
	defer redirect.Close()
	ok := newHealthServer(t, "ok")
	teapot := newHealthServer(t, "teapot")
	teapot.status.Store(http.StatusTeapot)

	slow := ok.instance("slow")
	slow.HealthCheckURL = "http://" + hung.Addr() + "/health"
	moved := ok.instance("moved")
	moved.HealthCheckURL = redirect.URL + "/health"
	unchecked := ok.instance("unchecked")
	unchecked.HealthCheckURL = "/health" // not absolute: not checked
	src := &listInstancer{}
	src.set(slow, moved, teapot.instance("teapot"), unchecked, ok.instance("ok"))
	checker := NewChecker(src, CheckConfig{Interval: interval, Timeout: 50 * time.Millisecond})
	checker.Start()
	defer checker.Stop()
	bal := New(src, Config{Checker: checker})
	bal.Pick("INVENTORY")
	testkit.Eventually(t, 4*interval, "the failing instances out", func() bool {
		got := picked(bal, 10)
		return len(got) == 2 && got["unchecked"] == 5 && got["ok"] == 5
	})
	if n := elsewhere.checks.Load(); n != 0 {
		t.Errorf("the redirect was followed %d times", n)
	}

	// 418 is what this check expects.
	only := NewChecker(src, CheckConfig{Interval: interval, ExpectStatus: 418})
	only.Start()
	defer only.Stop()
	only.Healthy(slow)
	testkit.Eventually(t, 4*interval, "the 2xx instances failing a check for 418", func() bool {
		return only.Healthy(teapot.instance("teapot")) && !only.Healthy(ok.instance("ok")) && only.Healthy(unchecked)
	})
	all := New(src, Config{Checker: only})
	src.set(ok.instance("ok"))
	if i, err := all.Pick("INVENTORY"); err != nil || i.ID() != "ok" {
		t.Fatalf("every instance failing: %v %v", i, err)
	}
}

func TestCheckerStopWithoutStart(t *testing.T) {
	c := NewChecker(staticInstancer{}, CheckConfig{})
	c.Stop()
	c.Start()
	c.Stop()
	c.Stop()
}
