package replication

import (
	"testing"

	"github.com/eurekagate/eurekagate/internal/testkit"
)

// TestMain fails the package if a goroutine outlives its tests: each
// peer's sender, the start-up sync and the DNS look-ups must be stopped by
// their owner.
func TestMain(m *testing.M) { testkit.VerifyTestMain(m) }
