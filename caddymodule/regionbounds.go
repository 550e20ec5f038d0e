package caddymodule

import (
	"fmt"

	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"

	"github.com/eurekagate/eurekagate/registry"
)

// checkRegionBounds refuses remote_region_max_bytes and
// remote_region_max_instances that are not above 0 (0 is the default in
// JSON), or set without remote_regions, where they would be ignored.
func (a *App) checkRegionBounds() error {
	for _, b := range []struct {
		name     string
		v, deflt int
	}{
		{"remote_region_max_bytes", a.RemoteRegionMaxBytes, registry.DefaultMaxRegionBytes},
		{"remote_region_max_instances", a.RemoteRegionMaxInstances, registry.DefaultMaxRegionInstances},
	} {
		switch {
		case b.v < 0:
			return fmt.Errorf("%s %d must be above 0; leave it out for the default, %d", b.name, b.v, b.deflt)
		case b.v > 0 && len(a.RemoteRegions) == 0:
			return fmt.Errorf("%s applies to remote regions and would be ignored without remote_regions; remove it, or add remote_regions", b.name)
		}
	}
	return nil
}

// maxInstancesArg reads remote_region_max_instances, a number above 0,
// into dst.
func maxInstancesArg(d *caddyfile.Dispenser, dst *int) error {
	if err := intArg(d, dst); err != nil {
		return err
	}
	if *dst <= 0 {
		return d.Errf("remote_region_max_instances %d must be above 0; leave it out for the default, %d", *dst, registry.DefaultMaxRegionInstances)
	}
	return nil
}
