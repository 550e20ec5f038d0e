package routing

import (
	"errors"

	"github.com/eurekagate/eurekagate/balancer"
	"github.com/eurekagate/eurekagate/eureka"
)

// RegionKey is the selector key that names a region rather than
// metadata: a subset "region=eu-west" (with other keys or alone) is of
// the instances of that region, the local one or one of the remote
// regions the registry serves, whatever the request's own region would
// be. It takes one value.
const RegionKey = "region"

// newSubset returns app's subset of sel.
func newSubset(app string, sel balancer.Selector) (*Subset, error) {
	s := &Subset{Selector: sel, app: app, key: app + " " + sel.String()}
	rest, region := sel.Without(RegionKey)
	if len(region) > 1 {
		return nil, errors.New("region takes one region, not a list")
	}
	s.match = rest
	if len(region) == 1 {
		s.region = region[0]
	}
	return s, nil
}

// Region returns the region the subset's instances are of, "" for the
// region of the request's route.
func (s *Subset) Region() string { return s.region }

// of returns the instances of routable (not empty) in s.
func (s *Subset) of(routable []*eureka.InstanceInfo) []*eureka.InstanceInfo {
	return s.lists.Of(s.match, routable)
}

// subsetSide is a subset's instances that a route takes after a failure,
// at the plain port or the secure one, as side is for a whole app.
type subsetSide struct {
	sub  *Subset
	side *side
}

func (s *subsetSide) Instances(app string) []*eureka.InstanceInfo {
	var list []*eureka.InstanceInfo
	if s.sub.region != "" {
		list, _ = s.side.r.regionList(app, s.sub.region, s.side.secure)
	} else {
		list = s.side.Instances(app)
	}
	if len(list) == 0 {
		return nil
	}
	return s.sub.of(list)
}
