package xds

import (
	"github.com/eurekagate/eurekagate/eureka"
	"github.com/eurekagate/eurekagate/notify"
	"github.com/eurekagate/eurekagate/registry"
)

// Source is the registry a Server serves: a *registry.Store in the same
// process, or a *discovery.Client reading any Eureka server, Java's
// included (the bridge: xDS in front of an existing Eureka cluster).
type Source interface {
	// Instances returns app's UP instances; AllInstances, all of them.
	Instances(app string) []*eureka.InstanceInfo
	AllInstances(app string) []*eureka.InstanceInfo
	// Applications returns the whole registry.
	Applications() *eureka.Applications
}

// storeSource is a Source that names the app of each change
// (registry.Store).
type storeSource interface {
	Subscribe(func(registry.Change)) (unsubscribe func())
}

// regionOf is the localities' region: the Store's, else cfg's.
func regionOf(src Source, cfg Config) string {
	if s, ok := src.(*registry.Store); ok {
		return s.Config().Region
	}
	return cfg.Region
}

// follow marks the apps src changes until stop; the returned function
// ends it. For a Source that only announces that its registry changed
// (a notify.Notifier: discovery.Client) it runs a goroutine the Server's
// wait group owns: the apps whose instance lists changed are found by
// comparing the lists, which the client shares between snapshots for the
// apps a fetch left alone. The Store is a Notifier too, but names each
// change's app: it is asked first.
func (s *Server) follow() (stop func()) {
	switch src := s.src.(type) {
	case storeSource:
		unsubscribe := src.Subscribe(func(c registry.Change) { s.mark(c.App) })
		// After subscribing, so that an app changed meanwhile is built again.
		for _, a := range s.src.Applications().Applications {
			s.mark(a.Name)
		}
		return unsubscribe
	case notify.Notifier:
		changed := src.Changed() // before diff reads
		last := map[string]eureka.ListID{}
		s.diff(last)
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			for {
				select {
				case <-s.ctx.Done():
					return
				case <-changed:
					changed = src.Changed() // before diff reads
					s.diff(last)
				}
			}
		}()
		return func() {}
	}
	return func() {}
}

// diff marks the apps whose instance lists differ from last, and records
// them.
func (s *Server) diff(last map[string]eureka.ListID) {
	seen := map[string]bool{}
	for _, a := range s.src.Applications().Applications {
		seen[a.Name] = true
		if id := eureka.ListIDOf(s.src.AllInstances(a.Name)); last[a.Name] != id {
			last[a.Name] = id
			s.mark(a.Name)
		}
	}
	for app := range last {
		if !seen[app] {
			delete(last, app)
			s.mark(app)
		}
	}
}
