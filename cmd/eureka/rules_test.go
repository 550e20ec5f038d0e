package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/eurekagate/eurekagate/dashboard"
	"github.com/eurekagate/eurekagate/internal/testkit"
	"github.com/eurekagate/eurekagate/routing"
)

// The process's traffic rules file, -gateway-rules: a document that does
// not parse stops the start, naming its file and line. Under a steady
// load through the gateway, a new document renamed over the file moves
// the traffic to the subset it names within 2 s, and a broken one is
// logged with its file and line while the traffic stays; no request
// fails meanwhile. The dashboard shows the rules in force, /metrics the
// requests per subset.
func TestGatewayRulesFile(t *testing.T) {
	bin := binary(t)
	t.Run("a bad file at the start", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "rules.yaml")
		if err := os.WriteFile(path, []byte(rulesDoc("2.0")+"    fallback: sometimes\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		cmd := exec.CommandContext(ctx, bin, "-addr", "127.0.0.1:0", "-gateway", "127.0.0.1:0", "-gateway-rules", path)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		err := cmd.Run()
		want := "eureka: -gateway-rules: " + path + `:4: apps.orders.fallback: "sometimes" is not default, any or none` + "\n"
		if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 || !strings.HasSuffix(stderr.String(), want) {
			t.Errorf("exit %v, stderr:\n%s\nwant exit status 1 and the last line %q", err, stderr.String(), want)
		}
	})
	t.Run("reloaded under load", func(t *testing.T) { reloadUnderLoad(t, bin) })
}

// -gateway-rules (or EUREKA_GATEWAY_RULES) names the gateway's rules
// file, and is refused without a gateway; -gateway-rules-max-* set its
// limits, each above 0, and are refused without it.
func TestGatewayRulesOption(t *testing.T) {
	o, err := parseOptions([]string{"-gateway", "127.0.0.1:8080"}, envOf(map[string]string{"EUREKA_GATEWAY_RULES": "rules.yaml"}), io.Discard)
	if err != nil || o.gatewayRules.File != "rules.yaml" || o.gatewayRules.Interval != 0 {
		t.Errorf("-gateway-rules from the environment: %+v, %v", o, err)
	}
	_, err = parseOptions([]string{"-gateway-rules", "rules.yaml"}, noEnv, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "-gateway-rules is set without -gateway") {
		t.Errorf("-gateway-rules without -gateway: %v", err)
	}
	if o.gatewayRules.Limits != (routing.RulesLimits{}).WithDefaults() {
		t.Errorf("the limits by default: %+v", o.gatewayRules.Limits)
	}
	o, err = parseOptions([]string{"-gateway", "127.0.0.1:8080", "-gateway-rules", "rules.yaml", "-gateway-rules-max-bytes", "1000",
		"-gateway-rules-max-rules", "2", "-gateway-rules-max-regex-size", "300", "-gateway-rules-max-echo", "10"}, noEnv, io.Discard)
	if want := (routing.RulesLimits{MaxBytes: 1000, MaxRules: 2, MaxRegexSize: 300, MaxEcho: 10}); err != nil || o.gatewayRules.Limits != want {
		t.Errorf("-gateway-rules-max-*: %+v, %v; want %+v", o.gatewayRules.Limits, err, want)
	}
	for args, want := range map[string]string{
		"-gateway-rules-max-rules 0":    "-gateway-rules-max-rules is 0: a limit is above 0",
		"-gateway-rules-max-bytes 4096": "a -gateway-rules-max-* limit is set without -gateway-rules: the limits are the rules file's",
		"-gateway-rules-max-echo -1":    "-gateway-rules-max-echo is -1: a limit is above 0",
	} {
		_, err := parseOptions(append([]string{"-gateway", "127.0.0.1:8080"}, strings.Fields(args)...), noEnv, io.Discard)
		if err == nil || err.Error() != want {
			t.Errorf("%s: %v, want %q", args, err, want)
		}
	}
}

// rulesDoc sends every request for ORDERS to its instances of version v.
func rulesDoc(v string) string {
	return "apps:\n  orders:\n    default: {version: \"" + v + "\"}\n"
}

