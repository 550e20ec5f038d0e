package discovery

import (
	"errors"
	"fmt"

	"github.com/eurekagate/eurekagate/eureka"
)

// ErrTooManyInstances is wrapped by the error of a fetch refused for
// Config.MaxInstances: the decoder's (eureka.DecodeApplicationsJSONMax),
// which refuses a full registry as it reads it.
var ErrTooManyInstances = eureka.ErrTooManyInstances

// decodeFull decodes a fetched registry, refusing one of more than
// MaxInstances as the decoder yields the instance past it: a registry
// over the bound costs the memory of MaxInstances instances at most, not
// of all it holds.
func (c *Client) decodeFull(body []byte) (*eureka.Applications, error) {
	doc, err := eureka.DecodeApplicationsJSONMax(body, c.cfg.MaxInstances)
	if errors.Is(err, eureka.ErrTooManyInstances) {
		return nil, c.overBound(c.cfg.MaxInstances+1, "the registry holds at least")
	}
	return doc, err
}

// checkDelta refuses a delta after which the local registry would hold
// more than MaxInstances: those it holds, and the added or modified ones
// it does not hold yet.
func (c *Client) checkDelta(delta *eureka.Applications) error {
	if c.cfg.MaxInstances <= 0 {
		return nil
	}
	n := 0
	for _, count := range c.cache.counts {
		n += count
	}
	for _, a := range delta.Applications {
		for _, i := range a.Instances {
			if (i.ActionType == eureka.ActionAdded || i.ActionType == eureka.ActionModified) &&
				!c.cache.holds(c.cache.place.region(i), appName(a, i), i.ID()) {
				n++
			}
		}
	}
	return c.overBound(n, "a delta would make the registry hold")
}

// overBound refuses a registry of n instances over MaxInstances; what
// says where n comes from.
func (c *Client) overBound(n int, what string) error {
	if bound := c.cfg.MaxInstances; bound > 0 && n > bound {
		return fmt.Errorf("discovery: %s %d instances, more than the %d allowed; the last registry is kept: %w",
			what, n, bound, ErrTooManyInstances)
	}
	return nil
}

// holds reports whether the cache holds instance id of app in region.
func (c *cache) holds(region, app, id string) bool {
	r := c.local
	if region != "" {
		r = c.remote[region]
	}
	_, ok := r[app][id]
	return ok
}
