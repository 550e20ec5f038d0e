package main

import (
	"bytes"
	"crypto/tls"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"go.uber.org/fx"
	"go.uber.org/zap"

	"github.com/eurekagate/eurekagate/eureka"
	"github.com/eurekagate/eurekagate/internal/testkit"
	"github.com/eurekagate/eurekagate/registry"
	"github.com/eurekagate/eurekagate/registry/httpapi"
)

// Two nodes peering over mutual TLS (each the other's peer by its
// certificate), with bound credentials writing on each: an account bound
// to ORDERS by -auth-apps, a client certificate bound to PAYMENTS by
// -auth-apps cert:NAME=..., and an operator. Each writes its own app's
// instances on either node and is refused (403) the others'; replication
// loses none of the writes taken; each node's -audit-log holds exactly its
// refused and operator writes.
func TestBoundCredentialsInACluster(t *testing.T) {
	dir := t.TempDir()
	ca := testkit.NewCA(t, dir, "ca")
	hash, err := httpapi.HashPassword("s3cret")
	if err != nil {
		t.Fatal(err)
	}
	addrs := []string{testkit.FreeAddr(t), testkit.FreeAddr(t)}
	peers := "https://" + addrs[0] + "/eureka/,https://" + addrs[1] + "/eureka/"
	var stores []*registry.Store
	var trails []string
	for n, name := range []string{"node-1", "node-2"} {
		cert, key := ca.Issue(t, name)
		trail := filepath.Join(dir, name+".audit")
		_, st := startNode(t, "-addr", addrs[n], "-dashboard-path", "off", "-tls-cert", cert, "-tls-key", key, "-peers", peers,
			"-tls-client-ca", ca.File, "-tls-ca", ca.File, "-peer-cert-names", "node-1,node-2",
			"-auth-users", "orders:"+hash+",ops:"+hash, "-auth-apps", "orders=ORDERS", "-auth-apps", "cert:svc-payments=PAYMENTS",
			"-auth-operators", "ops", "-audit-log", trail)
		stores, trails = append(stores, st), append(trails, trail)
	}
	client := func(cn string) *http.Client {
		c := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{
			RootCAs: ca.Pool, Certificates: []tls.Certificate{ca.Cert(t, cn)}}}}
		t.Cleanup(c.CloseIdleConnections)
		return c
	}
	orders, payments := client("svc-orders"), client("svc-payments")
	do := func(c *http.Client, node int, user, method, path string, want int) {
		t.Helper()
		var body []byte
		if method == "POST" {
			app := strings.Split(path, "/")[0]
			body = eureka.AppendInstanceJSON(nil, testkit.SpringInst(app, "new-"+strings.ToLower(app)+"-"+string(rune('1'+node))))
		}
		req, _ := http.NewRequest(method, "https://"+addrs[node]+"/eureka/apps/"+path, bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		if user != "" {
			req.SetBasicAuth(user, "s3cret")
		}
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Fatalf("%s %s on node %d as %q: %d, want %d", method, path, node+1, user, resp.StatusCode, want)
		}
	}
	do(orders, 0, "orders", "POST", "ORDERS", 204)
	do(orders, 1, "orders", "POST", "ORDERS", 204)
	do(payments, 1, "", "POST", "PAYMENTS", 204)
	do(payments, 0, "", "POST", "PAYMENTS", 204)
	do(orders, 0, "orders", "POST", "PAYMENTS", 403)
	do(payments, 1, "", "POST", "ORDERS", 403)
	testkit.Eventually(t, 5*time.Second, "every registration on both nodes", func() bool {
		for _, s := range stores {
			for _, k := range [][2]string{{"ORDERS", "new-orders-1"}, {"ORDERS", "new-orders-2"}, {"PAYMENTS", "new-payments-1"}, {"PAYMENTS", "new-payments-2"}} {
				if _, ok := s.Get(k[0], k[1]); !ok {
					return false
				}
			}
		}
		return true
	})
	do(payments, 1, "", "PUT", "ORDERS/new-orders-1/status?value=OUT_OF_SERVICE", 403)
	do(orders, 0, "orders", "DELETE", "PAYMENTS/new-payments-2", 403)
	do(orders, 1, "ops", "PUT", "PAYMENTS/new-payments-1/status?value=OUT_OF_SERVICE", 200)
	do(payments, 0, "", "PUT", "PAYMENTS/new-payments-2", 200)
	do(orders, 0, "orders", "DELETE", "ORDERS/new-orders-2", 200)
	testkit.Eventually(t, 5*time.Second, "the override and the cancel on both nodes", func() bool {
		for _, s := range stores {
			p, ok := s.Get("PAYMENTS", "new-payments-1")
			if _, gone := s.Get("ORDERS", "new-orders-2"); !ok || p.Status != eureka.StatusOutOfService || gone {
				return false
			}
		}
		return true
	})
	for _, s := range stores {
		if _, ok := s.Get("PAYMENTS", "new-payments-2"); !ok {
			t.Error("a refused cancel took on a node")
		}
		if _, ok := s.Get("PAYMENTS", "new-payments-1"); !ok {
			t.Error("an instance was lost")
		}
	}

	want := []string{
		`{"time":"T","account":"orders","source":"127.0.0.1","action":"register","app":"PAYMENTS","outcome":"refused","status":403}` + "\n" +
			`{"time":"T","account":"orders","source":"127.0.0.1","action":"cancel","app":"PAYMENTS","instance":"new-payments-2","outcome":"refused","status":403}` + "\n",
		`{"time":"T","cert":"svc-payments","source":"127.0.0.1","action":"register","app":"ORDERS","outcome":"refused","status":403}` + "\n" +
			`{"time":"T","cert":"svc-payments","source":"127.0.0.1","action":"status","app":"ORDERS","instance":"new-orders-1","outcome":"refused","status":403}` + "\n" +
			`{"time":"T","account":"ops","source":"127.0.0.1","action":"status","app":"PAYMENTS","instance":"new-payments-1","outcome":"done","status":200}` + "\n",
	}
	stamp := regexp.MustCompile(`"time":"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z"`)
	for n, path := range trails {
		var got string
		testkit.Eventually(t, 5*time.Second, "node "+string(rune('1'+n))+"'s audit trail", func() bool {
			raw, _ := os.ReadFile(path)
			got = stamp.ReplaceAllString(string(raw), `"time":"T"`)
			return strings.Count(got, "\n") >= strings.Count(want[n], "\n")
		})
		if got != want[n] {
			t.Errorf("node %d's audit trail:\n%s\nwant\n%s", n+1, got, want[n])
		}
	}
}

