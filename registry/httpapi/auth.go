package httpapi

import (
	"crypto/sha256"
	"encoding/base64"
	"net/http"
	"strings"
	"sync"

	"golang.org/x/crypto/bcrypt"
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
	// credentials too. Default: reads are open.
	RequireForReads bool
}

// enabled reports whether any credential is configured.
func (c *AuthConfig) enabled() bool {
	return len(c.Users) > 0 || c.Peer != nil || len(c.PeerCertNames) > 0
}

// authenticator checks basic credentials against bcrypt hashes, keeping
// the outcome of recent checks: bcrypt costs tens of milliseconds, and
// every instance sends a heartbeat every 30 s.
type authenticator struct {
	cfg AuthConfig

	mu    sync.Mutex
	cache map[[32]byte]string // sha256 of the header -> "user", "peer" or "" (refused)
}

const authCacheSize = 4096

func newAuthenticator(cfg AuthConfig) *authenticator {
	if !cfg.enabled() {
		return nil
	}
	return &authenticator{cfg: cfg, cache: map[[32]byte]string{}}
}

// who returns "user" or "peer" for valid credentials, "" otherwise.
func (a *authenticator) who(header string) string {
	key := sha256.Sum256([]byte(header))
	a.mu.Lock()
	role, ok := a.cache[key]
	a.mu.Unlock()
	if ok {
		return role
	}
	role = a.check(header)
	a.mu.Lock()
	if len(a.cache) >= authCacheSize {
		clear(a.cache)
	}
	a.cache[key] = role
	a.mu.Unlock()
	return role
}

func (a *authenticator) check(header string) string {
	encoded, ok := strings.CutPrefix(header, "Basic ")
	if !ok {
		return ""
	}
	raw, err := base64.StdEncoding.DecodeString(strings.TrimSpace(encoded))
	if err != nil {
		return ""
	}
	user, pass, ok := strings.Cut(string(raw), ":")
	if !ok {
		return ""
	}
	if p := a.cfg.Peer; p != nil && p.Username == user && bcrypt.CompareHashAndPassword([]byte(p.PasswordHash), []byte(pass)) == nil {
		return "peer"
	}
	for _, u := range a.cfg.Users {
		if u.Username == user && bcrypt.CompareHashAndPassword([]byte(u.PasswordHash), []byte(pass)) == nil {
			return "user"
		}
	}
	return ""
}

// allowed decides a request: write tells whether it changes the registry,
// peer whether it is peer replication.
func (a *authenticator) allowed(req *Request, write, peer bool) bool {
	if !write && !peer && !a.cfg.RequireForReads {
		return true
	}
	role := a.role(req)
	switch {
	case role == "":
		return false
	case peer && a.peerRestricted():
		return role == "peer"
	}
	return true
}

// unauthorized answers 401 with the basic-auth challenge.
func unauthorized(resp *Response) {
	resp.text(http.StatusUnauthorized, "credentials required")
	resp.Challenge = `Basic realm="eureka"`
}

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
		if a.auth.who(r.Header.Get("Authorization")) == "" {
			w.Header().Set("WWW-Authenticate", `Basic realm="eureka"`)
			http.Error(w, "credentials required", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	})
}
