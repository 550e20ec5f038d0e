package xds_test

import (
	"testing"

	"github.com/eurekagate/eurekagate/internal/testkit"
)

// The server's goroutines (its loop, gRPC's) end with Stop.
func TestMain(m *testing.M) { testkit.VerifyTestMain(m) }
