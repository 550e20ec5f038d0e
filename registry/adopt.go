package registry

import "github.com/eurekagate/eurekagate/eureka"

// Adopt takes a peer's copy of an instance (the entity of a 409 answer to
// a replicated heartbeat, or an instance of the start-up sync): its
// override, if any, and the instance itself, registered as a replication
// so it is not sent back.
func (s *Store) Adopt(i *eureka.InstanceInfo) error {
	if i.OverriddenStatus != eureka.StatusUnknown {
		s.mu.Lock()
		s.setOverride(i.ID(), i.OverriddenStatus, s.nowMillis())
		s.mu.Unlock()
	}
	return s.Register(i, true)
}
