package httpapi

import (
	"flag"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/eurekagate/eurekagate/eureka"
	"github.com/eurekagate/eurekagate/internal/testkit"
	"github.com/eurekagate/eurekagate/registry"
	"github.com/eurekagate/eurekagate/registry/audit"
	"github.com/eurekagate/eurekagate/registry/replication"
)

var updateAudit = flag.Bool("update-audit", false, "rewrite testdata/audit.golden")

// boundAuth is the configuration of the binding tests: orders bound to
// ORDERS, pay to the pattern PAY-*, ops an operator, free unbound, and
// the peer.
func boundAuth(t *testing.T, trail *audit.Log) AuthConfig {
	return AuthConfig{
		Users:     []Account{account(t, "orders", "o"), account(t, "pay", "p"), account(t, "ops", "x"), account(t, "free", "f")},
		Peer:      ptr(account(t, "peer", "p33r")),
		Apps:      map[string][]string{"orders": {"ORDERS"}, "pay": {"pay-*"}},
		Operators: []string{"ops"},
		Audit:     trail,
	}
}

// call sends a write as user and returns its status and body.
func call(t *testing.T, method, url, user, pass string, body []byte, headers ...string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(method, url, strings.NewReader(string(body)))
	req.Header.Set("Content-Type", "application/json")
	for n := 0; n+1 < len(headers); n += 2 {
		req.Header.Set(headers[n], headers[n+1])
	}
	if user != "" {
		req.SetBasicAuth(user, pass)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// A scripted session through both front doors: a bound account writes
// its app's instances and is refused (403, a reason naming no one) every
// write of another app's; a pattern binding; the operator overrides and
// cancels any app's; an unbound account writes as before; the peer
// replicates. The audit file holds exactly the refused and operator
// writes (testdata/audit.golden, times masked).
func TestBindingsAndAuditTrail(t *testing.T) {
	for _, door := range []string{"net/http", "fasthttp"} {
		t.Run(strings.ReplaceAll(door, "/", "-"), func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "audit.log")
			trail, err := audit.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			s, _ := newTestStore(t, registry.Config{})
			mustRegister(t, s, inst("PAYMENTS", "p1"), false)
			mustRegister(t, s, inst("PAY-EU", "e1"), false)
			base := frontDoorURLs(t, NewAPI(s, APIConfig{Auth: boundAuth(t, trail)}))[door] + "/eureka/apps/"
			reg := func(app, id string) []byte { return eureka.AppendInstanceJSON(nil, testkit.SpringInst(app, id)) }

			steps := []struct {
				method, path, user, pass string
				body                     []byte
				want                     int
			}{
				{"POST", "ORDERS", "orders", "o", reg("ORDERS", "o1"), 204},
				{"PUT", "ORDERS/o1", "orders", "o", nil, 200},
				{"PUT", "ORDERS/o1/status?value=OUT_OF_SERVICE", "orders", "o", nil, 200},
				{"DELETE", "ORDERS/o1/status", "orders", "o", nil, 200},
				{"PUT", "ORDERS/o1/metadata?zone=a", "orders", "o", nil, 200},
				{"POST", "PAYMENTS", "orders", "o", reg("PAYMENTS", "p2"), 403},
				{"PUT", "PAYMENTS/p1", "orders", "o", nil, 403},
				{"PUT", "PAYMENTS/p1/status?value=OUT_OF_SERVICE", "orders", "o", nil, 403},
				{"DELETE", "PAYMENTS/p1/status", "orders", "o", nil, 403},
				{"PUT", "PAYMENTS/p1/metadata?zone=a", "orders", "o", nil, 403},
				{"DELETE", "PAYMENTS/p1", "orders", "o", nil, 403},
				{"DELETE", "ORDERS/o1", "orders", "o", nil, 200},
				{"POST", "PAY-EU", "pay", "p", reg("PAY-EU", "e2"), 204},
				{"PUT", "pay-eu/e1", "pay", "p", nil, 200},
				{"POST", "PAYMENTS", "pay", "p", reg("PAYMENTS", "p3"), 403},
				{"PUT", "PAYMENTS/p1/status?value=OUT_OF_SERVICE", "ops", "x", nil, 200},
				{"DELETE", "PAYMENTS/p1/status", "ops", "x", nil, 200},
				{"DELETE", "PAY-EU/e1", "ops", "x", nil, 200},
				{"PUT", "PAYMENTS/p1/metadata?zone=b", "free", "f", nil, 200},
				{"PUT", "PAYMENTS/p1/status?value=OUT_OF_SERVICE", "free", "f", nil, 200},
			}
			for _, st := range steps {
				got, body := call(t, st.method, base+st.path, st.user, st.pass, st.body)
				if got != st.want {
					t.Errorf("%s %s as %s: %d %q, want %d", st.method, st.path, st.user, got, body, st.want)
				}
				if got == 403 && (strings.Contains(body, "orders") || strings.Contains(body, "pay")) {
					t.Errorf("%s %s: the refusal names a credential: %q", st.method, st.path, body)
				}
				if got == 403 && st.method == "PUT" && !strings.Contains(st.path, "/status") && !strings.Contains(st.path, "/metadata") && body != "" {
					t.Errorf("a refused heartbeat has a body: %q", body)
				}
			}
			if _, ok := s.Get("PAYMENTS", "p2"); ok {
				t.Error("a refused registration is in the registry")
			}
			if _, ok := s.Get("PAYMENTS", "p3"); ok {
				t.Error("a refused pattern registration is in the registry")
			}
			if _, ok := s.Get("PAY-EU", "e1"); ok {
				t.Error("the operator's cancel did not take")
			}

			// Replication: a bound account's is refused (401 with a peer
			// configured, as now, and audited), the peer's taken.
			batch := replication.AppendBatch(nil, []replication.Item{{Action: replication.ActionCancel, AppName: "PAYMENTS", ID: "p1"}})
			if got, _ := call(t, "POST", strings.TrimSuffix(base, "apps/")+"peerreplication/batch", "orders", "o", batch); got != 401 {
				t.Errorf("a bound account's batch: %d", got)
			}
			if got, _ := call(t, "POST", strings.TrimSuffix(base, "apps/")+"peerreplication/batch", "peer", "p33r", batch); got != 200 {
				t.Errorf("the peer's batch: %d", got)
			}
			if _, ok := s.Get("PAYMENTS", "p1"); ok {
				t.Error("the peer's cancel did not take")
			}

			if err := trail.Close(); err != nil {
				t.Fatal(err)
			}
			raw, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o600 {
				t.Errorf("audit file mode %v, want 0600", fi.Mode().Perm())
			}
			masked := regexp.MustCompile(`"time":"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z"`).ReplaceAllString(string(raw), `"time":"T"`)
			checkAuditGolden(t, masked)
		})
	}
}

