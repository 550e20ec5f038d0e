package main

import (
	"github.com/eurekagate/eurekagate/registry"
)

// registerVersions registers the backend twice, as an instance of each
// version the rules select.
func registerVersions(store *registry.Store, backend string) error {
	for _, v := range []string{"2.0", "2.1"} {
		i := benchInstance(backend)
		i.InstanceID = "backend-" + v
		i.Metadata = map[string]string{"version": v}
		if err := store.Register(i, false); err != nil {
			return err
		}
	}
	return nil
}
