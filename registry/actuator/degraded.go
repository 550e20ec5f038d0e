package actuator

// A Component is an entry of health's components that Config.Degraded
// adds.
type Component struct {
	Status  string
	Details map[string]any
}

// degraded returns Config.Degraded's components. They are shown and not
// aggregated: a dependency of the gateway beside the registry (the
// shared rate limits' Redis) that is DOWN degrades what the gateway
// does (its limits fail open or closed), not the registry, whose status
// and probes stay UP.
func (a *Actuator) degraded() map[string]component {
	if a.cfg.Degraded == nil {
		return nil
	}
	out := map[string]component{}
	for name, c := range a.cfg.Degraded() {
		out[name] = component{Status: c.Status, Details: c.Details}
	}
	return out
}