// replaceFile writes data to a temporary file beside path and renames it
// over path, as editors and deployment tools replace a file.
func replaceFile(t *testing.T, path, data string) {
	t.Helper()
	tmp := path + ".new"
	if err := os.WriteFile(tmp, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

func reloadUnderLoad(t *testing.T, bin string) {
	path := filepath.Join(t.TempDir(), "rules.yaml")
	replaceFile(t, path, rulesDoc("2.0"))
	proc := startProcess(t, bin, true, "-addr", "127.0.0.1:0", "-gateway", "127.0.0.1:0", "-gateway-rules", path)
	registry, gw, logs := proc.registry, proc.gateway, proc.logs

	// Two backends of ORDERS, registered as a Java client registers, each
	// telling its version.
	for _, v := range []string{"2.0", "2.1"} {
		backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "version "+v) }))
		defer backend.Close()
		port := backend.Listener.Addr().(*net.TCPAddr).Port
		body := fmt.Sprintf(`{"instance":{"instanceId":"orders-%s","hostName":"127.0.0.1","app":"ORDERS","ipAddr":"127.0.0.1",`+
			`"status":"UP","port":{"$":%d,"@enabled":"true"},"securePort":{"$":443,"@enabled":"false"},`+
			`"dataCenterInfo":{"@class":"com.netflix.appinfo.InstanceInfo$DefaultDataCenterInfo","name":"MyOwn"},`+
			`"leaseInfo":{"renewalIntervalInSecs":30,"durationInSecs":90},"metadata":{"version":%q}}}`, v, port, v)
		if status := testkit.StatusAs(t, "POST", registry+"/eureka/apps/ORDERS", "", "", body); status != 204 {
			t.Fatalf("register version %s: %d", v, status)
		}
	}

	load := startLoad(gw+"/orders/items/7", 8)
	defer load.stop()
	testkit.Eventually(t, 5*time.Second, "200 requests through the gateway", func() bool { return load.count() >= 200 })

	replaceFile(t, path, rulesDoc("2.1"))
	renamed := time.Now()
	testkit.Eventually(t, 5*time.Second, "a request answered by version 2.1", func() bool { return !load.firstAnswer("version 2.1").IsZero() })
	if moved := load.firstAnswer("version 2.1").Sub(renamed); moved > 2*time.Second {
		t.Errorf("the first request answered by 2.1 came %v after the rename, want within 2s", moved)
	}
	// A broken document, written in place: its rule's to is not a list.
	broken := rulesDoc("2.1") + "    rules:\n      - match: {header: {X-Canary: 1}}\n        to: {select: {version: \"2.2\"}}\n"
	if err := os.WriteFile(path, []byte(broken), 0o644); err != nil {
		t.Fatal(err)
	}
	refused := logs.line(t, "traffic rules refused")
	if msg := fmt.Sprint(refused["error"]); refused["level"] != "error" || !strings.HasPrefix(msg, path+":6: apps.orders.rules[0].to: is not a list") {
		t.Errorf("logged %v, want an error naming %s:6 and the reason", refused, path)
	}
	// The load goes on for a second (two checks of the file) after the
	// refusal: the rules in force stay 2.1's.
	seen := time.Now()
	testkit.Eventually(t, 5*time.Second, "requests a second after the refusal", func() bool { return load.lastAnswer().Sub(seen) > time.Second })
	load.stop()

	// Every request answered 200 by a backend; those sent after a
	// request was answered by 2.1 all went to 2.1.
	n, failures, late := load.results(load.firstAnswer("version 2.1"), "version 2.1")
	t.Logf("%d requests; the first answered by 2.1 %v after the rename", n, load.firstAnswer("version 2.1").Sub(renamed))
	if len(failures) > 0 {
		t.Errorf("%d of %d requests failed, the first: %v", len(failures), n, failures[:min(len(failures), 5)])
	}
	if late > 0 {
		t.Errorf("%d requests sent after the switch to 2.1 went elsewhere", late)
	}
	var view dashboard.RulesView
	status, body := testkit.HTTPGet(t, registry+"/api/rules")
	if err := json.Unmarshal([]byte(body), &view); status != 200 || err != nil || view.Source != path || len(view.Apps) != 1 || view.Apps[0].Rules.Default != "version=2.1" {
		t.Errorf("the dashboard's rules: %d %v %s", status, err, body)
	}
	status, metrics := testkit.HTTPGet(t, registry+"/metrics")
	for _, v := range []string{"2.0", "2.1"} {
		if want := `eureka_gateway_requests_total{app="ORDERS",code="2xx",method="GET",subset="version=` + v + `"}`; status != 200 || !strings.Contains(metrics, want) {
			t.Errorf("/metrics: %d, no %s", status, want)
		}
	}
	http.DefaultClient.CloseIdleConnections()

	// SIGINT stops it gracefully, the rules file's watcher with it.
	proc.stop(t)
}

// load sends GETs to a URL from several goroutines, each on a connection
// it keeps, until stopped, and records every answer.
type load struct {
	client *http.Client
	done   chan struct{}
	wg     sync.WaitGroup
	once   sync.Once

	mu      sync.Mutex
	answers []answer
}

type answer struct {
	sent, received time.Time
	status         int
	body           string
	err            error
}

func startLoad(url string, workers int) *load {
	l := &load{done: make(chan struct{}), client: &http.Client{Timeout: 5 * time.Second,
		Transport: &http.Transport{MaxIdleConnsPerHost: workers}}}
	for range workers {
		l.wg.Add(1)
		go func() {
			defer l.wg.Done()
			for {
				select {
				case <-l.done:
					return
				default:
				}
				a := answer{sent: time.Now()}
				resp, err := l.client.Get(url)
				if err == nil {
					var b []byte
					b, err = io.ReadAll(resp.Body)
					resp.Body.Close()
					a.status, a.body = resp.StatusCode, string(b)
				}
				a.received, a.err = time.Now(), err
				l.mu.Lock()
				l.answers = append(l.answers, a)
				l.mu.Unlock()
			}
		}()
	}
	return l
}

// stop stops the load and waits for its goroutines.
func (l *load) stop() {
	l.once.Do(func() {
		close(l.done)
		l.wg.Wait()
		l.client.CloseIdleConnections()
	})
}

func (l *load) count() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.answers)
}

// firstAnswer returns when the first answer with body was received, or
// the zero time.
func (l *load) firstAnswer(body string) time.Time {
	l.mu.Lock()
	defer l.mu.Unlock()
	var first time.Time
	for _, a := range l.answers {
		if a.body == body && (first.IsZero() || a.received.Before(first)) {
			first = a.received
		}
	}
	return first
}

// lastAnswer returns when the last answer was received.
func (l *load) lastAnswer() time.Time {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.answers) == 0 {
		return time.Time{}
	}
	return l.answers[len(l.answers)-1].received
}

// results returns the number of requests, those that were not answered
// 200 by a backend, and how many sent after since were answered other
// than body.
func (l *load) results(since time.Time, body string) (n int, failures []string, late int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, a := range l.answers {
		switch {
		case a.err != nil:
			failures = append(failures, a.err.Error())
		case a.status != 200 || !strings.HasPrefix(a.body, "version "):
			failures = append(failures, fmt.Sprintf("%d %q", a.status, a.body))
		case a.sent.After(since) && a.body != body:
			late++
		}
	}
	return len(l.answers), failures, late
}
