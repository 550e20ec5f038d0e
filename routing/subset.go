package routing

import (
	"github.com/eurekagate/eurekagate/eureka"
)

// of returns the instances of routable (not empty) in s.
func (s *Subset) of(routable []*eureka.InstanceInfo) []*eureka.InstanceInfo {
	return s.lists.Of(s.Selector, routable)
}

// subsetSide is a subset's instances that a route takes after a failure,
// at the plain port or the secure one, as side is for a whole app.
type subsetSide struct {
	sub  *Subset
	side *side
}

func (s *subsetSide) Instances(app string) []*eureka.InstanceInfo {
	list := s.side.Instances(app)
	if len(list) == 0 {
		return nil
	}
	return s.sub.of(list)
}
