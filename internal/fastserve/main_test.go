package fastserve

import (
	"testing"

	"github.com/eurekagate/eurekagate/internal/testkit"
)

// TestMain fails the package if a goroutine outlives its tests: a
// served listener's goroutines must end when it is stopped.
func TestMain(m *testing.M) { testkit.VerifyTestMain(m) }
