package httpapi

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/eurekagate/eurekagate/eureka"
	"github.com/eurekagate/eurekagate/internal/testkit"
	"github.com/eurekagate/eurekagate/registry"
	"github.com/eurekagate/eurekagate/registry/replication"
)

func account(t *testing.T, user, password string) Account {
	h, err := bcrypt.GenerateFromPassword([]byte(password), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	return Account{Username: user, PasswordHash: string(h)}
}

func authCall(t *testing.T, method, url, user, pass string, body []byte, headers ...string) *http.Response {
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
	resp.Body.Close()
	return resp
}

func TestAuth(t *testing.T) {
	s, _ := newTestStore(t, registry.Config{})
	cfg := AuthConfig{Users: []Account{account(t, "ops", "s3cret")}, Peer: ptr(account(t, "peer", "p33r"))}
	srv := httptest.NewServer(NewHTTPHandler(NewAPI(s, APIConfig{Auth: cfg})))
	defer srv.Close()
	base := srv.URL + "/eureka/"
	body := eureka.AppendInstanceJSON(nil, inst("A", "x"))

	resp := authCall(t, "POST", base+"apps/A", "", "", body)
	if resp.StatusCode != 401 || resp.Header.Get("WWW-Authenticate") != `Basic realm="eureka"` {
		t.Fatalf("write without credentials: %d %q", resp.StatusCode, resp.Header.Get("WWW-Authenticate"))
	}
	if resp := authCall(t, "POST", base+"apps/A", "ops", "wrong", body); resp.StatusCode != 401 {
		t.Fatalf("wrong password: %d", resp.StatusCode)
	}
	if s.Len() != 0 {
		t.Fatal("a refused write changed the registry")
	}
	if resp := authCall(t, "POST", base+"apps/A", "ops", "s3cret", body); resp.StatusCode != 204 {
		t.Fatalf("write with credentials: %d", resp.StatusCode)
	}
	for _, m := range []string{"PUT", "DELETE"} {
		if resp := authCall(t, m, base+"apps/A/x", "", "", nil); resp.StatusCode != 401 {
			t.Errorf("%s without credentials: %d", m, resp.StatusCode)
		}
	}
	if resp := authCall(t, "GET", base+"apps/", "", "", nil); resp.StatusCode != 200 {
		t.Errorf("reads are open by default: %d", resp.StatusCode)
	}

	// Peer replication needs the peer credential, not a user's.
	batch := replication.AppendBatch(nil, []replication.Item{{Action: replication.ActionHeartbeat, AppName: "A", ID: "x"}})
	if resp := authCall(t, "POST", base+"peerreplication/batch/", "ops", "s3cret", batch); resp.StatusCode != 401 {
		t.Errorf("batch with a user's credential: %d", resp.StatusCode)
	}
	if resp := authCall(t, "PUT", base+"apps/A/x", "ops", "s3cret", nil, "x-netflix-discovery-replication", "true"); resp.StatusCode != 401 {
		t.Errorf("replicated heartbeat with a user's credential: %d", resp.StatusCode)
	}
	if resp := authCall(t, "POST", base+"peerreplication/batch/", "peer", "p33r", batch); resp.StatusCode != 200 {
		t.Errorf("batch with the peer credential: %d", resp.StatusCode)
	}

	// Reads can be closed too.
	closed := httptest.NewServer(NewHTTPHandler(NewAPI(s, APIConfig{Auth: AuthConfig{Users: cfg.Users, RequireForReads: true}})))
	defer closed.Close()
	if resp := authCall(t, "GET", closed.URL+"/eureka/apps/", "", "", nil); resp.StatusCode != 401 {
		t.Errorf("closed reads without credentials: %d", resp.StatusCode)
	}
	if resp := authCall(t, "GET", closed.URL+"/eureka/apps/", "ops", "s3cret", nil); resp.StatusCode != 200 {
		t.Errorf("closed reads with credentials: %d", resp.StatusCode)
	}
}

// Nodes that require the peer credential replicate to each other with the
// credentials in their peer URLs.
func TestPeersAuthenticate(t *testing.T) {
	peerAcct := account(t, "peer", "p33r")
	clock := testkit.NewFakeClock()
	addrs := []string{testkit.FreeAddr(t), testkit.FreeAddr(t)}
	var stores []*registry.Store
	for n := range 2 {
		s := registry.New(registry.Config{Clock: clock})
		other := addrs[1-n]
		p, err := replication.New(s, replication.Config{Peers: []string{"http://peer:p33r@" + other + "/eureka/"}})
		if err != nil {
			t.Fatal(err)
		}
		srv := NewServer(NewAPI(s, APIConfig{Auth: AuthConfig{Users: []Account{account(t, "ops", "x")}, Peer: &peerAcct}}),
			ServerConfig{Addr: addrs[n]})
		if err := srv.Start(); err != nil {
			t.Fatal(err)
		}
		p.Start()
		t.Cleanup(func() { p.Stop(); srv.Stop(t.Context()) })
		stores = append(stores, s)
	}
	mustRegister(t, stores[0], inst("A", "x"), false)
	testkit.Eventually(t, 2*time.Second, "replication with credentials", func() bool { _, ok := stores[1].Get("A", "x"); return ok })
}

func ptr[T any](v T) *T { return &v }
