package httpapi

import "net/http"

// Credentialed reports whether r brings credentials the API accepts (a
// user's or the peers'), or the API needs none: what a page that shows
// more to known callers (the actuator's health details) asks.
func (a *API) Credentialed(r *http.Request) bool {
	if a.auth == nil {
		return true
	}
	switch a.auth.who(r.Header.Get("Authorization"), remoteAddr(r)) {
	case refused, busy:
		return false
	}
	return true
}
