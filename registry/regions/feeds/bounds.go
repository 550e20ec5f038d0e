package feeds

import (
	"errors"
	"fmt"

	"github.com/eurekagate/eurekagate/discovery"
	"github.com/eurekagate/eurekagate/internal/eurekahttp"
)

// explain names the bound a region's failed read passed, for the
// region's state and the operator who may raise it.
func (f *Feeds) explain(err error) error {
	switch {
	case errors.Is(err, discovery.ErrTooManyInstances):
		return fmt.Errorf("%w; the region's registry is refused over MaxRegionInstances (%d): raise it if the region is that large", err, f.maxInstances)
	case errors.Is(err, eurekahttp.ErrBodyTooLarge):
		// err names the bound and its size already: the client was given
		// MaxRegionBytes as its setting's name.
		return fmt.Errorf("%w; the region's answer is refused, its last registry kept", err)
	}
	return err
}
