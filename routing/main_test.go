package routing

import (
	"testing"

	"github.com/eurekagate/eurekagate/internal/testkit"
)

// TestMain fails the package if a goroutine outlives its tests: the
// rules file's check loop must be stopped by its owner.
func TestMain(m *testing.M) { testkit.VerifyTestMain(m) }
