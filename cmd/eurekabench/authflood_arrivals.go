package main

import (
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"net"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/valyala/fasthttp"
	"golang.org/x/crypto/bcrypt"

	"github.com/eurekagate/eurekagate/eureka"
	"github.com/eurekagate/eurekagate/internal/fixture"
	"github.com/eurekagate/eurekagate/registry"
	"github.com/eurekagate/eurekagate/registry/httpapi"
)

// The authflood study's second part (issue 51): while one client floods
// distinct wrong passwords from 127.0.0.1, services start from other
// loopback addresses (127.0.0.2, ...) with valid credentials the server
// has never checked, one every arrivalGap, and register; meanwhile a
// client with known credentials sends heartbeats. Run against this
// tree's scheduling and, with -baseline, against a cmd/eureka built from
// an earlier commit, in the same run: then both servers run as processes
// of their own (this tree's cmd/eureka built, or -eureka), so that
// neither shares its process with the load; without -baseline, this
// tree's server runs in this process.

// arrivalGap is how far apart the services start: their checks are
// bcrypt's, one slot's worth on a 2-core machine, so twenty at the same
// instant would wait for each other whatever the scheduling.
const arrivalGap = 100 * time.Millisecond

// arrivalsResult is one server's figures.
type arrivalsResult struct {
	name                    string
	took                    []time.Duration // each service's time to its registration; -1: none within arrivalsGiveUp
	firstBusy               int             // services whose first try was answered 503
	heartbeats              *pacedResult    // known credentials during the flood
	floodRate               float64         // wrong passwords answered per second
	floodRefused, floodBusy float64
}

// max is the longest time a service took, or -1 if one gave up.
func (r *arrivalsResult) max() time.Duration {
	if slices.Contains(r.took, -1) {
		return -1
	}
	return slices.Max(r.took)
}

// within counts the services registered within d.
func (r *arrivalsResult) within(d time.Duration) int {
	n := 0
	for _, t := range r.took {
		if t >= 0 && t <= d {
			n++
		}
	}
	return n
}

// arrivalsGiveUp is how long a service tries to register.
const arrivalsGiveUp = 10 * time.Second

// arrivalsUsers are the accounts the servers of the study hold: ops
// (the heartbeats' and the flood's user) and one per service, all with
// bcrypt's default cost.
func arrivalsUsers(services int) ([]httpapi.Account, error) {
	var out []httpapi.Account
	for n := range services + 1 {
		user := "ops"
		if n > 0 {
			user = fmt.Sprintf("svc%02d", n)
		}
		hash, err := httpapi.HashPassword(passwordOf(user))
		if err != nil {
			return nil, err
		}
		out = append(out, httpapi.Account{Username: user, PasswordHash: hash})
	}
	return out, nil
}

func passwordOf(user string) string {
	if user == "ops" {
		return "s3cret"
	}
	return "pw-" + user
}

// runArrivalsInProcess runs the arrivals against this tree's server.
func runArrivalsInProcess(c authFloodConfig, users []httpapi.Account) (*arrivalsResult, error) {
	store := registry.New(registry.Config{})
	for i := range c.instances {
		if err := store.Register(fixture.SampleInstance(i), false); err != nil {
			return nil, err
		}
	}
	api := httpapi.NewAPI(store, httpapi.APIConfig{Auth: httpapi.AuthConfig{Users: users}})
	srv := httpapi.NewServer(api, httpapi.ServerConfig{Addr: "127.0.0.1:0"})
	if err := srv.Start(); err != nil {
		return nil, err
	}
	defer srv.Stop(context.Background())
	return runArrivals(c, "this tree (in process)", srv.Addr().String())
}

