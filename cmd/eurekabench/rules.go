package main

import (
	"github.com/eurekagate/eurekagate/eureka"
	"github.com/eurekagate/eurekagate/registry"
)

// versionInstances are the backend as an instance of each version the
// rules select.
func versionInstances(backend string) []*eureka.InstanceInfo {
	var out []*eureka.InstanceInfo
	for _, v := range []string{"2.0", "2.1"} {
		i := benchInstance(backend)
		i.InstanceID = "backend-" + v
		i.Metadata = map[string]string{"version": v}
		out = append(out, i)
	}
	return out
}

// registerVersions registers versionInstances in store.
func registerVersions(store *registry.Store, backend string) error {
	for _, i := range versionInstances(backend) {
		if err := store.Register(i, false); err != nil {
			return err
		}
	}
	return nil
}
