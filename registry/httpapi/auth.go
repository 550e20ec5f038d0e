package httpapi

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"net/netip"
	"runtime"
	"strings"
	"sync"

	"golang.org/x/crypto/bcrypt"

	"github.com/eurekagate/eurekagate/registry/audit"
)

// Account is a user name and the bcrypt hash of its password, as Caddy's
// basic_auth takes them (`caddy hash-password` or `eureka -hash-password`
// make one).
type Account struct {
	Username     string `json:"username"`
	PasswordHash string `json:"password_hash"`
}

// AuthConfig makes the REST API require HTTP basic auth. With no account
// configured everything is open, which suits a registry that listens on
// loopback only.
//
// Checking a password costs a bcrypt comparison (tens of milliseconds), so
// the outcome is remembered: a credential that passed is not checked again,
// and refusals are remembered apart, so that a flood of wrong passwords
// never pushes the valid credentials out. At most max(1, GOMAXPROCS/4)
// checks run at once, given in turn to the client addresses that wait for
// one, and after a check that refused the credentials its address rests
// four times as long as the check took (checkqueue.go): wrong passwords
// from one address keep its bcrypt work under a fifth of a slot's time and
// delay another address's first check by at most one check. A request
// waits for its check at most CheckMaxWait (2 s), then is answered 503
// with Retry-After; so is at once a request beyond its address's queue
// (CheckQueuePerAddress). The clients whose credentials are known go on
// being served without waiting. Requests that carry the same
// credentials share one check. A user name that does not exist costs a
// comparison at the same bcrypt cost as one that does, so the answer time
// does not tell them apart.
type AuthConfig struct {
	// Users may read and write (register, heartbeat, cancel, override).
	// When any account is configured, every write needs credentials.
	Users []Account
	// Peer is the credential of the other registry nodes. When set, only it
	// may send peer replication (the batch endpoint and requests marked as
	// replicated), and it may also read and write like a user.
	Peer *Account
	// PeerCertNames are the identities of the other registry nodes' TLS
	// client certificates: a request on a connection whose client
	// certificate the server verified (ServerConfig.TLS with a client CA)
	// and whose common name or a DNS name is listed is the peer, as if it
	// had sent Peer's credential. Either identifies the peer; when either
	// is set, only the peer may send replication. Default: none.
	PeerCertNames []string
	// RequireForReads makes reads (fetches, instance lookups, status) need
	// credentials too. It needs an account (Check refuses it alone).
	// Default: reads are open.
	RequireForReads bool
	// Apps binds accounts, by user name, to the applications they may
	// write: names or patterns with * (ORDERS, ORDERS-*), matched without
	// regard to case. A bound account may register, renew, cancel and
	// change the status and metadata only of instances of those apps, and
	// register only under those names, VIP addresses included (Spring's
	// are the app's name; another VIP must be bound too, 403 otherwise);
	// it may not send replication. An
	// account without a binding keeps every right of a user. Default: none
	// bound. See authz.go.
	Apps map[string][]string
	// CertApps binds TLS client certificates, by common or DNS name, to
	// apps as Apps binds accounts: a certificate the server verified
	// (ServerConfig.TLS with a client CA) whose name is listed
	// authenticates its client, with the rights of its binding. Default:
	// none.
	CertApps map[string][]string
	// Operators are accounts, by user name, that may override the status
	// of any app's instances, remove overrides, and cancel them, whatever
	// their binding; each such write is audited. Default: none.
	Operators []string
	// ExternalUsers says that the host authenticates users itself (Caddy's
	// basic_auth in front of eureka_server) and passes each request's user
	// with WithClient: Apps and Operators then name those users, and are
	// not checked against Users. Default: false, the users are Users.
	ExternalUsers bool
	// Audit, if set, receives one line per write refused to a credential
	// and per write of the operator role (audit.Open makes one; its owner
	// closes it after the server stops). Default: none.
	Audit *audit.Log
}

// Enabled reports whether any credential is configured that the API
// checks itself. A certificate binding is one only when the API knows the
// users: with ExternalUsers the host authenticates (Caddy verifies the
// certificates), and a check of its users' passwords against no account
// would refuse them all.
func (c *AuthConfig) Enabled() bool {
	return len(c.Users) > 0 || c.Peer != nil || len(c.PeerCertNames) > 0 || len(c.CertApps) > 0 && !c.ExternalUsers
}

