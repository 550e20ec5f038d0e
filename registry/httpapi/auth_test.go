package httpapi

import (
	"encoding/base64"
	"fmt"
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
	return Account{Username: user, PasswordHash: testkit.PasswordHash(t, password)}
}

func authCall(t *testing.T, method, url, user, pass string, body []byte, headers ...string) *http.Response {
	t.Helper()
	req, _ := http.NewRequest(method, url, strings.NewReader(string(body)))
	req.Header.Set("Content-Type", "application/json")
	testkit.SetHeaders(req, headers...)
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
	api := NewAPI(s, APIConfig{Auth: cfg})
	api.auth.queue.rest = 0 // a refusal and a valid password in a row
	srv := httptest.NewServer(NewHTTPHandler(api))
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

// newCost8AuthAPI is an API over a store holding instance A/x, with one
// account, "ops" with password "s3cret", hashed at bcrypt cost 8: dear
// enough that a check's time and its slot can be seen.
func newCost8AuthAPI(t *testing.T) *API {
	t.Helper()
	s, _ := newTestStore(t, registry.Config{})
	mustRegister(t, s, inst("A", "x"), false)
	hash, err := bcrypt.GenerateFromPassword([]byte("s3cret"), 8)
	if err != nil {
		t.Fatal(err)
	}
	return NewAPI(s, APIConfig{Auth: AuthConfig{Users: []Account{{Username: "ops", PasswordHash: string(hash)}}}})
}

// frontDoorURLs serves api on loopback through both front doors and
// returns their base URLs by name.
func frontDoorURLs(t *testing.T, api *API) map[string]string {
	t.Helper()
	nh := httptest.NewServer(NewHTTPHandler(api))
	t.Cleanup(nh.Close)
	srv := NewServer(api, ServerConfig{Addr: "127.0.0.1:0"})
	startForTest(t, srv)
	return map[string]string{"net/http": nh.URL, "fasthttp": "http://" + srv.Addr().String()}
}

// rawAuthPut sends a heartbeat with the given Authorization header.
func rawAuthPut(t *testing.T, url, authorization string) int {
	t.Helper()
	req, _ := http.NewRequest("PUT", url, nil)
	if authorization != "" {
		req.Header.Set("Authorization", authorization)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

func basic(user, pass string) string {
	return base64.StdEncoding.EncodeToString([]byte(user + ":" + pass))
}

// The Basic scheme's name is matched case-insensitively, as RFC 9110 says.
func TestBasicSchemeIsCaseInsensitive(t *testing.T) {
	s, _ := newTestStore(t, registry.Config{})
	mustRegister(t, s, inst("A", "x"), false)
	api := NewAPI(s, APIConfig{Auth: AuthConfig{Users: []Account{account(t, "ops", "s3cret")}}})
	for name, base := range frontDoorURLs(t, api) {
		t.Run(name, func(t *testing.T) {
			url := base + "/eureka/apps/A/x"
			for _, h := range []string{"Basic " + basic("ops", "s3cret"), "basic " + basic("ops", "s3cret"),
				"BASIC  " + basic("ops", "s3cret"), " bAsIc " + basic("ops", "s3cret") + " "} {
				if got := rawAuthPut(t, url, h); got != 200 {
					t.Errorf("%q: %d", h, got)
				}
			}
			for _, h := range []string{"Bearer " + basic("ops", "s3cret"), "Basic" + basic("ops", "s3cret"), "Basic !!", "Basic " + basic("ops", "wrong")} {
				if got := rawAuthPut(t, url, h); got != 401 {
					t.Errorf("%q: %d, want 401", h, got)
				}
			}
		})
	}
}

// A flood of distinct wrong passwords neither evicts the valid
// credentials nor runs more bcrypt checks at once than there are slots:
// with every slot taken, a request with unchecked credentials is answered
// 503 with Retry-After once the wait bound passes (here 50 ms) while known
// clients go on being served.
func TestAuthFloodKeepsValidCredentials(t *testing.T) {
	s, _ := newTestStore(t, registry.Config{})
	mustRegister(t, s, inst("A", "x"), false)
	api := NewAPI(s, APIConfig{Auth: AuthConfig{Users: []Account{account(t, "ops", "s3cret")}}})
	a := api.auth
	a.refusedMax = 16
	a.queue.rest = 0 // many refusals in a row
	a.queue.maxWait = 50 * time.Millisecond
	for name, base := range frontDoorURLs(t, api) {
		t.Run(name, func(t *testing.T) {
			url := base + "/eureka/apps/A/x"
			valid := "Basic " + basic("ops", "s3cret")
			if got := rawAuthPut(t, url, valid); got != 200 {
				t.Fatalf("valid: %d", got)
			}
			for n := range 100 {
				if got := rawAuthPut(t, url, "Basic "+basic("ops", fmt.Sprint(name, n))); got != 401 {
					t.Fatalf("wrong password %d: %d", n, got)
				}
			}
			a.mu.RLock()
			valids, refusals := len(a.valid), len(a.refused)
			a.mu.RUnlock()
			if valids != 1 || refusals > 16 {
				t.Fatalf("caches: %d valid, %d refused (at most 16)", valids, refusals)
			}

			// Every slot taken, as by a flood in progress.
			a.queue.mu.Lock()
			a.queue.running += a.queue.slots
			a.queue.mu.Unlock()
			defer func() {
				a.queue.mu.Lock()
				a.queue.running -= a.queue.slots
				a.queue.mu.Unlock()
			}()
			start := time.Now()
			if got := rawAuthPut(t, url, "Basic "+basic("ops", "yet another")); got != 503 {
				t.Errorf("unchecked credentials while saturated: %d, want 503", got)
			}
			if got := rawAuthPut(t, url, "Basic "+basic("nobody", "x")); got != 503 {
				t.Errorf("unknown user while saturated: %d, want 503", got)
			}
			if took := time.Since(start); took > time.Second {
				t.Errorf("refusals waited %v", took)
			}
			for range 10 {
				if got := rawAuthPut(t, url, valid); got != 200 {
					t.Fatalf("valid while saturated: %d", got)
				}
			}
		})
	}
}

// Requests that bring the same new credentials at once share one check:
// none of them is turned away for want of a slot.
func TestSameCredentialsShareOneCheck(t *testing.T) {
	api := newCost8AuthAPI(t)
	for name, base := range frontDoorURLs(t, api) {
		t.Run(name, func(t *testing.T) {
			api.auth.mu.Lock()
			clear(api.auth.valid)
			api.auth.mu.Unlock()
			codes := make(chan int, 20)
			for range cap(codes) {
				go func() { codes <- rawAuthPut(t, base+"/eureka/apps/A/x", "Basic "+basic("ops", "s3cret")) }()
			}
			for range cap(codes) {
				if got := <-codes; got != 200 {
					t.Errorf("concurrent first request: %d", got)
				}
			}
		})
	}
}

// An unknown user costs a bcrypt comparison at the accounts' cost, like a
// wrong password for a real one: the answer time does not tell whether a
// user exists.
func TestUnknownUserCostsAsMuchAsAKnownOne(t *testing.T) {
	api := newCost8AuthAPI(t)
	api.auth.queue.rest = 0 // refusals in a row
	if c, err := bcrypt.Cost(api.auth.dummy); err != nil || c != 8 {
		t.Fatalf("dummy hash cost %d, %v; want 8", c, err)
	}
	base := frontDoorURLs(t, api)["fasthttp"]
	// In turn, so that the machine's other load weighs on both alike.
	var known, unknown time.Duration
	for n := range 6 {
		for _, user := range []string{"ops", "nobody"} {
			start := time.Now()
			if got := rawAuthPut(t, base+"/eureka/apps/A/x", "Basic "+basic(user, fmt.Sprint("guess", n))); got != 401 {
				t.Fatalf("%s: %d", user, got)
			}
			if user == "ops" {
				known += time.Since(start)
			} else {
				unknown += time.Since(start)
			}
		}
	}
	if unknown < known/3 {
		t.Errorf("unknown users answered in %v in all, a known one in %v", unknown, known)
	}
}

// Check refuses what would not work as configured.
func TestAuthConfigCheck(t *testing.T) {
	good := account(t, "ops", "x")
	for _, c := range []struct {
		cfg  AuthConfig
		want string
	}{
		{AuthConfig{RequireForReads: true}, "RequireForReads (-auth-reads) is set without any user"},
		{AuthConfig{Users: []Account{{Username: "ops", PasswordHash: "$2a$10$short"}}}, `the password hash of "ops" is not a bcrypt hash`},
		{AuthConfig{Users: []Account{good}, Peer: &Account{Username: "peer", PasswordHash: "plain"}}, `the password hash of "peer"`},
		{AuthConfig{Users: []Account{{PasswordHash: good.PasswordHash}}}, "no user name"},
	} {
		if err := c.cfg.Check(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want %q", c.cfg, err, c.want)
		}
	}
	for _, ok := range []AuthConfig{{}, {Users: []Account{good}, RequireForReads: true}, {Peer: &good}} {
		if err := ok.Check(); err != nil {
			t.Errorf("%+v: %v", ok, err)
		}
	}
}

// After a check that refused, its address rests (by default four times as
// long as the check took): its unchecked credentials meanwhile wait, and
// get 503 when the wait bound passes first, a refusal already made is
// answered from the cache, and the address is then served again.
func TestRefusalRestsTheSlot(t *testing.T) {
	api := newCost8AuthAPI(t)
	api.auth.queue.slots = 1
	api.auth.queue.rest = 20 // a rest long enough to be seen over HTTP on a busy machine
	api.auth.queue.maxWait = 50 * time.Millisecond
	url := frontDoorURLs(t, api)["fasthttp"] + "/eureka/apps/A/x"
	if got := rawAuthPut(t, url, "Basic "+basic("ops", "first guess")); got != 401 {
		t.Fatalf("wrong password: %d", got)
	}
	if got := rawAuthPut(t, url, "Basic "+basic("ops", "second guess")); got != 503 {
		t.Errorf("during the rest: %d, want 503", got)
	}
	if got := rawAuthPut(t, url, "Basic "+basic("ops", "first guess")); got != 401 {
		t.Errorf("a cached refusal during the rest: %d, want 401", got)
	}
	testkit.Eventually(t, 10*time.Second, "the slot to serve again", func() bool {
		return rawAuthPut(t, url, "Basic "+basic("ops", "s3cret")) == 200
	})
}
