package balancer

// ZonePreferring takes the usable instances whose "zone" metadata equals
// Zone in turn, and the other usable instances in turn only when there is
// none, with one counter per application. An empty Zone prefers the
// instances without zone metadata. Candidates without instance data are in
// no zone.
type ZonePreferring struct {
	// Zone is the caller's zone.
	Zone string

	rr RoundRobin
}

// Choose returns the next usable candidate of the zone, or of any zone
// when the zone has none.
func (z *ZonePreferring) Choose(c Candidates) (int, bool) {
	inZone := func(i int) bool {
		inst := c.Instance(i)
		return inst != nil && inst.Metadata["zone"] == z.Zone
	}
	for i := range c.Len() {
		if inZone(i) && c.Usable(i) {
			return z.rr.Choose(c.Filter(inZone))
		}
	}
	return z.rr.Choose(c)
}