// Check reports a configuration that would not do what it says:
// RequireForReads without any account (everything would stay open), an
// account without a user name, or a password hash that is not a bcrypt
// hash (that account could never log in), and a binding or an operator
// that names no account or an app pattern that is not one (checkBindings).
// NewAPI does not call it; servers call it before they start.
func (c *AuthConfig) Check() error {
	if c.RequireForReads && !c.Enabled() {
		return errors.New("closing reads needs an account: RequireForReads (-auth-reads) is set without any user (-auth-users)")
	}
	accounts := c.Users
	if c.Peer != nil {
		accounts = append(accounts[:len(accounts):len(accounts)], *c.Peer)
	}
	for _, a := range accounts {
		if a.Username == "" {
			return errors.New("an account has no user name")
		}
		if _, err := bcrypt.Cost([]byte(a.PasswordHash)); err != nil {
			return fmt.Errorf("the password hash of %q is not a bcrypt hash (%v); make one with eureka -hash-password or caddy hash-password", a.Username, err)
		}
	}
	return c.checkBindings()
}

// role is what a credential is allowed to be.
type role uint8

const (
	refused role = iota // unknown user or wrong password
	asUser
	asPeer
	busy // no check could run: every bcrypt slot was taken
)

// Cache sizes. Valid credentials are at most one per account, unless a
// client that knows a password varies what bcrypt ignores (beyond 72
// bytes); refusals are anyone's.
const (
	validCacheSize   = 1024
	refusedCacheSize = 4096
)

// authenticator checks basic credentials against bcrypt hashes, keeping
// the outcome of recent checks: bcrypt costs tens of milliseconds, and
// every instance sends a heartbeat every 30 s.
type authenticator struct {
	cfg   AuthConfig
	dummy []byte      // a hash at the accounts' cost, compared for unknown users
	queue *checkQueue // who gets a bcrypt slot, and when

	validMax, refusedMax int // cache sizes

	mu      sync.RWMutex
	valid   map[[32]byte]role
	refused map[[32]byte]struct{}
	pending map[[32]byte]*check // checks in progress, shared by requests with the same credentials
}

// check is a bcrypt check in progress; result is set before done closes.
type check struct {
	done   chan struct{}
	result role
}

// authSlots is how many bcrypt checks may run at once: max(1, GOMAXPROCS/4).
func authSlots() int { return max(1, runtime.GOMAXPROCS(0)/4) }

func newAuthenticator(cfg AuthConfig) *authenticator {
	if !cfg.Enabled() {
		return nil
	}
	a := &authenticator{cfg: cfg, queue: newCheckQueue(authSlots()), validMax: validCacheSize, refusedMax: refusedCacheSize,
		valid: map[[32]byte]role{}, refused: map[[32]byte]struct{}{}, pending: map[[32]byte]*check{}}
	cost := bcrypt.MinCost
	for _, u := range append(cfg.Users[:len(cfg.Users):len(cfg.Users)], derefAccount(cfg.Peer)...) {
		if c, err := bcrypt.Cost([]byte(u.PasswordHash)); err == nil {
			cost = max(cost, c)
		}
	}
	secret := make([]byte, 16)
	rand.Read(secret)
	a.dummy, _ = bcrypt.GenerateFromPassword([]byte(base64.StdEncoding.EncodeToString(secret)), cost)
	return a
}

func derefAccount(a *Account) []Account {
	if a == nil {
		return nil
	}
	return []Account{*a}
}

// parseBasic reads an Authorization header of the Basic scheme, whose name
// is matched case-insensitively (RFC 9110).
func parseBasic(header string) (user, pass string, ok bool) {
	scheme, encoded, found := strings.Cut(strings.TrimSpace(header), " ")
	if !found || !strings.EqualFold(scheme, "Basic") {
		return "", "", false
	}
	raw, err := base64.StdEncoding.DecodeString(strings.TrimSpace(encoded))
	if err != nil {
		return "", "", false
	}
	return strings.Cut(string(raw), ":")
}

// who returns the role of the credentials in header sent by the client at
// addr: from the caches, from a check in progress for the same
// credentials, or from a new check once the client's turn comes (busy if
// it does not within the wait bound).
func (a *authenticator) who(header string, addr netip.Addr) role {
	r, _ := a.whoIs(header, addr)
	return r
}

