package dashboard

import (
	"slices"
	"strings"

	"github.com/eurekagate/eurekagate/routing"
	"github.com/eurekagate/eurekagate/traffic"
)

// SubsetBreaker is a subset's circuit breaker that is not closed, as
// api/traffic lists it (AppTraffic.OpenSubsets).
type SubsetBreaker struct {
	// Subset is the subset's label (its selector, as the rules write it).
	Subset string `json:"subset"`
	// Breaker is open or half_open; Rejected the requests it answered 503
	// since the gateway started.
	Breaker  string `json:"breaker"`
	Rejected uint64 `json:"rejected,omitempty"`
}

// openSubsets returns the breakers of m that are not closed, by label.
func openSubsets(m map[string]traffic.BreakerSnapshot) []SubsetBreaker {
	var open []SubsetBreaker
	for label, b := range m {
		if b.State != routing.BreakerClosed {
			open = append(open, SubsetBreaker{Subset: label, Breaker: b.State.String(), Rejected: b.Refused})
		}
	}
	slices.SortFunc(open, func(x, y SubsetBreaker) int { return strings.Compare(x.Subset, y.Subset) })
	return open
}
