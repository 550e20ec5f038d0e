package httpapi

import (
	"testing"

	"github.com/eurekagate/eurekagate/internal/testkit"
)

// TestMain fails the package if a goroutine outlives its tests: the
// servers, watches and the start-up sync they wait on must all be stopped.
func TestMain(m *testing.M) { testkit.VerifyTestMain(m) }