// whoIs is who, with the user name the credentials in header give.
func (a *authenticator) whoIs(header string, addr netip.Addr) (role, string) {
	user, pass, ok := parseBasic(header)
	if !ok {
		return refused, ""
	}
	key := sha256.Sum256([]byte(user + ":" + pass)) // a user name has no colon
	// Under the read lock, so that known clients take no lock that
	// others wait for. The check is registered before it waits for its
	// turn, so requests that bring the same credentials share its wait
	// and its outcome.
	a.mu.RLock()
	r, c, ok := a.lookup(key)
	a.mu.RUnlock()
	switch {
	case ok:
		return r, user
	case c != nil:
		<-c.done
		return c.result, user
	case a.queue.full(addr):
		return busy, user
	}
	a.mu.Lock()
	if r, c, ok := a.lookup(key); ok || c != nil { // done or started meanwhile
		a.mu.Unlock()
		if c != nil {
			<-c.done
			return c.result, user
		}
		return r, user
	}
	c = &check{done: make(chan struct{})}
	a.pending[key] = c
	a.mu.Unlock()

	if a.queue.acquire(addr) {
		started := a.queue.clock.Now()
		c.result = a.compare(user, pass)
		a.queue.release(addr, c.result == refused, a.queue.clock.Now().Sub(started))
	} else {
		c.result = busy
	}

	a.mu.Lock()
	delete(a.pending, key)
	switch c.result {
	case busy: // not checked: nothing to remember
	case refused:
		if len(a.refused) >= a.refusedMax {
			clear(a.refused)
		}
		a.refused[key] = struct{}{}
	default:
		if len(a.valid) >= a.validMax {
			clear(a.valid)
		}
		a.valid[key] = c.result
	}
	a.mu.Unlock()
	close(c.done)
	return c.result, user
}

// lookup returns the known outcome for key (ok), or the check in progress
// for it. The caller holds the lock.
func (a *authenticator) lookup(key [32]byte) (r role, c *check, ok bool) {
	if r, ok := a.valid[key]; ok {
		return r, nil, true
	}
	if _, ok := a.refused[key]; ok {
		return refused, nil, true
	}
	return refused, a.pending[key], false
}

// compare runs bcrypt: against the account of that name, or against a
// dummy hash at the same cost when there is none.
func (a *authenticator) compare(user, pass string) role {
	found := false
	if p := a.cfg.Peer; p != nil && p.Username == user {
		found = true
		if bcrypt.CompareHashAndPassword([]byte(p.PasswordHash), []byte(pass)) == nil {
			return asPeer
		}
	}
	for _, u := range a.cfg.Users {
		if u.Username == user {
			found = true
			if bcrypt.CompareHashAndPassword([]byte(u.PasswordHash), []byte(pass)) == nil {
				return asUser
			}
		}
	}
	if !found {
		bcrypt.CompareHashAndPassword(a.dummy, []byte(pass))
	}
	return refused
}

// decide answers whether a request may go on: 0 if so, else the status
// to answer (401, or 503 when its credentials could not be checked). write
// tells whether it changes the registry, peer whether it is peer
// replication.
func (a *authenticator) decide(req *Request, write, peer bool) int {
	if !write && !peer && !a.cfg.RequireForReads {
		return 0
	}
	r, user := a.role(req)
	req.checked, req.checkedUser, req.known = r, user, true
	switch {
	case r == busy:
		return http.StatusServiceUnavailable
	case r == refused:
		return http.StatusUnauthorized
	case peer && a.peerRestricted() && r != asPeer:
		return http.StatusUnauthorized
	}
	return 0
}

// authFailed answers a refused request: 401 with the basic-auth challenge,
// or 503 when its credentials could not be checked in time.
func authFailed(resp *Response, status int) {
	if status == http.StatusServiceUnavailable {
		resp.text(status, busyMessage)
		resp.RetryAfter = busyRetryAfter
		return
	}
	resp.text(http.StatusUnauthorized, "credentials required")
	resp.Challenge = `Basic realm="eureka"`
}

const busyMessage = "too many credential checks in progress; retry"

// busyRetryAfter is the Retry-After of a 503 for want of a check, in
// seconds: a client's queue moves by a check every few tens of
// milliseconds, more when it sent wrong passwords.
const busyRetryAfter = "1"

// HashPassword returns the bcrypt hash of password, for AuthConfig.
func HashPassword(password string) (string, error) {
	h, err := bcrypt.GenerateFromPassword([]byte(password), bcrypt.DefaultCost)
	return string(h), err
}

// Protect wraps an operator page (a dashboard, metrics) with the API's
// credentials: when any account is configured, every request needs one,
// and the browser is challenged for it. The browser then sends the same
// credentials with the page's own API calls.
func (a *API) Protect(h http.Handler) http.Handler {
	if a.auth == nil {
		return h
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch a.auth.who(r.Header.Get("Authorization"), remoteAddr(r)) {
		case busy:
			w.Header().Set("Retry-After", busyRetryAfter)
			http.Error(w, busyMessage, http.StatusServiceUnavailable)
		case refused:
			w.Header().Set("WWW-Authenticate", `Basic realm="eureka"`)
			http.Error(w, "credentials required", http.StatusUnauthorized)
		default:
			h.ServeHTTP(w, r)
		}
	})
}
