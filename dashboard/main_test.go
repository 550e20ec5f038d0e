package dashboard

import (
	"testing"

	"github.com/eurekagate/eurekagate/internal/testkit"
)

// Every goroutine the dashboard or its tests start has ended when they
// return: the sampler, the long polls, the servers, the browser's.
func TestMain(m *testing.M) { testkit.VerifyTestMain(m) }
