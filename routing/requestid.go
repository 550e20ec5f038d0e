package routing

// A client's request id: what reaches the instance, and its logs, under
// the gateway's name. Envoy keeps a client's id only from its trusted
// edges; Heroku's router keeps one of a safe form and length. The
// gateways do both: any other id (quotes, backslashes, control or
// non-ASCII bytes, 8 KB of anything) is replaced by a new one, and
// exactly one id reaches the instance.

const (
	// MinRequestIDLen is the shortest X-Request-Id the gateways keep from
	// a client that is not a trusted proxy: 20 characters, Heroku's
	// router's bound.
	MinRequestIDLen = 20
	// MaxRequestIDLen is the longest: 200 characters, Heroku's.
	MaxRequestIDLen = 200
)

// KeepRequestID reports whether a client's X-Request-Id v reaches the
// instance as it came: from a trusted proxy (Config.TrustedProxies),
// any id but an empty one; from any other client, only an id of
// MinRequestIDLen to MaxRequestIDLen characters of [A-Za-z0-9+=/-] (a
// UUID, a base64 id, ours). The gateways replace any other with a new
// one (AppendRequestID).
func KeepRequestID[T text](v T, trusted bool) bool {
	if trusted {
		return len(v) > 0
	}
	if len(v) < MinRequestIDLen || len(v) > MaxRequestIDLen {
		return false
	}
	for i := range len(v) {
		if !requestIDByte[v[i]] {
			return false
		}
	}
	return true
}

// requestIDByte is the safe form's bytes: [A-Za-z0-9+=/-].
var requestIDByte = func() (set [256]bool) {
	for _, r := range "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+=/-" {
		set[r] = true
	}
	return set
}()