func checkAuditGolden(t *testing.T, got string) {
	t.Helper()
	want, err := os.ReadFile("testdata/audit.golden")
	if *updateAudit {
		err = os.WriteFile("testdata/audit.golden", []byte(got), 0o644)
		want = []byte(got)
	}
	if err != nil {
		t.Fatal(err)
	}
	if got != string(want) {
		t.Errorf("audit trail differs from testdata/audit.golden (go test -update-audit rewrites it):\n--- got\n%s--- want\n%s", got, want)
	}
}

// Patterns: * stands for any run of characters, none included; the rest
// is matched as written (upper case, as routes hold app names).
func TestAppPatterns(t *testing.T) {
	set := newAppSet([]string{"orders", "pay-*", "*-EU", "A*B*C", "X.Y"})
	for app, want := range map[string]bool{
		"ORDERS": true, "ORDERS2": false, "PAY-": true, "PAY-EU": true, "PAYMENTS": false,
		"BILLING-EU": true, "-EU": true, "EU": false, "ABC": true, "AXXBYYC": true, "ACB": false, "ABCB": false,
		"X.Y": true, "XAY": false,
	} {
		if got := set.has(app); got != want {
			t.Errorf("%s: %v, want %v", app, got, want)
		}
	}
}

// Without a peer credential, replication is open to accounts as before,
// but not to a bound account or an operator: a batch, or a write marked
// as replicated, would reach other apps' instances (403, audited).
func TestBoundAccountsSendNoReplication(t *testing.T) {
	s, _ := newTestStore(t, registry.Config{})
	mustRegister(t, s, inst("PAYMENTS", "p1"), false)
	var trail strings.Builder
	log := audit.New(&trail, nil, 16)
	cfg := AuthConfig{Users: []Account{account(t, "orders", "o"), account(t, "ops", "x"), account(t, "free", "f")},
		Apps: map[string][]string{"orders": {"ORDERS"}}, Operators: []string{"ops"}, Audit: log}
	base := frontDoorURLs(t, NewAPI(s, APIConfig{Auth: cfg}))["fasthttp"] + "/eureka/"
	batch := replication.AppendBatch(nil, []replication.Item{{Action: replication.ActionCancel, AppName: "PAYMENTS", ID: "p1"}})
	for _, user := range []string{"orders", "ops"} {
		pass := map[string]string{"orders": "o", "ops": "x"}[user]
		if got, body := call(t, "POST", base+"peerreplication/batch", user, pass, batch); got != 403 || body != refusedReplication {
			t.Errorf("%s's batch: %d %q", user, got, body)
		}
		if got, _ := call(t, "PUT", base+"apps/ORDERS/o1", user, pass, nil, "x-netflix-discovery-replication", "true"); got != 403 {
			t.Errorf("%s's replicated heartbeat: %d", user, got)
		}
	}
	if _, ok := s.Get("PAYMENTS", "p1"); !ok {
		t.Fatal("a refused batch cancelled p1")
	}
	if got, _ := call(t, "POST", base+"peerreplication/batch", "free", "f", batch); got != 200 {
		t.Errorf("an unbound account's batch without a peer credential: %d, want 200 as before", got)
	}
	log.Close()
	n := 0
	for _, line := range strings.Split(trail.String(), "\n") {
		if strings.Contains(line, `"action":"replication"`) && strings.HasSuffix(line, `"outcome":"refused","status":403}`) {
			n++
		}
	}
	if n != 4 || strings.Count(trail.String(), "\n") != 4 {
		t.Errorf("%d refused replications audited, want 4:\n%s", n, trail.String())
	}
}
