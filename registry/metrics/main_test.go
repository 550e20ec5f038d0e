package metrics_test

import (
	"testing"

	"github.com/eurekagate/eurekagate/internal/testkit"
)

// TestMain fails the package if a goroutine outlives its tests: the
// servers its tests start must be stopped.
func TestMain(m *testing.M) { testkit.VerifyTestMain(m) }
