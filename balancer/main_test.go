package balancer

import (
	"testing"

	"github.com/eurekagate/eurekagate/internal/testkit"
)

// TestMain fails the package if a goroutine outlives its tests: the
// health checker's loop must be stopped by its owner.
func TestMain(m *testing.M) { testkit.VerifyTestMain(m) }
