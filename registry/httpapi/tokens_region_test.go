package httpapi

import (
	"time"

	"github.com/eurekagate/eurekagate/eureka"
	"github.com/eurekagate/eurekagate/registry"
	"github.com/eurekagate/eurekagate/registry/regions"
)

// updateRegion makes doc the registry of s's remote region name.
func updateRegion(s *registry.Store, name string, doc *eureka.Applications, at time.Time) error {
	return regions.MirrorOf(s).Update(name, doc, at)
}
