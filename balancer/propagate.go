package balancer

import (
	"context"
	"net/http"
)

type selectorKey struct{}

// WithSelector returns ctx carrying s: an HTTPClient request with this
// context goes to the subset s selects of the application it calls,
// when that application has an UP instance in it, and carries s on in
// RouteHeader.
func WithSelector(ctx context.Context, s Selector) context.Context {
	return context.WithValue(ctx, selectorKey{}, s)
}

// SelectorFrom returns the selector ctx carries, if any.
func SelectorFrom(ctx context.Context) (Selector, bool) {
	s, ok := ctx.Value(selectorKey{}).(Selector)
	return s, ok && !s.IsZero()
}

// Propagate serves the requests next gets with the subset their
// RouteHeader names (the one a gateway chose) in their context, so that
// the calls next makes through an HTTPClient with that context go to the
// same subset of the services they call. A header that does not parse is
// ignored. Serve only requests from gateways and services behind them
// through it: whoever sends RouteHeader picks the subset.
func Propagate(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if v := r.Header.Get(RouteHeader); v != "" {
			if s, err := ParseSelector(v); err == nil {
				r = r.WithContext(WithSelector(r.Context(), s))
			}
		}
		next.ServeHTTP(w, r)
	})
}
