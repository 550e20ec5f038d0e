package httpapi_test

import (
	"testing"

	"github.com/eurekagate/eurekagate/internal/apisuite"
)

// The REST API suite and the fargo interop test, against both front doors.
func TestAPISuite(t *testing.T) {
	for _, fd := range frontDoors {
		t.Run(fd.name, func(t *testing.T) { apisuite.Run(t, fd.start) })
	}
}

func TestFargoInterop(t *testing.T) {
	for _, fd := range frontDoors {
		t.Run(fd.name, func(t *testing.T) { apisuite.RunFargo(t, fd.start) })
	}
}
