package registry

import (
	"testing"

	"github.com/eurekagate/eurekagate/internal/testkit"
)

// TestMain fails the package if a goroutine outlives its tests: the
// Store's loops, watches and builds must all be stopped by their owners.
func TestMain(m *testing.M) { testkit.VerifyTestMain(m) }
