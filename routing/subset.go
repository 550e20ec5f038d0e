package routing

import (
	"sync/atomic"

	"github.com/eurekagate/eurekagate/eureka"
)

// subsetLists keeps a subset's instances among an app's routable ones,
// while that list stays the same, so that a request to a subset filters
// nothing and the balancer sees one list per subset.
type subsetLists struct {
	last atomic.Pointer[subsetList]
}

type subsetList struct {
	data **eureka.InstanceInfo // the backing array of the routable list
	n    int
	list []*eureka.InstanceInfo
}

// of returns the instances of routable (not empty) in s.
func (s *Subset) of(routable []*eureka.InstanceInfo) []*eureka.InstanceInfo {
	if c := s.lists.last.Load(); c != nil && c.data == &routable[0] && c.n == len(routable) {
		return c.list
	}
	list := s.Selector.Filter(routable)
	s.lists.last.Store(&subsetList{data: &routable[0], n: len(routable), list: list})
	return list
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