// runArrivalsProcess runs the arrivals against cmd/eureka (bin) in a
// process of its own, named name.
func runArrivalsProcess(c authFloodConfig, users []httpapi.Account, name, bin string) (*arrivalsResult, error) {
	dir, err := os.MkdirTemp("", "authflood")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	ports, err := freePorts(1)
	if err != nil {
		return nil, err
	}
	var accounts []string
	for _, u := range users {
		accounts = append(accounts, u.Username+":"+u.PasswordHash)
	}
	addr := "127.0.0.1:" + ports[0]
	n, err := startEureka(bin, dir, "eureka", addr, "-auth-users", strings.Join(accounts, ","), "-dashboard-path", "off")
	if err != nil {
		return nil, err
	}
	defer n.stop()
	deadline := time.Now().Add(30 * time.Second)
	for {
		if code, err := request(addr, "GET", "/eureka/apps/", nil); err == nil && code == 200 {
			break
		}
		if time.Now().After(deadline) || n.exited() {
			return nil, fmt.Errorf("%s (%s) did not serve: %s", name, bin, n.logTail())
		}
		time.Sleep(50 * time.Millisecond)
	}
	for i := range c.instances {
		body := eureka.AppendInstanceJSON(nil, fixture.SampleInstance(i))
		if code, err := requestAs(addr, "POST", "/eureka/apps/"+fixture.SampleInstance(i).App, body, "ops"); err != nil || code != 204 {
			return nil, fmt.Errorf("registering with %s: %d %v", name, code, err)
		}
	}
	return runArrivals(c, name, addr)
}

// requestAs is request with user's credentials.
func requestAs(addr, method, path string, body []byte, user string) (int, error) {
	req, resp := fasthttp.AcquireRequest(), fasthttp.AcquireResponse()
	defer fasthttp.ReleaseRequest(req)
	defer fasthttp.ReleaseResponse(resp)
	req.Header.SetMethod(method)
	req.SetRequestURI("http://" + addr + path)
	req.Header.Set("Authorization", basicAuth(user))
	if body != nil {
		req.Header.SetContentType("application/json")
		req.SetBody(body)
	}
	err := fasthttp.DoTimeout(req, resp, 30*time.Second)
	return resp.StatusCode(), err
}

func basicAuth(user string) string {
	return "Basic " + base64.StdEncoding.EncodeToString([]byte(user+":"+passwordOf(user)))
}

// runArrivals floods the server at addr from 127.0.0.1, sends heartbeats
// with known credentials, and starts c.services services from 127.0.0.2
// on, one every arrivalGap, each registering until it is answered 204.
func runArrivals(c authFloodConfig, name, addr string) (*arrivalsResult, error) {
	paths := make([]string, c.instances)
	for n := range paths {
		i := fixture.SampleInstance(n)
		paths[n] = "/eureka/apps/" + i.App + "/" + i.InstanceID + "?status=UP&lastDirtyTimestamp=" + strconv.FormatInt(i.LastDirtyTimestamp, 10)
	}
	// ops's credentials are known before the flood starts.
	if code, err := requestAs(addr, "PUT", paths[0], nil, "ops"); err != nil || code != 200 {
		return nil, fmt.Errorf("%s: the first heartbeat: %d %v", name, code, err)
	}
	var fl floodCounts
	stopFlood := startFlood(addr, c.floodConns, paths, &fl)
	time.Sleep(c.d / 10) // the flood under way
	hbDone := make(chan struct{})
	var hb *pacedResult
	hbCtx, stopHB := context.WithCancel(context.Background())
	defer stopHB()
	go func() {
		defer close(hbDone)
		hb = pacedHeartbeats(hbCtx, []string{addr}, paths, heartbeatRate, time.Hour, 4, basicAuth("ops"))
	}()
	res := &arrivalsResult{name: name, took: make([]time.Duration, c.services)}
	var wg sync.WaitGroup
	var mu sync.Mutex
	for s := range c.services {
		wg.Add(1)
		go func() {
			defer wg.Done()
			took, busyFirst := register(addr, s)
			mu.Lock()
			res.took[s] = took
			if busyFirst {
				res.firstBusy++
			}
			mu.Unlock()
		}()
		time.Sleep(arrivalGap)
	}
	wg.Wait()
	stopHB()
	<-hbDone
	if err := stopFlood(); err != nil {
		return nil, err
	}
	if hb.failed > 0 {
		return nil, fmt.Errorf("%s: %d heartbeats with known credentials were not answered 200", name, hb.failed)
	}
	res.heartbeats = hb
	secs := fl.elapsed.Seconds()
	res.floodRefused, res.floodBusy = float64(fl.refused.Load())/secs, float64(fl.busy.Load())/secs
	res.floodRate = res.floodRefused + res.floodBusy
	return res, nil
}

// heartbeatRate is the pace of the known client's heartbeats during the
// arrivals: a fleet of 6,000 instances at Eureka's 30 s, not a load that
// takes the CPU from the checks it is to watch.
const heartbeatRate = 200