// The bindings' flags refuse what would not work, naming the flag.
func TestBindingFlagErrors(t *testing.T) {
	hash, err := httpapi.HashPassword("s3cret")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-auth-users", "a:" + hash, "-auth-apps", "b=ORDERS"}, `-auth-apps: "b" is not an account`},
		{[]string{"-auth-users", "a:" + hash, "-auth-apps", "a"}, `is not USER=APP`},
		{[]string{"-auth-users", "a:" + hash, "-auth-apps", "a="}, `is not USER=APP`},
		{[]string{"-auth-users", "a:" + hash, "-auth-apps", "a=OR/DERS"}, `-auth-apps: a: "OR/DERS" is not an app name`},
		{[]string{"-auth-users", "a:" + hash, "-auth-operators", "b"}, `-auth-operators: "b" is not an account`},
		{[]string{"-auth-users", "a:" + hash, "-auth-apps", "cert:svc=ORDERS"}, `-auth-apps cert:svc: a certificate binding needs -tls-client-ca`},
	} {
		if _, err := parseOptions(c.args, noEnv, io.Discard); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v, want an error with %q", c.args, err, c.want)
		}
	}
	o, err := parseOptions([]string{"-auth-users", "a:" + hash + ",b:" + hash, "-auth-apps", "a=ORDERS,ORDERS-*;b=PAYMENTS", "-auth-apps", "a=BILLING", "-auth-operators", "b"}, noEnv, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if got := o.registry.API.Auth.Apps; strings.Join(got["a"], ",") != "ORDERS,ORDERS-*,BILLING" || strings.Join(got["b"], ",") != "PAYMENTS" {
		t.Errorf("bindings %v", got)
	}
	// The audit file is opened when the application is built: a path
	// that cannot be one fails the start, naming the flag.
	o, err = parseOptions([]string{"-addr", "127.0.0.1:0", "-auth-users", "a:" + hash, "-audit-log", filepath.Join(t.TempDir(), "no", "such", "dir")}, noEnv, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if err := fx.New(appOptions(o, zap.NewNop()), fx.NopLogger).Err(); err == nil || !strings.Contains(err.Error(), "-audit-log:") {
		t.Errorf("an audit log in a missing directory: %v", err)
	}
}

// The dashboard's api/summary tells what the signed-in account may write:
// a bound account its apps (and whether it is an operator), so that the
// page disables the other actions; an unbound account, or none yet,
// nothing (every action enabled).
func TestDashboardTellsWhatTheAccountMayWrite(t *testing.T) {
	hash, err := httpapi.HashPassword("s3cret")
	if err != nil {
		t.Fatal(err)
	}
	srv, _ := startNode(t, "-addr", "127.0.0.1:0", "-auth-users", "orders:"+hash+",oncall:"+hash+",free:"+hash,
		"-auth-apps", "orders=ORDERS,pay-*", "-auth-apps", "oncall=OPS", "-auth-operators", "oncall")
	for _, c := range []struct{ user, want string }{
		{"orders", `"may":{"apps":["ORDERS","PAY-*"],"operator":false}`},
		{"oncall", `"may":{"apps":["OPS"],"operator":true}`},
		{"free", ""},
		{"", ""},
	} {
		req, _ := http.NewRequest("GET", "http://"+srv.Addr().String()+"/api/summary", nil)
		if c.user != "" {
			req.SetBasicAuth(c.user, "s3cret")
		}
		resp, body := testkit.Do(t, http.DefaultClient, req)
		if resp.StatusCode != 200 {
			t.Fatalf("api/summary as %q: %d", c.user, resp.StatusCode)
		}
		got := regexp.MustCompile(`"may":\{[^}]*\}`).FindString(string(body))
		if got != c.want {
			t.Errorf("api/summary as %q: %q, want %q", c.user, got, c.want)
		}
	}
}

// The same over plain HTTP with the peer credential (-peer-auth, sent
// from the peer URLs' user info): bound accounts write their apps on
// either node, are refused the other's, and replication loses nothing.
func TestBoundAccountsWithThePeerCredential(t *testing.T) {
	hash, err := httpapi.HashPassword("s3cret")
	if err != nil {
		t.Fatal(err)
	}
	addrs := []string{testkit.FreeAddr(t), testkit.FreeAddr(t)}
	peers := "http://peer:s3cret@" + addrs[0] + "/eureka/,http://peer:s3cret@" + addrs[1] + "/eureka/"
	var stores []*registry.Store
	for n := range addrs {
		_, st := startNode(t, "-addr", addrs[n], "-dashboard-path", "off", "-peers", peers, "-self-url", "http://peer:s3cret@"+addrs[n]+"/eureka/",
			"-peer-auth", "peer:"+hash, "-auth-users", "orders:"+hash+",pay:"+hash,
			"-auth-apps", "orders=ORDERS", "-auth-apps", "pay=PAY-*")
		stores = append(stores, st)
	}
	// A first check of a credential may find the node's one bcrypt slot
	// taken by the peer's (503, which clients retry): asked again then.
	write := func(node int, user, method, path string, body []byte) int {
		t.Helper()
		var got int
		testkit.Eventually(t, 5*time.Second, "an answer other than 503", func() bool {
			got = testkit.StatusAs(t, method, "http://"+addrs[node]+"/eureka/apps/"+path, user, "s3cret", string(body))
			return got != http.StatusServiceUnavailable
		})
		return got
	}
	var want [][2]string
	for n := range 2 {
		for _, c := range []struct{ user, app string }{{"orders", "ORDERS"}, {"pay", "PAY-EU"}} {
			id := strings.ToLower(c.app) + "-" + string(rune('1'+n))
			if got := write(n, c.user, "POST", c.app, eureka.AppendInstanceJSON(nil, testkit.SpringInst(c.app, id))); got != 204 {
				t.Fatalf("%s registers %s on node %d: %d", c.user, id, n+1, got)
			}
			want = append(want, [2]string{c.app, id})
		}
		if got := write(n, "orders", "POST", "PAY-EU", eureka.AppendInstanceJSON(nil, testkit.SpringInst("PAY-EU", "intruder"))); got != 403 {
			t.Errorf("orders registers as PAY-EU on node %d: %d, want 403", n+1, got)
		}
	}
	if got := write(1, "pay", "PUT", "ORDERS/orders-1/status?value=OUT_OF_SERVICE", nil); got != 403 {
		t.Errorf("pay overrides an ORDERS instance: %d, want 403", got)
	}
	testkit.Eventually(t, 5*time.Second, "every registration on both nodes", func() bool {
		for _, s := range stores {
			for _, k := range want {
				if _, ok := s.Get(k[0], k[1]); !ok {
					return false
				}
			}
		}
		return true
	})
	for _, s := range stores {
		if _, ok := s.Get("PAY-EU", "intruder"); ok {
			t.Error("a refused registration reached a node")
		}
		if i, _ := s.Get("ORDERS", "orders-1"); i.Status != eureka.StatusUp {
			t.Errorf("a refused override took: %s", i.Status)
		}
	}
}
