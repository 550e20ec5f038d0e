package interop

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"
)

// recorder is a reverse proxy in front of a Eureka server that keeps what
// a client sent: the tests compare it with what the server holds.
type recorder struct {
	srv *httptest.Server
	mu  sync.Mutex
	log []recorded
}

type recorded struct {
	at                  time.Time // when the request arrived
	method, path, query string
	body                []byte
	status              int
	watch               string // the answer's Eurekagate-Watch header
}

func newRecorder(t *testing.T, target string) *recorder {
	t.Helper()
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	u.Path = "" // a service URL may be given: the clients send whole paths
	r := &recorder{}
	proxy := httputil.NewSingleHostReverseProxy(u)
	proxy.Transport = &http.Transport{DisableKeepAlives: true}
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		at := time.Now()
		body, _ := io.ReadAll(req.Body)
		req.Body = io.NopCloser(strings.NewReader(string(body)))
		sw := &statusWriter{ResponseWriter: w, status: 200}
		proxy.ServeHTTP(sw, req)
		r.mu.Lock()
		r.log = append(r.log, recorded{at, req.Method, req.URL.Path, req.URL.RawQuery, body, sw.status, w.Header().Get("Eurekagate-Watch")})
		r.mu.Unlock()
	}))
	t.Cleanup(r.srv.Close)
	return r
}

type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(s int) { w.status = s; w.ResponseWriter.WriteHeader(s) }
func (w *statusWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (r *recorder) serviceURL() string { return r.srv.URL + "/eureka/" }

// requests returns what was sent with method to a path matching prefix.
func (r *recorder) requests(method, prefix string) []recorded {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []recorded
	for _, x := range r.log {
		if x.method == method && strings.HasPrefix(x.path, prefix) {
			out = append(out, x)
		}
	}
	return out
}

// instanceJSON reads one instance from a Eureka server as JSON.
func instanceJSON(t *testing.T, serviceURL, app, id string) (map[string]any, int) {
	t.Helper()
	status, body := call(t, "GET", serviceURL+"apps/"+app+"/"+id, nil, "Accept", "application/json")
	if status != 200 {
		return nil, status
	}
	var doc struct {
		Instance map[string]any `json:"instance"`
	}
	if err := decodeNumbers([]byte(body), &doc); err != nil {
		t.Fatalf("instance %s/%s: %v: %s", app, id, err, body)
	}
	return doc.Instance, status
}

// decodeNumbers decodes JSON keeping numbers as their text, so that a
// timestamp sent as a number compares with one a server writes as a
// string (as the Java server writes lastDirtyTimestamp).
func decodeNumbers(b []byte, v any) error {
	d := json.NewDecoder(strings.NewReader(string(b)))
	d.UseNumber()
	return d.Decode(v)
}

// serverSet are the fields a server sets itself rather than keep as the
// client sent them.
var serverSet = map[string]bool{
	"actionType": true, "lastUpdatedTimestamp": true, "isCoordinatingDiscoveryServer": true,
	"leaseInfo.registrationTimestamp": true, "leaseInfo.lastRenewalTimestamp": true,
	"leaseInfo.evictionTimestamp": true, "leaseInfo.serviceUpTimestamp": true,
}

// sameFields reports each field of sent (nested, by dotted path) that got
// holds otherwise, but for serverSet.
func sameFields(prefix string, sent, got map[string]any) []string {
	var diffs []string
	for k, v := range sent {
		path := strings.TrimPrefix(prefix+"."+k, ".")
		// A server leaves out what is null, and sid "na" (as the Java
		// server's codec does).
		if serverSet[path] || v == nil || (path == "sid" && v == "na") {
			continue
		}
		g, ok := got[k]
		if !ok {
			diffs = append(diffs, fmt.Sprintf("%s: sent %v, missing", path, v))
			continue
		}
		if sm, ok := v.(map[string]any); ok {
			if gm, ok := g.(map[string]any); ok {
				diffs = append(diffs, sameFields(path, sm, gm)...)
				continue
			}
		}
		if !reflect.DeepEqual(fmt.Sprint(v), fmt.Sprint(g)) {
			diffs = append(diffs, fmt.Sprintf("%s: sent %v, held %v", path, v, g))
		}
	}
	return diffs
}

// The Spring client registers with our standalone server, and with
// Caddy's eureka_server, with every field it sends kept as it sent it, and
// heartbeats keep the lease.
func TestSpringClientRegistersWithOurServer(t *testing.T) {
	for _, line := range springLines {
		for i, start := range hosts() {
			t.Run(line.name+"/"+[]string{"standalone", "caddy"}[i], func(t *testing.T) {
				h := start(t)
				testRegistration(t, line.project, strings.TrimSuffix(h.serviceURL, "/eureka/"))
			})
		}
	}
}

func testRegistration(t *testing.T, project, base string) {
	serviceURL := base + "/eureka/"
	rec := newRecorder(t, base)
	c := startSpringClientOf(t, project, "orders", "orders-1", rec.serviceURL())

	// The client's first registration: of the process that started, not
	// of one that registered and then found its port taken (started
	// again on another, startJavaOnFreePort).
	var sent struct {
		Instance map[string]any `json:"instance"`
	}
	var reg *recorded
	for _, r := range rec.requests("POST", "/eureka/apps/ORDERS") {
		sent.Instance = nil
		if err := decodeNumbers(r.body, &sent); err != nil {
			t.Fatalf("the registration body: %v: %s", err, r.body)
		}
		if port, _ := sent.Instance["port"].(map[string]any); fmt.Sprint(port["$"]) == fmt.Sprint(c.port) {
			reg = &r
			break
		}
	}
	if reg == nil || reg.status != 204 {
		t.Fatalf("registrations seen: %+v", rec.requests("POST", "/eureka/apps/ORDERS"))
	}
	got, status := instanceJSON(t, serviceURL, "ORDERS", "orders-1")
	if status != 200 {
		t.Fatalf("GET the instance: %d", status)
	}
	if diffs := sameFields("", sent.Instance, got); len(diffs) > 0 {
		t.Errorf("the registration as held differs from what Spring sent:\n%s\nsent: %s", strings.Join(diffs, "\n"), reg.body)
	}

	// Heartbeats every second, each answered 200, move the lease on.
	first := got["leaseInfo"].(map[string]any)["lastRenewalTimestamp"]
	eventually(t, 15*time.Second, "three heartbeats answered 200", func() (bool, string) {
		ok := 0
		for _, h := range rec.requests("PUT", "/eureka/apps/ORDERS/orders-1") {
			if h.status == 200 {
				ok++
			}
		}
		return ok >= 3, fmt.Sprint(ok)
	})
	eventually(t, 5*time.Second, "the lease renewed", func() (bool, string) {
		got, _ := instanceJSON(t, serviceURL, "ORDERS", "orders-1")
		last := got["leaseInfo"].(map[string]any)["lastRenewalTimestamp"]
		return fmt.Sprint(last) != fmt.Sprint(first), fmt.Sprint(last)
	})
	if n := c.count(`was unable to send heartbeat|Re-registering`); n != 0 {
		t.Errorf("the client logged %d failed heartbeats", n)
	}
}