// register is service s starting: from 127.0.0.(2+s), it registers with
// credentials never seen before, again every 100 ms after a 503, and
// returns how long it took (-1 if it gave up) and whether its first try
// was answered 503.
func register(addr string, s int) (time.Duration, bool) {
	src := &net.TCPAddr{IP: net.IPv4(127, 0, 0, byte(2+s))}
	client := &fasthttp.HostClient{Addr: addr, ReadTimeout: 30 * time.Second, Dial: func(a string) (net.Conn, error) {
		return (&net.Dialer{LocalAddr: src, Timeout: 5 * time.Second}).Dial("tcp", a)
	}}
	defer client.CloseIdleConnections()
	user := fmt.Sprintf("svc%02d", s+1)
	i := fixture.SampleInstance(1_000_000 + s)
	i.App = strings.ToUpper(user)
	body := eureka.AppendInstanceJSON(nil, i)
	req, resp := fasthttp.AcquireRequest(), fasthttp.AcquireResponse()
	defer fasthttp.ReleaseRequest(req)
	defer fasthttp.ReleaseResponse(resp)
	start := time.Now()
	busyFirst := false
	for try := 0; time.Since(start) < arrivalsGiveUp; try++ {
		req.Reset()
		req.Header.SetMethod("POST")
		req.SetRequestURI("http://" + addr + "/eureka/apps/" + i.App)
		req.Header.Set("Authorization", basicAuth(user))
		req.Header.SetContentType("application/json")
		req.SetBody(body)
		err := client.Do(req, resp)
		if err == nil && resp.StatusCode() == fasthttp.StatusNoContent {
			return time.Since(start), busyFirst
		}
		if try == 0 && err == nil && resp.StatusCode() == fasthttp.StatusServiceUnavailable {
			busyFirst = true
		}
		time.Sleep(100 * time.Millisecond)
	}
	return -1, busyFirst
}

// bcryptCheckTime is the median time of a bcrypt comparison at cost on
// this machine, as loaded as it is.
func bcryptCheckTime(cost int) (time.Duration, error) {
	hash, err := bcrypt.GenerateFromPassword([]byte("x"), cost)
	if err != nil {
		return 0, err
	}
	var times []time.Duration
	for range 5 {
		start := time.Now()
		bcrypt.CompareHashAndPassword(hash, []byte("y"))
		times = append(times, time.Since(start))
	}
	slices.Sort(times)
	return times[len(times)/2], nil
}

// printArrivals writes the arrivals' figures, one column per server.
func printArrivals(out io.Writer, c authFloodConfig, rs []*arrivalsResult) {
	fmt.Fprintf(out, "\n%d services starting %v apart from 127.0.0.2 on, valid credentials never seen, during a flood of wrong passwords from 127.0.0.1 (%d connections)\n", c.services, arrivalGap, c.floodConns)
	row := func(label string, f func(r *arrivalsResult) string) {
		fmt.Fprintf(out, "%-44s", label)
		for _, r := range rs {
			fmt.Fprintf(out, " %22s", f(r))
		}
		fmt.Fprintln(out)
	}
	row("", func(r *arrivalsResult) string {
		if len(r.name) > 22 {
			return "..." + r.name[len(r.name)-19:]
		}
		return r.name
	})
	for s := range c.services {
		row(fmt.Sprintf("  svc%02d registered after", s+1), func(r *arrivalsResult) string { return tookString(r.took[s]) })
	}
	row("max", func(r *arrivalsResult) string { return tookString(r.max()) })
	row("registered within 1 s", func(r *arrivalsResult) string { return fmt.Sprintf("%d of %d", r.within(time.Second), len(r.took)) })
	row("first try answered 503", func(r *arrivalsResult) string { return strconv.Itoa(r.firstBusy) })
	row(fmt.Sprintf("known heartbeats (%d/s) p99, target < 10 ms", heartbeatRate), func(r *arrivalsResult) string {
		return fmt.Sprintf("%.2f ms", ms(r.heartbeats.answered.p99))
	})
	row("wrong passwords answered", func(r *arrivalsResult) string { return fmt.Sprintf("%.0f /s", r.floodRate) })
	row("  checked with bcrypt (401)", func(r *arrivalsResult) string { return fmt.Sprintf("%.1f /s", r.floodRefused) })
	row("  turned away unchecked (503)", func(r *arrivalsResult) string { return fmt.Sprintf("%.0f /s", r.floodBusy) })
}

func tookString(d time.Duration) string {
	if d < 0 {
		return "not in " + arrivalsGiveUp.String()
	}
	return d.Round(time.Millisecond).String()
}
